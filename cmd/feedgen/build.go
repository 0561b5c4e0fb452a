package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/spf13/cobra"
)

// siteOptions name the site to build: shared by build and serve --watch.
type siteOptions struct {
	config string
	out    string
	future bool

	now   func() time.Time // the build time: set by check
	found bool             // a config was found (config is its path): set by check
}

func (s *siteOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().StringVarP(&s.out, "out", "o", "", "output folder (default: output_dir of the config)")
	cmd.Flags().BoolVar(&s.future, "future", false, "include articles published after the build time")
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
	s.config, s.found, err = findConfig(s.config, set("config"), cwd)
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
		Now:        s.now,
		Log:        g.stderr,
		Generator:  "feedgen " + g.version,
		Code:       codeID(g.version),
	}
}

// buildOptions are the options of feedgen build.
type buildOptions struct {
	*globalOptions
	site   siteOptions
	quiet  bool
	sample bool                   // --sample, or chosen by check
	set    func(flag string) bool // whether the flag was given
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
	cwd, _ := os.Getwd()
	switch {
	case o.sample && o.site.found && o.site.out == "":
		return usageError{fmt.Errorf("this folder is in the site of %s: build the sample elsewhere, or pass --out", o.site.config)}
	case o.sample, o.site.found:
	case emptyFolder(cwd):
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
		bo.FS, bo.ConfigName, bo.Root = feedgen.Sample(), configName, ""
	}
	bo.Quiet = o.quiet
	if !o.quiet {
		bar := newProgress(o.stderr)
		defer bar.Close()
		bo.Progress = bar.Set
	}
	res, err := build.New(bo).Build(ctx)
	if err != nil {
		return err
	}
	if !o.quiet {
		fmt.Fprintln(o.stdout, res.Summary())
	}
	return nil
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
SOURCE_DATE_EPOCH, when set, is the build time.`,
		Example: `  feedgen build
  feedgen build --config site/config.yaml --out /tmp/public
  SOURCE_DATE_EPOCH=1796083200 feedgen build --quiet`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = cmd.Flags().Changed
			return checkRun(cmd.Context(), o, runBuild)
		},
	}
	o.site.register(cmd)
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only warnings and errors")
	cmd.Flags().BoolVar(&o.sample, "sample", false, "build the embedded sample site (into ./public, or --out)")
	return cmd
}
