// Package rules writes the configuration that makes a web server, CDN or
// edge platform answer the listing as feedgen serve does, from the files
// of a build (docs/contract.md §9). Each target is one file of this package that
// turns a Site into the files it needs; what every target shares (the
// listing's contract: limits, offsets, filters and their folders, bodies
// and headers) comes from package listing and the build's manifest, and
// the JavaScript targets share one script, listing.js.
package rules

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/syndication"
)

// Site is what a target's files are made from: the listing of one build
// and where it is served from.
type Site struct {
	// Paging, Filters, BaseURL and Collections (with their counts) are the
	// build's, as its manifest records them.
	Paging      listing.Pagination
	Filters     []string
	BaseURL     string
	Collections []manifest.Collection
	// Root is the absolute path of the build's folder (the one holding
	// articles/ and manifest.json).
	Root string
	// Listen is where a server target listens: a port ("80") or
	// host:port.
	Listen string
	// OutDir is the absolute path of the folder the files are written to
	// (set by Write): where a file names another of its files.
	OutDir string
	// Cache is, for nginx-njs on a build of layout: chunks, the absolute
	// path of a folder where nginx keeps the pages njs puts together for
	// a second (--cache); "" for none.
	Cache string
	// Standalone makes a server target's main file a complete config,
	// which the server runs with no system config of its own, keeping
	// its pid, logs and temporary files in OutDir (--standalone; see
	// Target.Standalone).
	Standalone bool
	// Modules is the folder a standalone config loads the server's
	// modules from; "" for Debian's (see ModulesDir).
	Modules string
	// Feeds are the formats of the build's reader feeds (config feeds:),
	// in the order of syndication.Formats: those of which the build has
	// a file. A target answers each at listing.Path + its File, with the
	// filter parameters of the query, as feedgen serve does.
	Feeds []syndication.Format
}

// NewSite returns the Site of the build whose manifest is m, in folder
// root, for a server listening on listen.
func NewSite(m *manifest.Manifest, root, listen string) (*Site, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("finding the build folder: %w", err)
	}
	if listen == "" {
		listen = "80"
	}
	return &Site{
		Paging: m.Pagination, Filters: m.Filters, BaseURL: m.BaseURL,
		Collections: m.Collections, Root: abs, Listen: listen, Feeds: m.FeedFormats(),
	}, nil
}

// check refuses what no target's files can hold: a path or address with
// a control character (a newline would end the line of a config file, and
// could start another: wrangler.toml's account_id, nginx's include), a
// line or paragraph separator (which end a line of JavaScript), or
// invalid UTF-8. Each target refuses besides what its own syntax cannot
// quote.
func (s *Site) check() error {
	for _, f := range []struct{ what, v string }{
		{rootLabel, s.Root}, {outLabel, s.OutDir}, {"the address (--addr)", s.Listen}, {cacheLabel, s.Cache}, {modulesLabel, s.Modules},
	} {
		if !utf8.ValidString(f.v) {
			return fmt.Errorf("%s %q is not valid UTF-8", f.what, f.v)
		}
		if i := strings.IndexFunc(f.v, func(r rune) bool { return unicode.IsControl(r) || r == '\u2028' || r == '\u2029' }); i >= 0 {
			r, _ := utf8.DecodeRuneInString(f.v[i:])
			return fmt.Errorf("%s %q holds the control character %U, which the files would write as it is: use one without it", f.what, f.v, r)
		}
	}
	return nil
}

// Labels of the paths of a Site in messages: what each is, and the flag
// that gives it.
const (
	rootLabel    = "the build's folder (--dir)"
	outLabel     = "the output folder (-o)"
	cacheLabel   = "the cache folder (--cache)"
	modulesLabel = "the modules folder (--modules)"
)

// unholdable returns an error when the path p, the one of label, has one
// of chars, which file cannot hold: it names the path, by label, and the
// character. It returns nil for "" and for a path without them.
func unholdable(file, label, p, chars string) error {
	i := strings.IndexAny(p, chars)
	if i < 0 {
		return nil
	}
	r, _ := utf8.DecodeRuneInString(p[i:])
	return fmt.Errorf("%s %q has %q, which %s cannot hold: use a folder without it", label, p, r, file)
}

