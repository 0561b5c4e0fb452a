package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/rules"
	"github.com/spf13/cobra"
)

// rulesOptions are the options of feedgen rules.
type rulesOptions struct {
	*globalOptions
	target, config, root, listen, out string
	cache, modules                    string
	strict, standalone, checkFiles    bool
	json                              bool // --check's answer as JSON (jsonout.go)

	set func(flag string) bool // whether the flag was given

	t rules.Target // the target: set by check
}

// check refuses an unknown target and a missing -o.
func (o *rulesOptions) check() error {
	t, err := rules.Find(o.target)
	if err != nil {
		return usageError{err}
	}
	o.t = t
	if err := checkListen(o.listen); err != nil {
		return usageError{err}
	}
	if o.out == "" {
		return usageError{errors.New("rules needs -o OUTDIR: the folder to write " + strings.Join(t.Files, " and ") + " to")}
	}
	if o.cache != "" && t.Name != "nginx-njs" {
		return usageError{fmt.Errorf("--cache is for nginx-njs (a folder where nginx keeps the pages njs puts together), not %s", t.Name)}
	}
	if o.json && !o.checkFiles {
		return usageError{errors.New("--json is for --check: rules prints the paths of the files it writes, one a line")}
	}
	if o.checkFiles {
		return nil // --standalone and --modules may come from the record: see checkStandalone
	}
	return o.checkStandalone()
}

// checkStandalone refuses --standalone for a target without it, and
// --modules without --standalone: for --check, once the record has given
// the flags not given.
func (o *rulesOptions) checkStandalone() error {
	if o.standalone && !o.t.Standalone {
		return usageError{fmt.Errorf("--standalone is for %s, whose files are otherwise included in the server's config; %s's are complete as they are", strings.Join(standaloneTargets(), ", "), o.t.Name)}
	}
	if o.modules != "" && (!o.standalone || o.t.Name == "nginx") {
		return usageError{errors.New("--modules is for --standalone with nginx-njs or apache: the folder their modules are loaded from")}
	}
	return nil
}

// checkFailed is an error of rules --check that is not stale files: the
// check could not be made. It exits 2, as diff and cmp do, so that exit 1
// says stale and nothing else.
type checkFailed struct{ err error }

func (e checkFailed) Error() string { return e.err.Error() }
func (e checkFailed) Unwrap() error { return e.err }

// runRules writes the target's files for the build of the config, or
// with --check compares them with what it would write.
func runRules(ctx context.Context, o *rulesOptions) error {
	err := writeRules(ctx, o)
	var stale staleFiles
	var ue usageError
	if o.checkFiles && err != nil && !errors.As(err, &stale) && !errors.As(err, &ue) {
		return checkFailed{err}
	}
	return err
}

// staleFiles is rules --check's answer when files are stale: exit 1.
type staleFiles struct{ msg string }

func (e staleFiles) Error() string { return e.msg }

