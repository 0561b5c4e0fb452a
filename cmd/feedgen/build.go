package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/spf13/cobra"
)

// siteFlags name the site to build: shared by build and serve --watch.
type siteFlags struct {
	config string
	out    string
	future bool
}

func (f *siteFlags) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&f.config, "config", "c", "config.yaml", "the site's config file; without one, the embedded sample site")
	cmd.Flags().StringVarP(&f.out, "out", "o", "", "output folder (default: output_dir of the config)")
	cmd.Flags().BoolVar(&f.future, "future", false, "include articles published after the build time")
}

// options turns the flags into build options. When --config was not given
// and there is no config.yaml, the embedded sample site is built.
func (f *siteFlags) options(cmd *cobra.Command, opts *globalOptions) (build.Options, error) {
	now, err := buildTime(opts.getenv)
	if err != nil {
		return build.Options{}, err
	}
	bo := build.Options{
		OutDir:    f.out,
		Future:    f.future,
		Now:       now,
		Log:       opts.stderr,
		Generator: "feedgen " + opts.version,
		Code:      codeID(opts.version),
	}
	if _, err := os.Stat(f.config); errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("config") {
		fmt.Fprintln(opts.stderr, "no config.yaml here: using the embedded sample site")
		bo.FS, bo.ConfigName = feedgen.Sample(), "config.yaml"
		return bo, nil
	}
	dir := filepath.Dir(f.config)
	bo.FS, bo.ConfigName, bo.Root = os.DirFS(dir), filepath.Base(f.config), dir
	return bo, nil
}

func newBuildCmd(opts *globalOptions) *cobra.Command {
	var (
		site  siteFlags
		quiet bool
	)
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
			bo, err := site.options(cmd, opts)
			if err != nil {
				return err
			}
			bo.Quiet = quiet
			if !quiet {
				bar := newProgress(opts.stderr)
				defer bar.Close()
				bo.Progress = bar.Set
			}
			res, err := build.New(bo).Build(cmd.Context())
			if err != nil {
				return err
			}
			if !quiet {
				fmt.Fprintln(opts.stdout, res.Summary())
			}
			return nil
		},
	}
	site.register(cmd)
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only warnings and errors")
	return cmd
}