// layout is the layout of the build of s.
func (s *Site) layout() layout.Layout { return layout.Of(s.Paging) }

// Host and Port split Listen: Host is "" when it names a port only.
func (s *Site) Host() string {
	if i := strings.LastIndexByte(s.Listen, ':'); i >= 0 {
		return s.Listen[:i]
	}
	return ""
}

// Port is the port of Listen.
func (s *Site) Port() string {
	return s.Listen[strings.LastIndexByte(s.Listen, ':')+1:]
}

// A Target is one platform: the files it needs and how they run.
type Target struct {
	Name string
	// Files are the names of the files Generate returns, in OUTDIR.
	Files []string
	// Run says how the files are used, for --help and docs/deploying.md.
	Run string
	// Counts says that the files hold the build's counts: they are to be
	// written again after each build (but for a build of layout: chunks,
	// whose counts the indexes hold).
	Counts bool
	// Layouts are the layouts (layout.Layout's Name) of the builds the
	// target's files serve: that of page files for a target that only
	// maps a request onto a file; also those whose pages are put
	// together per request (Layout.Assembled) for a target that runs
	// code to do it (docs/contract.md §12). The others are refused (see
	// checkLayout).
	Layouts []string
	// Instead is, for a target that does not serve every layout, the
	// target of the same server that does, advised for a build of a
	// layout it does not serve: nginx's nginx-njs.
	Instead Instead
	// Standalone says that the target can write a complete config of
	// its server (Site.Standalone): nginx, nginx-njs and apache, whose
	// files are otherwise included in the server's own config.
	Standalone bool
	// ModulesDir is the folder a standalone config of the target loads
	// its Modules from unless --modules names another (Debian's); "" for
	// a target that loads none.
	ModulesDir string
	Modules    []string
	// Cache says what --cache is for the target ("" when it takes
	// none): a folder where the server keeps the pages it puts together.
	Cache string
	// Generate returns the content of each file of Files.
	Generate func(s *Site) (*Output, error)
	// Commands says how the platform runs the files written to a folder
	// and takes them when written again (see Target.CommandsFor); nil
	// for a platform with nothing to run.
	Commands func(dir string, standalone bool) Commands
}

// Instead is another target of the same server, and what it needs.
type Instead struct {
	Target string
	// How says how the server does what the target does not, for a
	// message: "nginx puts its pages together with its JavaScript
	// module (Debian: libnginx-mod-http-js)".
	How string
}

// Serves reports whether the files of t serve a build of layout l.
func (t Target) Serves(l layout.Layout) bool { return slices.Contains(t.Layouts, l.Name) }

// HoldsCounts reports whether the files of t for a build of layout l
// hold the build's counts, so that a build that changes them makes them
// stale: those of a target that writes them (Counts), but for a layout
// whose indexes hold them.
func (t Target) HoldsCounts(l layout.Layout) bool { return t.Counts && !l.Has(layout.Index) }

// CommandsFor returns how the platform of t runs the files written to
// the folder dir (with --standalone, or not), dir as the reader names it
// (relative to where the commands run, or absolute): the messages of
// feedgen and the comments of the files give these commands.
func (t Target) CommandsFor(dir string, standalone bool) Commands {
	if t.Commands == nil {
		return Commands{}
	}
	return t.Commands(dir, standalone)
}

// Commands are how a platform runs a folder of a target's files, as a
// POSIX shell types them (its paths quoted with ShellQuote); each "" where
// the platform has none.
type Commands struct {
	// Start runs the files (a standalone config, Caddy), and Stop
	// stops what Start ran.
	Start, Stop string
	// Reload makes the platform take the files written again; Then says
	// what it does, for a message: "reload nginx".
	Then, Reload string
}

// Next says what to do once the files are written again, for a message:
// "reload nginx: nginx -s reload"; "" when there is nothing to do.
func (c Commands) Next() string {
	if c.Reload == "" {
		return ""
	}
	return c.Then + ": " + c.Reload
}

// ShellQuote quotes s as one word for a POSIX shell when it needs it: a
// path of the commands that messages and comments give.
func ShellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./:=@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Output is what a target makes of a Site.
type Output struct {
	// Files holds the content of each file of Target.Files.
	Files map[string][]byte
	// Warnings say what the files do not answer that the build has
	// (filters left out of a function too small for them).
	Warnings []string
}