// writeRules is runRules.
func writeRules(ctx context.Context, o *rulesOptions) error {
	// A site's folder given as --root says where its build is before
	// the config is looked for: run outside a site, there is none here.
	if o.root != "" {
		if err := outdir.NotSite(o.root, "--root"); err != nil {
			return err
		}
	}
	cfg, err := loadSite(o.config, o.config != "")
	if err != nil {
		return err
	}
	records := filepath.Join(filepath.Dir(cfg.Path), rules.RecordsName)
	out, err := filepath.Abs(o.out)
	if err != nil {
		return fmt.Errorf("finding -o: %w", err)
	}
	var old map[string]int
	recorded := false
	if o.checkFiles {
		// The flags the files were written with, but those given.
		rs, err := rules.ReadRecords(records)
		if err != nil {
			return err
		}
		if r, ok := rules.FindRecord(rs, out, o.t.Name); ok {
			o.fromRecord(r)
			old, recorded = r.Counts, true
		} else {
			fmt.Fprintf(o.stderr, "no record of how %s was written; compared with the defaults and the flags given\n", o.out)
		}
		if err := o.checkStandalone(); err != nil {
			return err
		}
	}
	root := o.root
	if root == "" {
		root = cfg.OutputDir
	}
	snap, err := manifest.ReadContext(ctx, outfile.DirFS(root))
	if err != nil {
		return fmt.Errorf("%s: %w", root, err)
	}
	m := snap.Manifest
	if ps := m.Validate(); len(ps) > 0 {
		return fmt.Errorf("%s: %w", root, ps)
	}
	if p := m.Pagination; !slices.Equal(p.Limits, cfg.Pagination.Limits) || p.DefaultLimit != cfg.Pagination.DefaultLimit ||
		p.MaxLimit != cfg.Pagination.MaxLimit || p.Offsets != cfg.Pagination.Offsets || p.Layout != cfg.Pagination.Layout || !slices.Equal(m.Filters, cfg.Filters) {
		return fmt.Errorf("the build in %s is not of %s (its pagination, layout or filters differ): run feedgen build, then feedgen rules", root, cfg.Path)
	}
	rec := rules.Record{Target: o.t.Name, Out: out, Listen: o.listen, Standalone: o.standalone}
	if rec.Root, err = filepath.Abs(root); err != nil {
		return fmt.Errorf("finding the build folder: %w", err)
	}
	if o.modules != "" {
		if rec.Modules, err = filepath.Abs(o.modules); err != nil {
			return fmt.Errorf("finding --modules: %w", err)
		}
	}
	if o.cache != "" {
		if rec.Cache, err = filepath.Abs(o.cache); err != nil {
			return fmt.Errorf("finding --cache: %w", err)
		}
	}
	s, err := rec.Site(m)
	if err != nil {
		return err
	}
	if o.checkFiles {
		return o.report(s, old, rec, cfg.OutputDir, recorded)
	}
	written, warnings, err := rules.Write(o.t, s, o.out, o.strict)
	if errors.Is(err, rules.ErrChunks) {
		if o.t.Name == "nginx" {
			// The command suggested is checked first: one that would fail
			// is named with why.
			how := "run " + o.typedCommand("nginx-njs")
			if njs, ferr := rules.Find("nginx-njs"); ferr == nil {
				if terr := rules.Try(njs, s, o.out); terr != nil {
					how = fmt.Sprintf("%s would, but not with these flags: %v", o.typedCommand("nginx-njs"), terr)
				}
			}
			return fmt.Errorf("%w\nto keep layout: chunks, nginx puts its pages together with its JavaScript module (Debian: libnginx-mod-http-js): %s\n%s",
				err, how, o.pagesAdvice(cfg.Path, cfg.Pagination))
		}
		return fmt.Errorf("%w\n%s", err, o.pagesAdvice(cfg.Path, cfg.Pagination))
	}
	if err != nil {
		return err
	}
	if s.Cache != "" {
		// nginx makes its cache's folders, not the one of its socket.
		if err := os.MkdirAll(s.Cache, 0o755); err != nil {
			return fmt.Errorf("creating --cache: %w", err)
		}
	}
	for _, p := range written {
		fmt.Fprintln(o.stdout, p)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.stderr, "warning: %s: %s (--strict makes this an error)\n", o.t.Name, w)
	}
	if o.standalone {
		for _, m := range rules.StandaloneModules(o.t, s) {
			if _, err := os.Stat(m); err != nil {
				fmt.Fprintf(o.stderr, "warning: %s: no module %s here: install it, or name its folder with --modules\n", o.t.Name, m)
			}
		}
		c := o.t.CommandsFor(o.out, true)
		fmt.Fprintf(o.stderr, "a complete %s config: start it with %s, stop it with %s\n", o.t.Name, c.Start, c.Stop)
	}
	if o.t.Counts && !layout.Of(m.Pagination).Assembled {
		rec.Counts = rules.Counts(m.Collections)
	}
	dropped, err := rules.SaveRecord(records, rec)
	if dropped != nil {
		fmt.Fprintf(o.stderr, "warning: %v: written again\n", dropped)
	}
	if err != nil {
		// The files are written; only build's check of them is lost.
		fmt.Fprintf(o.stderr, "warning: recording the rules in %s: %v (feedgen build cannot tell when they are stale)\n", records, err)
	}
	switch {
	case layout.Of(m.Pagination).Assembled:
		fmt.Fprintf(o.stderr, "these %s files read each collection's index per request: a build does not make them stale (write them again when config.yaml's base_url, pagination or filters change)\n", o.t.Name)
	case o.t.Counts:
		fmt.Fprintf(o.stderr, "these %s files hold the build's counts: feedgen build says when a build makes them stale, %s checks them\n", o.t.Name, checkCommand(o.t.Name, o.config, o.out))
	}
	return nil
}

