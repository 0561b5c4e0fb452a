package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// command is one feedbench subcommand.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

func commands() []command {
	return []command{
		newCommand("build", "whole-process build benchmark: cold build, cp -a, no-change rebuild, large site, filters with a one-edit rebuild", parseBuildFlags, runBuild),
		newCommand("serve", "feedgen serve against nginx with wrk: one hot page, a shuffled walk over every page, RSS", parseServeFlags, runServe),
		newCommand("watch", "feedgen serve --watch: time from an edit (or a new article) to the server answering with it", parseWatchFlags, runWatch),
		newCommand("bundle", "feedgen bundle, verify and serve --bundle: bundle time and size, verify time, req/s against serve --dir", parseBundleFlags, runBundle),
		newCommand("chunks", "layout: chunks against pages, same corpus: output size, cold builds, what a new or edited article makes publish upload", parseChunksFlags, runChunks),
		newCommand("chunksizes", "in process: what each average size of chunks trades (chunks a page needs, bytes a new or edited article publishes)", parseChunkSizesFlags, runChunkSizes),
		newCommand("sizes", "in process: the output size of each pagination a new site could start with, at 1,000, 10,000 and 100,000 articles", parseSizesFlags, runSizes),
		newCommand("publish", "feedgen publish against aws s3 sync --delete and rclone sync --checksum, one versitygw: objects, bytes, time for a first, unchanged, one-edit, new-article publish", parsePublishVsFlags, runPublishVs),
		newCommand("archive", "one new article on an archive of 1,000,000 articles (chunks, four filters) against 10,000: build, publish to versitygw and file://, nginx-njs (issue 38's table)", parseArchiveFlags, runArchive),
		newCommand("scale", "feedgen serve on a 2.4 GB output against nginx (req/s, memory), a 1,000,000-article cold build, and the serve benchmark", parseScaleFlags, runScale),
	}
}

// Main runs feedbench with the command-line arguments (without the program
// name) and returns the process exit code: 0 on success, also when a target
// is missed; 1 when something failed to run; 2 on a usage error.
// SIGINT and SIGTERM stop the run and remove its temporary files.
func Main(args []string, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return Run(ctx, args, stdout, stderr)
}

// Run is Main with a caller-supplied context.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "help", "-h", "-help", "--help":
		usage(stdout)
		return 0
	}
	for _, c := range commands() {
		if c.name == args[0] {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	fmt.Fprintf(stderr, "feedbench: unknown command %q\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: feedbench <command> [flags]")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "commands:")
	for _, c := range commands() {
		fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, `Run "feedbench <command> -h" for the flags of a command.`)
}
