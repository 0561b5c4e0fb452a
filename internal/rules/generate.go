package rules

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// Request is what feedgen rules is asked for: a target's files for the
// build of a site, written into a folder, or (Check) compared with those
// in it. Its fields are the command's flags; the messages name the
// commands to run with them.
type Request struct {
	Target string
	// LoadConfig reads the site's config, given the build's folder if
	// given (Dir): Generate calls it once the flags are checked.
	// ConfigFlag is its --config as given, "" when it was found: the
	// commands messages give name it then.
	LoadConfig func(dir string) (*config.Config, error)
	ConfigFlag string
	// Dir is the build's folder, as the platform sees it (--dir); "" for
	// the config's output_dir.
	Dir string
	// Addr is where a server target listens (--addr): a port or
	// host:port; "" for 80.
	Addr           string
	Out            string // the folder to write to (-o)
	Cache, Modules string // --cache, --modules
	Standalone     bool
	Strict         bool
	// Check writes nothing: it compares the files in Out with those the
	// build needs, with the flags they were written with (their record)
	// but those Given.
	Check bool
	Given Given
	// WorkDir is the folder the commands that messages give are run in:
	// their paths are relative to it.
	WorkDir string

	config *config.Config // read by LoadConfig
	notes  *[]string      // Report.Notes
}

// note adds a line to the report's notes.
func (r *Request) note(format string, args ...any) {
	*r.notes = append(*r.notes, fmt.Sprintf(format, args...))
}

// Given says which flags of a Request were given on the command line:
// with Check, the others are those the files were written with.
type Given struct{ Dir, Addr, Standalone, Cache, Modules bool }

// Report is what Generate did: the files written, or with Check what
// differs.
type Report struct {
	Written []string // the files written, by path
	// Notes are the warnings ("warning: ...") and what to know of the
	// files, a line each, for stderr.
	Notes []string
	// Check is the answer of Request.Check; nil without it.
	Check *CheckReport
}

// CheckReport is the answer of a Request with Check, as feedgen rules
// --check --json prints it: up to date, or the stale files, what differs
// in each, and the command that writes them again (when the record says
// with which flags).
type CheckReport struct {
	Target   string  `json:"target"`
	Output   string  `json:"output"`
	UpToDate bool    `json:"up_to_date"`
	Recorded bool    `json:"recorded"`
	Stale    []Stale `json:"stale"`
	Command  string  `json:"command,omitempty"`
}

// FlagError is a Request whose flags do not go together, or do not go
// with its target: a usage error.
type FlagError struct{ Err error }

func (e FlagError) Error() string { return e.Err.Error() }
func (e FlagError) Unwrap() error { return e.Err }

// StaleError is the error of a Request with Check whose files are stale
// (feedgen rules --check exits 1 for it, 2 for any other error).
type StaleError struct{ Msg string }

func (e *StaleError) Error() string { return e.Msg }

// Generate writes the files of the request's target for the build of
// its config into r.Out, records how (RecordsName, beside the config)
// and makes the cache folder; or with r.Check compares the files in
// r.Out with those it would write. It refuses a build that is not one of
// the config (its pagination, layout or filters differ), and a build of
// a layout the target does not serve, saying what would.
func Generate(ctx context.Context, r Request) (rep Report, err error) {
	t, err := r.check()
	if err != nil {
		return Report{}, err
	}
	if r.config, err = r.LoadConfig(r.Dir); err != nil {
		return Report{}, err
	}
	r.notes = &rep.Notes
	records := filepath.Join(filepath.Dir(r.config.Path), RecordsName)
	out, err := filepath.Abs(r.Out)
	if err != nil {
		return Report{}, fmt.Errorf("finding -o: %w", err)
	}
	var old map[string]int
	recorded := false
	if r.Check {
		// The flags the files were written with, but those given.
		rs, err := ReadRecords(records)
		if err != nil {
			return Report{}, err
		}
		if rec, ok := FindRecord(rs, out, t.Name); ok {
			r.fromRecord(rec)
			old, recorded = rec.Counts, true
		} else {
			r.note("no record of how %s was written; compared with the defaults and the flags given", r.Out)
		}
		if err := r.checkStandalone(t); err != nil {
			return rep, err
		}
	}
	m, rec, err := r.read(ctx, t, out)
	if err != nil {
		return rep, err
	}
	s, err := rec.Site(m)
	if err != nil {
		return rep, err
	}
	if r.Check {
		rep.Check, err = r.compare(t, s, old, rec, recorded)
		return rep, err
	}
	rep.Written, err = r.write(t, s, m, rec, records)
	return rep, err
}