// checkCommand is the feedgen rules --check command for target's files
// in out.
func checkCommand(target, config, out string) string {
	args := []string{"feedgen", "rules", target}
	if config != "" {
		args = append(args, "--config", shellQuote(config))
	}
	return strings.Join(append(args, "--check", "-o", shellQuote(out)), " ")
}

// fromRecord takes the flags not given from r, the record of how the
// files were written.
func (o *rulesOptions) fromRecord(r rules.Record) {
	if !o.set("root") {
		o.root = r.Root
	}
	if !o.set("listen") {
		o.listen = r.Listen
	}
	if !o.set("standalone") {
		o.standalone = r.Standalone
	}
	if !o.set("cache") {
		o.cache = r.Cache
	}
	if !o.set("modules") {
		o.modules = r.Modules
	}
}

// report prints whether the files in -o are what rules would write for
// s: a line per stale file, then an error with the command that writes
// them again (when recorded: with no record, the flags they need are
// not known). outputDir is the config's output_dir.
func (o *rulesOptions) report(s *rules.Site, old map[string]int, r rules.Record, outputDir string, recorded bool) error {
	stale, err := rules.Check(o.t, s, o.out, old)
	if err != nil {
		return err
	}
	cwd, _ := os.Getwd()
	cmd := refreshCommand(shown(r, outputDir, cwd), o.config)
	if o.json {
		if err := writeJSON(o.stdout, newRulesCheckJSON(o.t.Name, o.out, stale, recorded, cmd)); err != nil || len(stale) == 0 {
			return err
		}
	}
	if len(stale) == 0 {
		fmt.Fprintf(o.stdout, "the %s rules in %s are up to date\n", o.t.Name, o.out)
		return nil
	}
	if !o.json {
		for _, f := range stale {
			fmt.Fprintf(o.stdout, "%s: stale: %s\n", f.File, f.Why)
		}
	}
	if !recorded {
		return staleFiles{fmt.Sprintf("the %s rules in %s are not those %s writes (with no record, the flags they were written with are not known)", o.t.Name, o.out, cmd)}
	}
	return staleFiles{fmt.Sprintf("the %s rules in %s are stale: run %s%s", o.t.Name, o.out, cmd, reloadHint(shown(r, outputDir, cwd)))}
}

// reloadHint says how the platform of r, files written again, takes them
// (rules.Commands): ", then reload nginx: nginx -s reload"; "" when there
// is nothing to say. r's paths are as the reader's commands name them
// (shown).
func reloadHint(r rules.Record) string {
	t, err := rules.Find(r.Target)
	if err != nil {
		return ""
	}
	if next := t.CommandsFor(r.Out, r.Standalone).Next(); next != "" {
		return ", then " + next
	}
	return ""
}

// shown is r with its paths as a command run in dir shows them: relative
// to dir when inside it, and no --root when it is outputDir, the
// config's output_dir.
func shown(r rules.Record, outputDir, dir string) rules.Record {
	show := r
	show.Out, show.Root = relTo(dir, r.Out), ""
	if abs, err := filepath.Abs(outputDir); err != nil || r.Root != abs {
		show.Root = relTo(dir, r.Root)
	}
	show.Cache, show.Modules = relTo(dir, r.Cache), relTo(dir, r.Modules)
	return show
}

// refreshCommand is the feedgen rules command that writes the files of r
// again: its flags, but those that are the defaults (--root is left out
// when it is empty, --config when config is).
func refreshCommand(r rules.Record, config string) string {
	args := []string{"feedgen", "rules", r.Target}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, shellQuote(v))
		}
	}
	add("--config", config)
	add("--root", r.Root)
	if r.Standalone {
		args = append(args, "--standalone")
	}
	if r.Listen != "80" {
		add("--listen", r.Listen)
	}
	add("--cache", r.Cache)
	add("--modules", r.Modules)
	add("-o", r.Out)
	return strings.Join(args, " ")
}

