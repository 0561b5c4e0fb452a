package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/summary"
	"github.com/spf13/cobra"
)

// verifyOptions are the options of feedgen verify. Its command line has
// nothing to check but its one argument, which cobra checks (oneBundle).
type verifyOptions struct {
	*globalOptions
	file string // the bundle
	json bool   // the summary as JSON (jsonout.go)
}

// runVerify verifies the bundle and prints what it holds.
func runVerify(ctx context.Context, o *verifyOptions) error {
	start := time.Now()
	b, err := openBundle(ctx, o.file, o.stderr, nil)
	if o.json {
		var bp *bundleProblems
		errors.As(err, &bp)
		if jerr := writeJSON(o.stdout, summary.Verify(o.file, b, err, bp.problems(), time.Since(start))); err == nil {
			err = jerr
		}
		if b != nil {
			b.Close()
		}
		return err
	}
	if err != nil {
		return err
	}
	defer b.Close()
	_, err = fmt.Fprintf(o.stdout, "%s: ok: the build of %s (%s, %s, %s) in %s, verified in %s\n",
		o.file, b.Info.BuildTime.Format(time.RFC3339), human.Plural(b.Info.Articles, "article"), human.Plural(len(b.Manifest.Files), "page"),
		human.Bytes(b.Info.Bytes), human.Bytes(b.Size), time.Since(start).Round(time.Millisecond))
	return err
}

func newVerifyCmd(g *globalOptions) *cobra.Command {
	o := &verifyOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "verify FILE",
		Short: "Check a bundle: its structure and every page against its manifest",
		Long: `Verify checks a bundle written by "feedgen bundle": that it is a complete zip
archive whose entries all have clean relative names, found once; that its
manifest and bundle.json are of a format this feedgen reads; and that every
page the manifest lists is there, decompresses to the size and SHA-256 the
manifest gives, and that nothing else is. It prints one line per problem,
"FILE: entry: what is wrong", and exits 1 on any; on none, one summary line.
With --json, the summary is one JSON object, "ok" false on problems.`,
		Example: `  feedgen verify feed-2026-11-23.zip`,
		Args:    oneBundle,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return runVerify(cmd.Context(), o)
		},
	}
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary as one JSON object (file, ok, error, build_time, articles, pages, bytes, size, seconds)")
	return cmd
}

// oneBundle takes the one argument of verify, as a usage error when there
// is not one.
func oneBundle(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return usageError{fmt.Errorf("%s takes one bundle file, got %d arguments", cmd.CommandPath(), len(args))}
	}
	return nil
}

// openBundle opens and verifies the bundle name. On problems it prints
// them to stderr, one line each as "FILE: entry: what is wrong", and
// returns an error that says how many. Every page verified is handed to
// keep, when not nil (see bundle.KeepFunc).
func openBundle(ctx context.Context, name string, stderr io.Writer, keep bundle.KeepFunc) (*bundle.Bundle, error) {
	if err := notBundle(name); err != nil {
		return nil, err
	}
	b, err := bundle.OpenWith(ctx, name, keep)
	var ps *bundle.Problems
	if errors.As(err, &ps) {
		var lines []string
		for _, p := range ps.Report() {
			fmt.Fprintf(stderr, "%s: %s\n", name, p)
			lines = append(lines, p.String())
		}
		if len(ps.Damage) > 0 {
			return nil, &bundleProblems{fmt.Errorf("%s: damaged: restore it from a copy, or write it again from its build with feedgen bundle", name), lines}
		}
		return nil, &bundleProblems{fmt.Errorf("%s: %s: the bundle is damaged or not a feedgen bundle", name, human.Plural(len(ps.Other), "problem")), lines}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}

// bundleProblems is the error of a bundle that does not verify, with the
// lines printed for it (verify --json gives them).
type bundleProblems struct {
	error
	lines []string
}

// problems are the lines of p, none for nil.
func (p *bundleProblems) problems() []string {
	if p == nil {
		return nil
	}
	return p.lines
}

// notBundle refuses name, given as a bundle, when it is a folder: a
// build's, which feedgen serve --dir serves and feedgen bundle archives,
// or a site's, whose build is in its output_dir.
func notBundle(name string) error {
	info, err := os.Stat(name)
	if err != nil || !info.IsDir() {
		return nil // opening it says what is wrong
	}
	const what = "a bundle is the .zip that feedgen bundle writes"
	if out, ok := outdir.SiteOutput(name); ok {
		first := ""
		if _, err := os.Stat(filepath.Join(out, manifest.Name)); err != nil {
			first = fmt.Sprintf(" (there is none yet: run feedgen build in %s first)", name)
		}
		return fmt.Errorf("%s is a site's folder, not a bundle (%s): its build is in %s%s: feedgen serve --dir %s serves it, feedgen bundle --dir %s -o FILE.zip archives it", name, what, out, first, out, out)
	}
	if _, err := os.Stat(filepath.Join(name, manifest.Name)); err == nil {
		return fmt.Errorf("%s is the folder of a build, not a bundle (%s): feedgen serve --dir %s serves it, feedgen bundle --dir %s -o FILE.zip archives it", name, what, name, name)
	}
	return fmt.Errorf("%s is a folder, not a bundle (%s)", name, what)
}
