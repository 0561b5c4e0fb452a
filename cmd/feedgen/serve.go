package main

import (
	"fmt"
	"os"

	"github.com/feedgen/feedgen/internal/server"
	"github.com/spf13/cobra"
)

func newServeCmd(opts *globalOptions) *cobra.Command {
	var dir, addr, logTo string
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a built output folder as /articles/?limit=&offset=",
		Long: `Serve answers /articles/?limit=&offset= from the pages of a build, exactly as
the original service did: the query is parsed by its rules, then the page is
sent from memory with ETag and Last-Modified. A new build written into the
folder is picked up without a restart; the server switches to it only once
every page of it is read and checked against the manifest.
SIGINT or SIGTERM stops it after the requests in flight are answered.`,
		Example: `  feedgen serve
  feedgen serve --dir /srv/public --addr 127.0.0.1:9000 --log access.log
  feedgen serve --addr 127.0.0.1:0 --log -    # any free port, access log on stderr`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			so := server.Options{Dir: dir, Addr: addr, Log: opts.stderr}
			switch logTo {
			case "":
			case "-":
				so.AccessLog = opts.stderr
			default:
				f, err := os.OpenFile(logTo, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
				if err != nil {
					return fmt.Errorf("opening access log: %w", err)
				}
				defer f.Close()
				so.AccessLog = f
			}
			return server.Run(cmd.Context(), so)
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "public", "the output folder of a build")
	cmd.Flags().StringVarP(&addr, "addr", "a", server.DefaultAddr, "host:port to listen on; port 0 picks a free port")
	cmd.Flags().StringVar(&logTo, "log", "", `access log file in the combined log format, "-" for stderr (default: none)`)
	return cmd
}