// shellQuote quotes s for a POSIX shell when it needs it, as the
// commands of rules.Commands are.
func shellQuote(s string) string { return rules.ShellQuote(s) }

// staleWarnings are the warnings of a build for the checks of the rules
// recorded for its output (rules.CheckRecords), with the paths as a
// command run in dir shows them and the command that writes stale files
// again; outputDir is the config's output_dir, config its --config, if
// given.
func staleWarnings(checks []rules.RecordCheck, outputDir, config, dir string) []string {
	var warnings []string
	for _, c := range checks {
		r := c.Record
		switch {
		case c.Gone:
			warnings = append(warnings, fmt.Sprintf("forgot the %s rules of %s: the folder is gone", r.Target, relTo(dir, r.Out)))
		case c.Err != nil:
			warnings = append(warnings, fmt.Sprintf("the %s rules in %s cannot serve this build: %v", r.Target, relTo(dir, r.Out), c.Err))
		case len(c.Stale) > 0:
			show := shown(r, outputDir, dir)
			warnings = append(warnings, fmt.Sprintf("the %s rules in %s are stale (%s): run %s%s",
				r.Target, show.Out, c.Stale[0].Why, refreshCommand(show, config), reloadHint(show)))
		}
	}
	return warnings
}

// pagesAdvice says what to set in the config at path, of pagination p
// (layout: chunks), for a build a file server takes: the keys, whatever
// style the file writes pagination in, and the commands to run after.
// It is the one place that says it: the config of a new site and
// docs/configuration.md send the reader to feedgen rules.
func (o *rulesOptions) pagesAdvice(path string, p listing.Pagination) string {
	var build strings.Builder
	build.WriteString("feedgen build")
	if o.config != "" {
		fmt.Fprintf(&build, " --config %s", shellQuote(o.config))
	}
	if o.root != "" {
		fmt.Fprintf(&build, " --out %s", shellQuote(o.root))
	}
	limits := make([]string, 0, 5)
	for _, l := range pagesLimits(p) {
		limits = append(limits, strconv.Itoa(l))
	}
	return fmt.Sprintf("for pagination.layout: pages, in %s also set pagination.limits: %s (the page sizes a request may ask for: default_limit %d among them, none above max_limit %d) and pagination.offsets: aligned (a page per multiple of each limit; all, a page per offset, is far larger); then run %s and %s again",
		path, "["+strings.Join(limits, ", ")+"]", p.DefaultLimit, p.MaxLimit, build.String(), o.typedCommand(o.t.Name))
}

// typedCommand is the feedgen rules command of target with the flags of
// the command line, as typed: the user's own --standalone, --listen,
// --root, -o... (--cache only for nginx-njs, which alone takes it).
func (o *rulesOptions) typedCommand(target string) string {
	r := rules.Record{Target: target, Root: o.root, Listen: o.listen, Standalone: o.standalone, Modules: o.modules, Out: o.out}
	if target == "nginx-njs" {
		r.Cache = o.cache
	}
	return refreshCommand(r, o.config)
}

// pagesLimits are the limits of layout: pages for the pagination p of
// a chunks build: its default_limit and max_limit, its limits and the
// usual 20, 50 and 100, none above max_limit.
func pagesLimits(p listing.Pagination) []int {
	limits := append([]int{p.DefaultLimit, p.MaxLimit, 20, 50, 100}, p.Limits...)
	limits = slices.DeleteFunc(limits, func(l int) bool { return l <= 0 || l > p.MaxLimit })
	slices.Sort(limits)
	return slices.Compact(limits)
}

