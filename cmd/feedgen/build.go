package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
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

	now func() time.Time // the build time: set by check
}

func (s *siteOptions) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&s.config, "config", "c", "config.yaml", "the site's config file; without one, the embedded sample site")
	cmd.Flags().StringVarP(&s.out, "out", "o", "", "output folder (default: output_dir of the config)")
	cmd.Flags().BoolVar(&s.future, "future", false, "include articles published after the build time")
}

// check reads the build time from the environment: a SOURCE_DATE_EPOCH
// that is not one is a usage error.
func (s *siteOptions) check(getenv func(string) string) error {
	now, err := buildTime(getenv)
	s.now = now
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
	site  siteOptions
	quiet bool
	set   func(flag string) bool // whether the flag was given

	sample bool // build the embedded sample site: set by check
}

// check reads the build time, and without --config and a config.yaml
// here, chooses the embedded sample site.
func (o *buildOptions) check() error {
	if err := o.site.check(o.getenv); err != nil {
		return err
	}
	_, err := os.Stat(o.site.config)
	o.sample = errors.Is(err, fs.ErrNotExist) && !o.set("config")
	return nil
}

// runBuild builds the site.
func runBuild(ctx context.Context, o *buildOptions) error {
	bo := o.site.options(o.globalOptions)
	if o.sample {
		fmt.Fprintln(o.stderr, "no config.yaml here: using the embedded sample site")
		bo.FS, bo.ConfigName, bo.Root = feedgen.Sample(), "config.yaml", ""
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
	return cmd
}