// check refuses an unknown target, a missing -o, and flags the target
// does not take; it returns the target.
func (r *Request) check() (Target, error) {
	t, err := Find(r.Target)
	if err != nil {
		return t, FlagError{err}
	}
	if r.Addr == "" {
		r.Addr = "80"
	}
	if err := CheckAddr(r.Addr); err != nil {
		return t, FlagError{err}
	}
	if r.Out == "" {
		return t, FlagError{errors.New("rules needs -o OUTDIR: the folder to write " + strings.Join(t.Files, " and ") + " to")}
	}
	if r.Cache != "" && t.Cache == "" {
		var for_ []string
		for _, c := range Targets() {
			if c.Cache != "" {
				for_ = append(for_, c.Name+" ("+c.Cache+")")
			}
		}
		return t, FlagError{fmt.Errorf("--cache is for %s, not %s", orList(for_), t.Name)}
	}
	if r.Check {
		return t, nil // --standalone and --modules may come from the record: see checkStandalone
	}
	return t, r.checkStandalone(t)
}

// checkStandalone refuses --standalone for a target without it, and
// --modules without --standalone: for Check, once the record has given
// the flags not given.
func (r *Request) checkStandalone(t Target) error {
	var standalone, modules []string
	for _, t := range Targets() {
		if t.Standalone {
			standalone = append(standalone, t.Name)
		}
		if t.ModulesDir != "" {
			modules = append(modules, t.Name)
		}
	}
	if r.Standalone && !t.Standalone {
		return FlagError{fmt.Errorf("--standalone is for %s, whose files are otherwise included in the server's config; %s's are complete as they are", strings.Join(standalone, ", "), t.Name)}
	}
	if r.Modules != "" && (!r.Standalone || t.ModulesDir == "") {
		return FlagError{fmt.Errorf("--modules is for --standalone with %s: the folder their modules are loaded from", orList(modules))}
	}
	return nil
}

// fromRecord takes the flags not given from rec, the record of how the
// files were written.
func (r *Request) fromRecord(rec Record) {
	if !r.Given.Dir {
		r.Dir = rec.Root
	}
	if !r.Given.Addr {
		r.Addr = rec.Listen
	}
	if !r.Given.Standalone {
		r.Standalone = rec.Standalone
	}
	if !r.Given.Cache {
		r.Cache = rec.Cache
	}
	if !r.Given.Modules {
		r.Modules = rec.Modules
	}
}

// read reads and validates the manifest of the build, which must be one
// of the config, and returns it with the record of the files to write
// for it into out (absolute).
func (r *Request) read(ctx context.Context, t Target, out string) (*manifest.Manifest, Record, error) {
	cfg := r.config
	root := r.Dir
	if root == "" {
		root = cfg.OutputDir
	}
	snap, err := manifest.ReadContext(ctx, outfile.DirFS(root))
	if err != nil {
		return nil, Record{}, fmt.Errorf("%s: %w", root, err)
	}
	m := snap.Manifest
	if ps := m.Validate(); len(ps) > 0 {
		return nil, Record{}, fmt.Errorf("%s: %w", root, ps)
	}
	if p := m.Pagination; !slices.Equal(p.Limits, cfg.Pagination.Limits) || p.DefaultLimit != cfg.Pagination.DefaultLimit ||
		p.MaxLimit != cfg.Pagination.MaxLimit || p.Offsets != cfg.Pagination.Offsets || p.Layout != cfg.Pagination.Layout || !slices.Equal(m.Filters, cfg.Filters) {
		return nil, Record{}, fmt.Errorf("the build in %s is not of %s (its pagination, layout or filters differ): run feedgen build, then feedgen rules", root, cfg.Path)
	}
	rec := Record{Target: t.Name, Out: out, Listen: r.Addr, Standalone: r.Standalone}
	if rec.Root, err = filepath.Abs(root); err != nil {
		return nil, Record{}, fmt.Errorf("finding the build folder: %w", err)
	}
	if r.Modules != "" {
		if rec.Modules, err = filepath.Abs(r.Modules); err != nil {
			return nil, Record{}, fmt.Errorf("finding --modules: %w", err)
		}
	}
	if r.Cache != "" {
		if rec.Cache, err = filepath.Abs(r.Cache); err != nil {
			return nil, Record{}, fmt.Errorf("finding --cache: %w", err)
		}
	}
	return m, rec, nil
}

