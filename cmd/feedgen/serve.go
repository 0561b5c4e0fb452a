package main

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/feedgen/feedgen/internal/server"
	"github.com/feedgen/feedgen/internal/watch"
	"github.com/spf13/cobra"
)

func newServeCmd(opts *globalOptions) *cobra.Command {
	var (
		dir, addr, logTo string
		bundleFile       string
		watching         bool
		site             siteFlags
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
  feedgen serve --dir /srv/public --addr 127.0.0.1:9000 --log access.log
  feedgen serve --addr 127.0.0.1:0 --log -    # any free port, access log on stderr
  feedgen serve --bundle feed-2026-11-23.zip  # serve a bundle without extracting it
  feedgen serve --watch                       # live preview of ./config.yaml's site
  feedgen serve --watch --config site/config.yaml --addr 127.0.0.1:8081`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			so := server.Options{Dir: dir, Addr: addr, Log: opts.stderr}
			logFile, err := openAccessLog(logTo, opts.stderr)
			if err != nil {
				return err
			}
			if logFile != nil {
				defer logFile.Close()
				so.AccessLog = logFile
			}
			if cmd.Flags().Changed("bundle") {
				for _, f := range []string{"dir", "watch"} {
					if cmd.Flags().Changed(f) {
						return usageError{fmt.Errorf("--bundle and --%s do not go together: --bundle serves the build in the archive", f)}
					}
				}
			}
			if !watching {
				for _, f := range []string{"config", "out", "future"} {
					if cmd.Flags().Changed(f) {
						return usageError{fmt.Errorf("--%s is for --watch: serve --dir serves a build as it is", f)}
					}
				}
				if cmd.Flags().Changed("bundle") {
					return serveBundle(cmd, opts, bundleFile, so)
				}
				return server.Run(cmd.Context(), so)
			}
			if cmd.Flags().Changed("dir") {
				return usageError{fmt.Errorf("--dir and --watch do not go together: --watch builds the site of --config (and --out)")}
			}
			if _, err := os.Stat(site.config); err != nil {
				return usageError{fmt.Errorf("serve --watch needs a site on disk: no %s here (pass --config)", site.config)}
			}
			bo, err := site.options(cmd, opts)
			if err != nil {
				return err
			}
			if bo.Root == "" {
				return usageError{fmt.Errorf("serve --watch needs a site on disk: no %s here (pass --config)", site.config)}
			}
			return watch.Preview(cmd.Context(), watch.PreviewOptions{
				Build:      bo,
				ConfigPath: site.config,
				Server:     so,
				Out:        opts.stderr,
			})
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "public", "the output folder of a build")
	cmd.Flags().StringVarP(&addr, "addr", "a", server.DefaultAddr, "host:port to listen on; port 0 picks a free port")
	cmd.Flags().StringVar(&logTo, "log", "", `access log file in the combined log format, "-" for stderr (default: none)`)
	cmd.Flags().StringVarP(&bundleFile, "bundle", "b", "", "serve this bundle (feedgen bundle) straight from the archive, after verifying it")
	cmd.Flags().BoolVarP(&watching, "watch", "w", false, "build the site of --config, serve it, and rebuild on every change")
	site.register(cmd)
	cmd.Flags().Lookup("out").Usage = "with --watch: also write the preview's pages to this folder (default: none, they stay in memory)"
	return cmd
}

// serveBundle verifies the bundle name and serves the build in it, from
// memory: the server decompresses every page once, at start.
func serveBundle(cmd *cobra.Command, opts *globalOptions, name string, so server.Options) error {
	if name == "" {
		return usageError{errors.New("--bundle needs a file: --bundle feed.zip")}
	}
	b, err := openBundle(cmd, name, opts.stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	so.Dir, so.FS = name, b.FS()
	return server.Run(cmd.Context(), so)
}

// openAccessLog opens the access log named by the --log flag: nil for "",
// stderr for "-", else the file, appended to.
func openAccessLog(name string, stderr io.Writer) (io.WriteCloser, error) {
	switch name {
	case "":
		return nil, nil
	case "-":
		return nopCloser{stderr}, nil
	}
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening access log: %w", err)
	}
	return f, nil
}

type nopCloser struct{ io.Writer }

func (nopCloser) Close() error { return nil }
