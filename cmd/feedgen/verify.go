package main

import (
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/spf13/cobra"
)

func newVerifyCmd(opts *globalOptions) *cobra.Command {
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
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one bundle file, got %d arguments", cmd.CommandPath(), len(args))}
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			start := time.Now()
			b, err := openBundle(cmd, name, opts.stderr)
			if err != nil {
				return err
			}
			defer b.Close()
			_, err = fmt.Fprintf(opts.stdout, "%s: ok: the build of %s (%d articles, %d pages, %s) in %s, verified in %s\n",
				name, b.Info.BuildTime.Format(time.RFC3339), b.Info.Articles, len(b.Manifest.Files),
				human.Bytes(b.Info.Bytes), human.Bytes(b.Size), time.Since(start).Round(time.Millisecond))
			return err
		},
	}
}

// openBundle opens and verifies the bundle name. On problems it prints
// them to stderr, one line each as "FILE: entry: what is wrong", and
// returns an error that says how many.
func openBundle(cmd *cobra.Command, name string, stderr io.Writer) (*bundle.Bundle, error) {
	b, err := bundle.Open(cmd.Context(), name)
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
