package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/summary"
	"github.com/spf13/cobra"
)

// bundleOptions are the options of feedgen bundle.
type bundleOptions struct {
	*globalOptions
	dir, file, config string
	quiet, force      bool
	json              bool                   // the summary as JSON (jsonout.go)
	set               func(flag string) bool // whether the flag was given

	cfg []byte // the config's bytes: read by check
}

// check refuses a bundle without -o, without a config to hold, over an
// archive that exists (without --force), or inside the folder it
// bundles; it finds the build's folder and reads the config.
func (o *bundleOptions) check() error {
	if o.file == "" {
		return usageError{errors.New("bundle needs -o FILE: the archive to write, e.g. -o feed.zip")}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	o.dir, o.config, err = outdir.Find(o.dir, o.set("dir"), o.config, o.set("config"), cwd)
	if err != nil {
		return err
	}
	if o.config == "" {
		return usageError{errors.New("no config.yaml here or in any folder above: a bundle holds the config the output was built with; pass it with --config")}
	}
	if o.cfg, err = os.ReadFile(o.config); err != nil {
		return fmt.Errorf("reading config: %w", err)
	}
	if _, err := os.Lstat(o.file); err == nil && !o.force {
		return usageError{fmt.Errorf("%s exists: pass --force to replace it", o.file)}
	}
	if inside, err := bundle.Inside(o.file, o.dir); err != nil {
		return err
	} else if inside {
		return usageError{fmt.Errorf("-o %s is inside %s, the output folder being bundled: write the bundle elsewhere", o.file, o.dir)}
	}
	return nil
}

// runBundle writes the bundle of the build in the folder.
func runBundle(ctx context.Context, o *bundleOptions) error {
	start := time.Now()
	bo := bundle.Options{Config: o.cfg, BundledBy: "feedgen " + o.version}
	if !o.quiet && !o.json {
		bar := newProgress(o.stderr)
		defer bar.Close()
		bo.Progress = bar.Set
	}
	res, err := bundle.WriteFile(ctx, o.file, o.dir, bo)
	if err != nil {
		return err
	}
	if o.json {
		return writeJSON(o.stdout, summary.Bundle(o.file, res, nil, time.Since(start)))
	}
	if !o.quiet {
		fmt.Fprintf(o.stdout, "%s: the build of %s (%s, %s, %s) in %s (%.2f), %s\n",
			o.file, res.Info.BuildTime.Format(time.RFC3339), human.Plural(res.Info.Articles, "article"), human.Plural(res.Pages, "page"),
			human.Bytes(res.Info.Bytes), human.Bytes(res.Size),
			float64(res.Size)/float64(max(1, res.Info.Bytes)), time.Since(start).Round(time.Millisecond))
	}
	return nil
}

func newBundleCmd(g *globalOptions) *cobra.Command {
	o := &bundleOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "bundle -o FILE",
		Short: "Write a build as one zip archive to keep, check and serve later",
		Long: `Bundle writes the build in --dir as one zip archive: every page, the manifest
(the size and SHA-256 of every page), the config.yaml the build used and a
bundle.json with the feedgen version, build time and counts. Standard unzip
reads it; "feedgen verify" checks it and "feedgen serve --bundle" serves it
without extracting it.

Bundles are reproducible: two bundles of the same output are byte-identical
(entries sorted, dated with the build time). Every page is checked against the
manifest as it is read, so a bundle never holds a half-written build. The
archive is written to a temporary file beside FILE and renamed over it at the
end: a failed bundle leaves nothing behind.`,
		Example: `  feedgen bundle -o feed-2026-11-23.zip
  feedgen bundle --dir /srv/feed/public --config /srv/feed/config.yaml -o /archive/feed.zip`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.set = cmd.Flags().Changed
			start := time.Now()
			err := checkRun(cmd.Context(), o, runBundle)
			if err != nil && o.json {
				// The failure as JSON too, as verify's: a CI reads stdout.
				writeJSON(o.stdout, summary.Bundle(o.file, nil, err, time.Since(start)))
			}
			return err
		},
	}
	cmd.Flags().StringVarP(&o.dir, "dir", "d", "", "the output folder of the build to bundle (default: output_dir of the config, else public)")
	cmd.Flags().StringVarP(&o.file, "out", "o", "", "the archive to write (required)")
	renamed(cmd, "output", "out")
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "the config.yaml the output was built with, stored in the bundle (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVarP(&o.force, "force", "f", false, "replace the archive if it exists")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only errors")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary as one JSON object (file, ok, error, build_time, articles, pages, bytes, size, seconds)")
	return cmd
}
