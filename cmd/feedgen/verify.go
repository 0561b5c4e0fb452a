package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/spf13/cobra"
)

// verifyOptions are the options of feedgen verify. Its command line has
// nothing to check but its one argument, which cobra checks (oneBundle).
type verifyOptions struct {
	*globalOptions
	file string // the bundle
}

// runVerify verifies the bundle and prints what it holds.
func runVerify(ctx context.Context, o *verifyOptions) error {
	start := time.Now()
	b, err := openBundle(ctx, o.file, o.stderr, nil)
	if err != nil {
		return err
	}
	defer b.Close()
	_, err = fmt.Fprintf(o.stdout, "%s: ok: the build of %s (%d articles, %d pages, %s) in %s, verified in %s\n",
		o.file, b.Info.BuildTime.Format(time.RFC3339), b.Info.Articles, len(b.Manifest.Files),
		human.Bytes(b.Info.Bytes), human.Bytes(b.Size), time.Since(start).Round(time.Millisecond))
	return err
}

func newVerifyCmd(g *globalOptions) *cobra.Command {
	o := &verifyOptions{globalOptions: g}
	return &cobra.Command{
		Use:   "verify FILE",
		Short: "Check a bundle: its structure and every page against its manifest",
		Long: `Verify checks a bundle written by "feedgen bundle": that it is a complete zip
archive whose entries all have clean relative names, found once; that its
manifest and bundle.json are of a format this feedgen reads; and that every
page the manifest lists is there, decompresses to the size and SHA-256 the
manifest gives, and that nothing else is. It prints one line per problem,
"FILE: entry: what is wrong", and exits 1 on any; on none, one summary line.`,
		Example: `  feedgen verify feed-2026-11-23.zip`,
		Args:    oneBundle,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.file = args[0]
			return runVerify(cmd.Context(), o)
		},
	}
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
	b, err := bundle.OpenWith(ctx, name, keep)
	var ps diag.List
	if errors.As(err, &ps) {
		for _, p := range ps {
			fmt.Fprintf(stderr, "%s: %s\n", name, p)
		}
		return nil, fmt.Errorf("%s: %s: the bundle is damaged or not a feedgen bundle", name, human.Plural(len(ps), "problem"))
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return b, nil
}
