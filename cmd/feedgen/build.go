package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/buildinfo"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/rules"
	"github.com/feedgen/feedgen/internal/summary"
	"github.com/spf13/cobra"
)

// siteOptions name the site to build: shared by build and serve --watch.
type siteOptions struct {
	config string
	out    string
	future bool
	drafts bool

	now   func() time.Time // the build time: set by check
	found bool             // a config was found (config is its path): set by check
}

func (s *siteOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().StringVarP(&s.out, "out", "o", "", "output folder (default: output_dir of the config)")
	cmd.Flags().BoolVar(&s.future, "future", false, "include articles published after the build time")
	cmd.Flags().BoolVarP(&s.drafts, "drafts", "D", false, "include articles marked draft: true")
}

// check reads the build time from the environment (a SOURCE_DATE_EPOCH
// that is not one is a usage error) and finds the config: --config, or
// config.yaml here or in a folder above.
func (s *siteOptions) check(getenv func(string) string, set func(string) bool) error {
	now, err := buildTime(getenv)
	if err != nil {
		return err
	}
	s.now = now
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	s.config, s.found, err = config.Find(s.config, set("config"), cwd)
	return err
}

// options returns the build options of the site of the config file.
func (s *siteOptions) options(g *globalOptions) build.Options {
	dir := filepath.Dir(s.config)
	return build.Options{
		FS:         os.DirFS(dir),
		ConfigName: filepath.Base(s.config),
		Root:       dir,
		OutDir:     s.out,
		Future:     s.future,
		Drafts:     s.drafts,
		Now:        s.now,
		Log:        g.stderr,
		Generator:  "feedgen " + g.version,
		Code:       buildinfo.CodeID(g.version),
	}
}

// buildOptions are the options of feedgen build.
type buildOptions struct {
	*globalOptions
	site                siteOptions
	quiet, strict, json bool
	clean               bool
	baseURL             string
	sample              bool                   // --sample, or chosen by check
	set                 func(flag string) bool // whether the flag was given
}