// StrictError is the error of Write told to be strict, for files that
// have warnings: nothing was written.
type StrictError struct {
	Target   string
	Warnings []string
}

func (e *StrictError) Error() string {
	return fmt.Sprintf("%s: %s (--strict): nothing was written", e.Target, strings.Join(e.Warnings, "; "))
}

// Targets returns every target, by name.
func Targets() []Target {
	ts := []Target{
		// Each target file adds itself here.
		njsTarget(),
		cloudflareTarget(),
		netlifyTarget(),
		cloudfrontTarget(),
		nginxTarget(),
		caddyTarget(),
		apacheTarget(),
	}
	slices.SortFunc(ts, func(a, b Target) int { return strings.Compare(a.Name, b.Name) })
	return ts
}

// Find returns the target called name.
func Find(name string) (Target, error) {
	var names []string
	for _, t := range Targets() {
		if t.Name == name {
			return t, nil
		}
		names = append(names, t.Name)
	}
	return Target{}, fmt.Errorf("unknown target %q: want one of %s", name, strings.Join(names, ", "))
}

// ErrChunks is the error of a target given a build of layout: chunks
// that it cannot serve.
var ErrChunks = errors.New("the build is in the chunks layout (pagination.layout: chunks)")

// checkLayout refuses a build of a layout t does not serve (Layouts):
// its error names the targets that do.
func checkLayout(t Target, s *Site) error {
	l := s.layout()
	if t.Serves(l) {
		return nil
	}
	var can []string
	for _, t := range Targets() {
		if t.Serves(l) {
			can = append(can, t.Name)
		}
	}
	if l.Assembled {
		return fmt.Errorf("%w: its pages are put together per request from chunks, and %s only maps a request onto a file; the targets that run code to do it are %s (and feedgen serve does it), or build with pagination.layout: pages",
			ErrChunks, t.Name, andList(can))
	}
	return fmt.Errorf("%s does not serve a build of pagination.layout: %s; %s do", t.Name, l.Name, andList(can))
}

// andList writes names as "a, b and c".
func andList(names []string) string {
	if len(names) < 2 {
		return strings.Join(names, "")
	}
	return strings.Join(names[:len(names)-1], ", ") + " and " + names[len(names)-1]
}

// Write writes the files of target t for s into outDir, each atomically,
// and returns their paths and the target's warnings. Strict makes a
// warning a *StrictError, and then nothing is written.
func Write(t Target, s *Site, outDir string, strict bool) (written, warnings []string, err error) {
	out, _, err := generate(t, s, outDir)
	if err != nil {
		return nil, nil, err
	}
	if strict && len(out.Warnings) > 0 {
		return nil, out.Warnings, &StrictError{Target: t.Name, Warnings: out.Warnings}
	}
	if err := os.MkdirAll(outDir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating %s: %w", outDir, err)
	}
	for _, name := range t.Files {
		data, ok := out.Files[name]
		if !ok {
			return nil, nil, errors.New("rules: " + t.Name + " made no " + name)
		}
		p := filepath.Join(outDir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, nil, fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
		}
		if err := atomicfile.WriteFile(p, data, 0o644); err != nil {
			return nil, nil, fmt.Errorf("writing %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, out.Warnings, nil
}

// Try makes target t's files for s as Write would make them in outDir,
// and writes nothing: it returns the error Write would return, so that a
// command can be checked before it is suggested.
func Try(t Target, s *Site, outDir string) error {
	_, _, err := generate(t, s, outDir)
	return err
}

// generate makes target t's files for s, to be written into outDir, and
// returns them and the Site they were made for.
func generate(t Target, s *Site, outDir string) (*Output, *Site, error) {
	abs, err := filepath.Abs(outDir)
	if err != nil {
		return nil, nil, fmt.Errorf("finding %s: %w", outDir, err)
	}
	withOut := *s
	withOut.OutDir = abs
	if err := withOut.check(); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	if err := checkLayout(t, &withOut); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", t.Name, err)
	}
	out, err := t.Generate(&withOut)
	if err != nil {
		return nil, nil, fmt.Errorf("generating the %s rules: %w", t.Name, err)
	}
	return out, &withOut, nil
}
