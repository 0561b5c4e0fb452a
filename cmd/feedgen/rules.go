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

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/rules"
	"github.com/spf13/cobra"
)

// rulesOptions are the options of feedgen rules.
type rulesOptions struct {
	*globalOptions
	target, config, root, listen, out string
	cache                             string
	strict                            bool

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
	return nil
}

// runRules writes the target's files for the build of the config.
func runRules(_ context.Context, o *rulesOptions) error {
	// A site's folder given as --root says where its build is before
	// the config is looked for: run outside a site, there is none here.
	if o.root != "" {
		if err := notBuild(o.root, "--root"); err != nil {
			return err
		}
	}
	cfg, err := loadSite(o.config, o.config != "")
	if err != nil {
		return err
	}
	root := o.root
	if root == "" {
		root = cfg.OutputDir
	}
	snap, err := manifest.Read(os.DirFS(root))
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
	s, err := rules.NewSite(m, root, o.listen)
	if err != nil {
		return err
	}
	if o.cache != "" {
		if s.Cache, err = filepath.Abs(o.cache); err != nil {
			return fmt.Errorf("finding --cache: %w", err)
		}
	}
	written, warnings, err := rules.Write(o.t, s, o.out, o.strict)
	if errors.Is(err, rules.ErrChunks) {
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
	switch {
	case m.Pagination.Chunked():
		fmt.Fprintf(o.stderr, "these %s files read each collection's index per request: a build does not make them stale (write them again when config.yaml's base_url, pagination or filters change)\n", o.t.Name)
	case o.t.Counts:
		fmt.Fprintf(o.stderr, "these %s files hold the build's counts: write them again after each build\n", o.t.Name)
	}
	return nil
}

// pagesAdvice says what to set in the config at path, of pagination p
// (layout: chunks), for a build a file server takes: the keys, whatever
// style the file writes pagination in, and the commands to run after.
// It is the one place that says it: the config of a new site and
// docs/configuration.md send the reader to feedgen rules.
func (o *rulesOptions) pagesAdvice(path string, p listing.Pagination) string {
	var build, rules strings.Builder
	build.WriteString("feedgen build")
	fmt.Fprintf(&rules, "feedgen rules %s", o.t.Name)
	if o.config != "" {
		fmt.Fprintf(&build, " --config %s", o.config)
		fmt.Fprintf(&rules, " --config %s", o.config)
	}
	if o.root != "" {
		fmt.Fprintf(&build, " --out %s", o.root)
		fmt.Fprintf(&rules, " --root %s", o.root)
	}
	fmt.Fprintf(&rules, " -o %s", o.out)
	limits := make([]string, 0, 5)
	for _, l := range pagesLimits(p) {
		limits = append(limits, strconv.Itoa(l))
	}
	return fmt.Sprintf("for pagination.layout: pages, in %s also set pagination.limits: %s (the page sizes a request may ask for: default_limit %d among them, none above max_limit %d) and pagination.offsets: aligned (a page per multiple of each limit; all, a page per offset, is far larger); then run %s and %s again",
		path, "["+strings.Join(limits, ", ")+"]", p.DefaultLimit, p.MaxLimit, build.String(), rules.String())
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

Targets, the files each writes and how they run:
` + about.String(),
		Example: `  feedgen rules nginx-njs -o deploy/                  # then: include /path/to/deploy/nginx.conf; in http {}
  feedgen rules netlify -o site/
  feedgen rules cloudflare --root /srv/feed/public -o worker/`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one target, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.target = args[0]
			return checkRun(cmd.Context(), o, runRules)
		},
	}
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().StringVar(&o.root, "root", "", "the build's folder, as the platform sees it (default: output_dir of the config)")
	cmd.Flags().StringVar(&o.listen, "listen", "80", "where a server target listens: PORT or HOST:PORT")
	cmd.Flags().StringVarP(&o.out, "output", "o", "", "the folder to write the files to (required)")
	cmd.Flags().StringVar(&o.cache, "cache", "", "nginx-njs with a chunks build: a `folder` where nginx keeps each page njs puts together for a second")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "fail, writing nothing, when the files cannot answer all the build has (cloudfront: filters that do not fit)")
	return cmd
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