// check reads the build time and finds the site: --config, or config.yaml
// here or in a folder above. It builds the embedded sample site only when
// asked (--sample) or in an empty folder with no site above, and never
// into a folder of a site.
func (o *buildOptions) check() error {
	if o.sample && o.set("config") {
		return usageError{errors.New("--sample builds the embedded sample site: leave out --config")}
	}
	if err := o.site.check(o.getenv, o.set); err != nil {
		return err
	}
	if o.set("base-url") {
		if u, err := url.Parse(o.baseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.RawQuery != "" || u.Fragment != "" {
			return usageError{fmt.Errorf("--base-url %q: want an absolute http(s) URL without query, e.g. https://staging-api.example.com", o.baseURL)}
		}
	}
	cwd, _ := os.Getwd()
	switch {
	case o.sample && o.site.found && o.site.out == "":
		return usageError{fmt.Errorf("this folder is in the site of %s: build the sample elsewhere, or pass --out", o.site.config)}
	case o.sample, o.site.found:
	case outdir.Empty(cwd):
		o.sample = true
		fmt.Fprintln(o.stderr, "an empty folder and no config.yaml above: building the embedded sample site (feedgen new site DIR starts your own)")
	default:
		return usageError{errors.New("no config.yaml here or in any folder above: pass --config, start a site with feedgen new site DIR, or build the embedded sample with --sample")}
	}
	return nil
}

// runBuild builds the site.
func runBuild(ctx context.Context, o *buildOptions) error {
	bo := o.site.options(o.globalOptions)
	if o.sample {
		bo.FS, bo.ConfigName, bo.Root = feedgen.Sample(), config.FileName, ""
	}
	bo.Quiet = o.quiet || o.json
	bo.Strict = o.strict
	bo.Clean = o.clean
	bo.BaseURL = o.baseURL
	softMemoryLimit()
	if !bo.Quiet {
		bar := newProgress(o.stderr)
		defer bar.Close()
		bo.Progress = bar.Set
	}
	res, err := build.Run(ctx, bo)
	if err != nil {
		return err
	}
	if !o.sample {
		o.warnStaleRules(res)
	}
	switch {
	case o.json:
		return writeJSON(o.stdout, summary.Build(res))
	case !o.quiet:
		fmt.Fprintln(o.stdout, res.Summary())
	}
	return nil
}

// warnStaleRules prints a warning for each folder of rules written for
// this output (recorded beside the config by feedgen rules) that the
// build made stale, with the command that writes them again, and for
// each such folder that is gone, whose record it forgets.
func (o *buildOptions) warnStaleRules(res *build.Result) {
	configFlag, outputDir := "", res.OutDir
	if o.set("config") {
		configFlag = o.site.config
	}
	if o.site.out != "" {
		// Built elsewhere than output_dir: the command needs --dir
		// unless the record's is output_dir.
		if cfg, err := config.ReadFile(o.site.config); err == nil {
			outputDir = cfg.OutputDir
		}
	}
	cwd, _ := os.Getwd()
	records := filepath.Join(filepath.Dir(o.site.config), rules.RecordsName)
	warnings, err := rules.BuildWarnings(records, res.OutDir, res.Manifest, res.Written > 0 || res.Deleted > 0, outputDir, configFlag, cwd)
	if err != nil {
		fmt.Fprintf(o.stderr, "warning: checking the rules written for this output: %v\n", err)
	}
	for _, w := range warnings {
		fmt.Fprintf(o.stderr, "warning: %s\n", w)
	}
}

func newBuildCmd(g *globalOptions) *cobra.Command {
	o := &buildOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "build",
		Short: "Write every page of the listing as static JSON files",
		Long: `Build reads config.yaml and the articles under its content_dir, and writes
every page of /articles/?limit=&offset= under output_dir/articles/, plus a
manifest. Only files whose bytes changed are written; pages that no longer
exist are deleted; a build with any content or config error writes nothing.
A build deletes or overwrites only what a build of feedgen wrote there (what
output_dir/manifest.json lists): one that finds other files under
output_dir/articles/ refuses, naming them, unless --clean deletes them. Nothing
outside articles/ and manifest.json is touched. A file of the last build that
changed since (found by its change time; with --clean, by reading every file)
is written again. SOURCE_DATE_EPOCH, when set, is the build time.`,
		Example: `  feedgen build
  feedgen build --config /srv/feed/config.yaml --out /tmp/public
  SOURCE_DATE_EPOCH=1796083200 feedgen build --quiet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = cmd.Flags().Changed
			return checkRun(cmd.Context(), o, runBuild)
		},
	}
	o.site.register(cmd)
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only warnings and errors")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "make warnings errors: a build with any writes nothing (for CI)")
	cmd.Flags().BoolVar(&o.json, "json", false, `print the summary as one JSON object (articles, pages, written, unchanged, deleted, bytes, warnings, seconds, ...)`)
	cmd.Flags().BoolVar(&o.clean, "clean", false, "delete the files under the output folder's articles/ that no feedgen build wrote (a build refuses them otherwise), and read every file to rewrite any that changed")
	cmd.Flags().StringVar(&o.baseURL, "base-url", "", "the base URL of the links instead of the config's base_url (a staging host)")
	cmd.Flags().BoolVar(&o.sample, "sample", false, "build the embedded sample site (into ./public, or --out)")
	return cmd
}

// buildMemoryLimit is the heap size past which feedgen build collects
// garbage harder, unless GOMEMLIMIT says otherwise: a build of a million
// articles holds about 1 GB at its peak (see build.Run), and
// without a limit the heap may grow to twice what it holds.
const buildMemoryLimit = 1536 << 20

// softMemoryLimit sets the Go runtime's soft memory limit to
// buildMemoryLimit, unless GOMEMLIMIT set one.
func softMemoryLimit() {
	if debug.SetMemoryLimit(-1) == math.MaxInt64 {
		debug.SetMemoryLimit(buildMemoryLimit)
	}
}
