package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/preview"
	"github.com/feedgen/feedgen/internal/server"
	"github.com/spf13/cobra"
)

// serve has three modes, each with its options, check and run function:
// serveOptions (a build's output folder, --dir), serveBundleOptions (a
// bundle, --bundle) and previewOptions (a live preview, --watch).

// serveOptions are the options of serve --dir, which serves the build in
// an output folder.
type serveOptions struct {
	*globalOptions
	listen server.Listen
	dir    string
	config string                 // the site whose output_dir to serve, without --dir
	set    func(flag string) bool // whether the flag was given
}

// check refuses the flags of --watch and finds the folder: --dir, or the
// output_dir of the site's config (--config, or config.yaml here or in a
// folder above), or public.
func (o *serveOptions) check() error {
	if err := watchOnly(o.set); err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	o.dir, _, err = outdir.Find(o.dir, o.set("dir"), o.config, o.set("config"), cwd)
	return err
}

// runServe serves the build in the folder.
func runServe(ctx context.Context, o *serveOptions) error {
	return server.ServeFolder(ctx, o.listen, o.dir)
}

// serveBundleOptions are the options of serve --bundle, which serves the
// build in a bundle.
type serveBundleOptions struct {
	*globalOptions
	listen server.Listen
	file   string
	set    func(flag string) bool // whether the flag was given
}

func (o *serveBundleOptions) check() error {
	for _, f := range []string{"dir", "watch", "config"} {
		if o.set(f) {
			return usageError{fmt.Errorf("--bundle and --%s do not go together: --bundle serves the build in the archive", f)}
		}
	}
	if err := watchOnly(o.set); err != nil {
		return err
	}
	if o.file == "" {
		return usageError{errors.New("--bundle needs a file: --bundle feed.zip")}
	}
	return nil
}

// runServeBundle verifies the bundle and serves the build in it.
func runServeBundle(ctx context.Context, o *serveBundleOptions) error {
	return bundle.Serve(ctx, o.listen, o.file)
}

// watchOnly refuses the flags of the site to build, which only serve
// --watch takes.
func watchOnly(set func(flag string) bool) error {
	for _, f := range []string{"out", "future"} {
		if set(f) {
			return usageError{fmt.Errorf("--%s is for --watch: serve --dir serves a build as it is", f)}
		}
	}
	return nil
}

// previewOptions are the options of serve --watch, the live preview.
type previewOptions struct {
	*globalOptions
	listen server.Listen
	site   siteOptions
	set    func(flag string) bool // whether the flag was given
}

// check refuses --dir, and a site that is not on disk: the preview has
// nothing to watch in the embedded sample site.
func (o *previewOptions) check() error {
	if o.set("dir") {
		return usageError{errors.New("--dir and --watch do not go together: --watch builds the site of --config (and --out)")}
	}
	if err := o.site.check(o.getenv, o.set); err != nil {
		return err
	}
	if !o.site.found {
		return usageError{errors.New("serve --watch needs a site on disk: no config.yaml here or in any folder above (pass --config)")}
	}
	return nil
}

// runPreview builds the site, serves it, and rebuilds it on every change.
func runPreview(ctx context.Context, o *previewOptions) error {
	return o.listen.Serve(ctx, func(ctx context.Context, so server.Options) error {
		return preview.Run(ctx, preview.Options{
			Build:      o.site.options(o.globalOptions),
			ConfigPath: o.site.config,
			Server:     so,
			Out:        o.stderr,
		})
	})
}

func newServeCmd(g *globalOptions) *cobra.Command {
	var (
		listen      server.Listen
		dir, bundle string
		watching    bool
		site        siteOptions
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a built output folder as /articles/?limit=&offset=, or preview a site live",
		Long: `Serve answers /articles/?limit=&offset= from the pages of a build, exactly as
the original service did: the query is parsed by its rules, then the page is
sent from memory with ETag and Last-Modified. A new build written into the
folder is picked up without a restart; the server switches to it only once
every page of it is read and checked against the manifest.

With --watch it is a live preview: it builds the site of --config in memory
(and into --out, when given), serves it with links to its own address, and
rebuilds on every change under content/ and to config.yaml. Broken content
never breaks the preview: the errors are printed and the last good build
stays served.

With --bundle it serves a bundle written by "feedgen bundle" straight from the
archive, without extracting it, with exactly the answers of serve --dir on the
same output. The bundle is verified first; one that fails verification is not
served.

SIGINT or SIGTERM stops it after the requests in flight are answered.`,
		Example: `  feedgen serve
  feedgen serve --dir /srv/feed/public --addr 127.0.0.1:9000 --log access.log
  feedgen serve --addr 0 --log -              # any free port, access log on stderr
  feedgen serve --bundle feed-2026-11-23.zip  # serve a bundle without extracting it
  feedgen serve --watch                       # live preview of ./config.yaml's site
  feedgen serve --watch --config /srv/feed/config.yaml --addr 127.0.0.1:8081`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, set := cmd.Context(), cmd.Flags().Changed
			listen.Log = g.stderr
			if err := listen.Check(); err != nil {
				return usageError{err}
			}
			switch {
			case set("bundle"):
				return checkRun(ctx, &serveBundleOptions{globalOptions: g, listen: listen, file: bundle, set: set}, runServeBundle)
			case watching:
				return checkRun(ctx, &previewOptions{globalOptions: g, listen: listen, site: site, set: set}, runPreview)
			}
			return checkRun(ctx, &serveOptions{globalOptions: g, listen: listen, dir: dir, config: site.config, set: set}, runServe)
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "", "the output folder of a build (default: output_dir of the config, else public)")
	cmd.Flags().StringVarP(&listen.Addr, "addr", "a", server.DefaultAddr, "PORT or HOST:PORT to listen on (a port alone: 127.0.0.1's); port 0 picks a free port")
	cmd.Flags().StringVar(&listen.AccessLog, "log", "", `access log file in the combined log format, "-" for stderr (default: none)`)
	cmd.Flags().StringVarP(&bundle, "bundle", "b", "", "serve this bundle (feedgen bundle) straight from the archive, after verifying it")
	cmd.Flags().BoolVarP(&watching, "watch", "w", false, "build the site of --config, serve it, and rebuild on every change")
	site.register(cmd)
	cmd.Flags().Lookup("out").Usage = "with --watch: also write the preview's pages to this folder (default: none, they stay in memory)"
	return cmd
}