func newRulesCmd(g *globalOptions) *cobra.Command {
	o := &rulesOptions{globalOptions: g}
	var about strings.Builder
	for _, t := range rules.Targets() {
		fmt.Fprintf(&about, "\n  %-11s %s\n  %-11s %s\n", t.Name, strings.Join(t.Files, ", "), "", t.Run)
	}
	cmd := &cobra.Command{
		Use:   "rules TARGET -o OUTDIR",
		Short: "Write the configuration that makes a server or CDN answer like feedgen serve",
		Long: `Rules writes the configuration a platform needs to serve the build as feedgen
serve does: the mapping of /articles/?limit=&offset= (and the filters) onto the
page files, the JSON 404, 405 and OPTIONS answers, the 301 for /articles and
the headers. It reads the pagination and filters of the build in --root (by
default the config's output_dir), which must be a build of --config.

A build of pagination.layout: chunks has no page files: its pages are put
together per request, by nginx-njs, cloudflare and netlify (and feedgen
serve), whose files then hold no counts: a build does not make them stale.
nginx, caddy, apache and cloudfront only map a request onto a file, and
refuse it. With --cache DIR, nginx-njs keeps each page it puts together for
a second in DIR (which nginx must be able to write): hot pages are then
served as files are, and a new build within a second or so.

The files of a pages build hold its counts and filter values: a build
that changes them makes them stale. rules records each folder it writes
(in .feedgen-rules.json beside the config), and feedgen build warns of the
folders written for its output that it made stale, with the command that
writes them again. --check writes nothing, and exits 1 naming each stale
file of OUTDIR and what differs, 2 when it cannot check.

With --standalone, nginx, nginx-njs and apache write a complete config of
their server instead of one to include: it needs no system config, keeps
the server's pid, logs and temporary files in OUTDIR, and runs as any user
on a port above 1024 (nginx -p OUTDIR -c nginx.conf; apache2 -d OUTDIR -f
apache.conf -k start).

Targets, the files each writes and how they run:
` + about.String(),
		Example: `  feedgen rules nginx-njs -o deploy/                  # then: include /path/to/deploy/nginx.conf; in http {}
  feedgen rules nginx-njs --standalone --listen 8080 -o nginx-njs   # then: nginx -p nginx-njs -c nginx.conf
  feedgen rules nginx-njs --check -o nginx-njs          # exit 1 when a build made them stale
  feedgen rules netlify -o site/
  feedgen rules cloudflare --root /srv/feed/public -o worker/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one target, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		ValidArgsFunction: completeTarget,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.target = args[0]
			o.set = cmd.Flags().Changed
			return checkRun(cmd.Context(), o, runRules)
		},
	}
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().StringVar(&o.root, "root", "", "the build's folder, as the platform sees it (default: output_dir of the config)")
	cmd.Flags().StringVar(&o.listen, "listen", "80", "where a server target listens: PORT or HOST:PORT")
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "the folder to write the files to (required)")
	cmd.Flags().StringVar(&o.cache, "cache", "", "nginx-njs with a chunks build: a `folder` where nginx keeps each page njs puts together for a second")
	cmd.Flags().BoolVar(&o.standalone, "standalone", false, "nginx, nginx-njs, apache: write a complete config of the server, which keeps its pid, logs and temporary files in OUTDIR (no system config needed)")
	cmd.Flags().StringVar(&o.modules, "modules", "", "with --standalone, nginx-njs or apache: the `folder` of the server's modules (default: Debian's)")
	cmd.Flags().BoolVar(&o.checkFiles, "check", false, "write nothing: compare the files in OUTDIR with those the build needs now (exit 1 when stale, 2 when it cannot check), with the flags they were written with")
	cmd.Flags().BoolVar(&o.json, "json", false, "with --check: print the answer as one JSON object (target, output, up_to_date, recorded, stale files and why, command)")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail, writing nothing, when the files cannot answer all the build has (cloudfront: filters that do not fit)")
	return cmd
}

// standaloneTargets are the targets that can write a complete config.
func standaloneTargets() []string {
	var names []string
	for _, t := range rules.Targets() {
		if t.Standalone {
			names = append(names, t.Name)
		}
	}
	return names
}

// checkListen refuses a --listen that is neither a port nor host:port
// with a port number.
func checkListen(listen string) error {
	port := listen
	if i := strings.LastIndexByte(listen, ':'); i >= 0 {
		port = listen[i+1:]
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("--listen %q: want a port (80) or host:port (127.0.0.1:8080)", listen)
	}
	return nil
}
