package main

import (
	"context"
	"fmt"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/human"
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
	b, err := bundle.Verify(ctx, o.file, o.stderr, nil)
	if o.json {
		if jerr := writeJSON(o.stdout, summary.Verify(o.file, b, err, bundle.ProblemLines(err), time.Since(start))); err == nil {
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