// write writes the files of t for s, makes the cache folder, records
// them in the file records and logs what to know of them.
func (r *Request) write(t Target, s *Site, m *manifest.Manifest, rec Record, records string) ([]string, error) {
	written, warnings, err := Write(t, s, r.Out, r.Strict)
	if errors.Is(err, ErrChunks) {
		return nil, r.layoutAdvice(t, s, err)
	}
	if err != nil {
		return nil, err
	}
	if s.Cache != "" {
		// nginx makes its cache's folders, not the one of its socket.
		if err := os.MkdirAll(s.Cache, 0o755); err != nil {
			return nil, fmt.Errorf("creating --cache: %w", err)
		}
	}
	for _, w := range warnings {
		r.note("warning: %s: %s (--strict makes this an error)", t.Name, w)
	}
	if r.Standalone {
		for _, m := range StandaloneModules(t, s) {
			if _, err := os.Stat(m); err != nil {
				r.note("warning: %s: no module %s here: install it, or name its folder with --modules", t.Name, m)
			}
		}
		c := t.CommandsFor(r.Out, true)
		r.note("a complete %s config: start it with %s, stop it with %s", t.Name, c.Start, c.Stop)
	}
	l := s.layout()
	holds := t.HoldsCounts(l)
	if holds {
		rec.Counts = Counts(m.Collections)
	}
	dropped, err := SaveRecord(records, rec)
	if dropped != nil {
		r.note("warning: %v: written again", dropped)
	}
	if err != nil {
		// The files are written; only build's check of them is lost.
		r.note("warning: recording the rules in %s: %v (feedgen build cannot tell when they are stale)", records, err)
	}
	switch {
	case l.Has(layout.Index):
		r.note("these %s files read each collection's index per request: a build does not make them stale (write them again when config.yaml's base_url, pagination, filters or feeds change)", t.Name)
	case holds:
		r.note("these %s files hold the build's counts: feedgen build says when a build makes them stale, %s checks them", t.Name, r.checkCommand(t.Name))
	}
	return written, nil
}

// compare is Generate with Check: whether the files in r.Out are what it
// would write for s; a StaleError with the command that writes them
// again (when recorded: with no record, the flags they need are not
// known) when they are not. old are the counts they were written for.
func (r *Request) compare(t Target, s *Site, old map[string]int, rec Record, recorded bool) (*CheckReport, error) {
	stale, err := Check(t, s, r.Out, old)
	if err != nil {
		return nil, err
	}
	show := shown(rec, r.config.OutputDir, r.WorkDir)
	c := &CheckReport{Target: t.Name, Output: r.Out, UpToDate: len(stale) == 0, Recorded: recorded, Stale: append([]Stale{}, stale...)}
	if len(stale) == 0 {
		return c, nil
	}
	cmd := refreshCommand(show, r.ConfigFlag)
	if !recorded {
		return c, &StaleError{fmt.Sprintf("the %s rules in %s are not those %s writes (with no record, the flags they were written with are not known)", t.Name, r.Out, cmd)}
	}
	c.Command = cmd
	return c, &StaleError{fmt.Sprintf("the %s rules in %s are stale: run %s%s", t.Name, r.Out, cmd, reloadHint(show))}
}

// layoutAdvice is err, the refusal of a build of a layout t does not
// serve, with what to run instead: the target of the same server that
// serves it (Target.Instead), when t has one, its command checked first
// (one that would fail is named with why); then the config for the
// pages layout.
func (r *Request) layoutAdvice(t Target, s *Site, err error) error {
	pages := r.pagesAdvice(t, r.config.Path, s)
	if t.Instead.Target == "" {
		return fmt.Errorf("%w\n%s", err, pages)
	}
	how := "run " + r.typedCommand(t.Instead.Target)
	if other, ferr := Find(t.Instead.Target); ferr == nil {
		if terr := Try(other, s, r.Out); terr != nil {
			how = fmt.Sprintf("%s would, but not with these flags: %v", r.typedCommand(t.Instead.Target), terr)
		}
	}
	return fmt.Errorf("%w\nto keep layout: %s, %s: %s\n%s", err, s.layout().Name, t.Instead.How, how, pages)
}

// pagesAdvice says what to set in the config at path for a build of the
// pages layout, which a file server takes, from the pagination of s: the
// keys, whatever style the file writes pagination in, and the commands
// to run after. It is the one place that says it: the config of a new
// site and docs/configuration.md send the reader to feedgen rules.
func (r *Request) pagesAdvice(t Target, path string, s *Site) string {
	p := s.Paging
	var build strings.Builder
	build.WriteString("feedgen build")
	if r.ConfigFlag != "" {
		fmt.Fprintf(&build, " --config %s", ShellQuote(r.ConfigFlag))
	}
	if r.Dir != "" {
		fmt.Fprintf(&build, " --out %s", ShellQuote(r.Dir))
	}
	limits := make([]string, 0, 5)
	for _, l := range pagesLimits(p.DefaultLimit, p.MaxLimit, p.Limits) {
		limits = append(limits, strconv.Itoa(l))
	}
	return fmt.Sprintf("for pagination.layout: pages, in %s also set pagination.limits: %s (the page sizes a request may ask for: default_limit %d among them, none above max_limit %d) and pagination.offsets: aligned (a page per multiple of each limit; all, a page per offset, is far larger); then run %s and %s again",
		path, "["+strings.Join(limits, ", ")+"]", p.DefaultLimit, p.MaxLimit, build.String(), r.typedCommand(t.Name))
}

// pagesLimits are the limits of layout: pages for the pagination of a
// build of another layout: its default_limit and max_limit, its limits
// and the usual 20, 50 and 100, none above max_limit.
func pagesLimits(def, max int, limits []int) []int {
	ls := append([]int{def, max, 20, 50, 100}, limits...)
	ls = slices.DeleteFunc(ls, func(l int) bool { return l <= 0 || l > max })
	slices.Sort(ls)
	return slices.Compact(ls)
}

// typedCommand is the feedgen rules command of target with the flags of
// the request, as typed: the user's own --standalone, --addr, --dir,
// -o... (--cache only for a target that takes it).
func (r *Request) typedCommand(target string) string {
	rec := Record{Target: target, Root: r.Dir, Listen: r.Addr, Standalone: r.Standalone, Modules: r.Modules, Out: r.Out}
	if t, err := Find(target); err == nil && t.Cache != "" {
		rec.Cache = r.Cache
	}
	return refreshCommand(rec, r.ConfigFlag)
}

// checkCommand is the feedgen rules --check command for target's files
// in r.Out.
func (r *Request) checkCommand(target string) string {
	args := []string{"feedgen", "rules", target}
	if r.ConfigFlag != "" {
		args = append(args, "--config", ShellQuote(r.ConfigFlag))
	}
	return strings.Join(append(args, "--check", "-o", ShellQuote(r.Out)), " ")
}

// CheckAddr refuses an --addr that is neither a port nor host:port with
// a port number.
func CheckAddr(addr string) error {
	port := addr
	if i := strings.LastIndexByte(addr, ':'); i >= 0 {
		port = addr[i+1:]
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || n == 0 {
		return fmt.Errorf("--addr %q: want a port (80) or host:port (127.0.0.1:8080)", addr)
	}
	return nil
}

// orList writes names as "a, b or c".
func orList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
}
