package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/feedgen/feedgen/internal/buildinfo"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitContent = 1 // content or config errors, or a failed run
	exitUsage   = 2 // bad command line; rules --check: could not check
)

// globalOptions are what every command shares: where to write and how to
// read the environment.
type globalOptions struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	version        string
	args           []string // the command line, for the hint of a flag error
}

// usageError is a bad command line: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// run executes the command line args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	ctx, stop := stopOnSignal()
	defer stop()
	opts := &globalOptions{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, version: version(), args: args}
	cmd := newRootCmd(opts)
	cmd.SetArgs(args)
	c, err := cmd.ExecuteContextC(ctx)
	path := "feedgen"
	if c != nil {
		path = c.CommandPath()
	}
	return report(stderr, err, path)
}

// stopOnSignal returns a context cancelled by the first SIGINT or
// SIGTERM, which stops the command cleanly; the signals are no longer
// caught by then, so that a second ends the process at once, whatever the
// first waits for (requests in flight, a slow disk).
func stopOnSignal() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-sigs:
			signal.Stop(sigs) // before anything sees the cancel
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		cancel()
	}
}

// report prints err, of the command path (e.g. "feedgen build"), and
// returns its exit code.
func report(stderr io.Writer, err error, path string) int {
	if err == nil {
		return exitOK
	}
	var dl diag.List
	var ue usageError
	var cf checkFailed
	switch {
	case errors.As(err, &cf):
		// rules --check could not check: 2, so that 1 says stale.
		report(stderr, cf.err, path)
		return exitUsage
	case errors.As(err, &dl):
		dl.Print(stderr, "feedgen: %s, nothing written")
		return exitContent
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "feedgen: %v\nRun '%s --help' for usage.\n", ue.err, path)
		return exitUsage
	case errors.Is(err, context.Canceled):
		fmt.Fprintln(stderr, "feedgen: interrupted")
		return exitContent
	}
	fmt.Fprintf(stderr, "feedgen: %v\n", err)
	return exitContent
}

func newRootCmd(opts *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "feedgen",
		Short: "Build and serve a static, pre-rendered JSON article feed",
		Long: `feedgen turns a folder of markdown articles with YAML front matter into every
page of the paginated listing /articles/?limit=&offset=, written as static JSON
files, and serves them exactly as the original dynamic service answered.`,
		Example: `  feedgen build                 # build ./config.yaml's site into public/
  feedgen serve                 # serve public/ on http://127.0.0.1:8080/articles/`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRun: func(cmd *cobra.Command, args []string) {
			noteRenamed(cmd, opts.stderr)
		},
		Version: versionLine(opts.version),
		Args:    cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args)
			}
			return cmd.Help()
		},
	}
	cmd.SetOut(opts.stdout)
	cmd.SetErr(opts.stderr)
	cmd.SetIn(opts.stdin)
	cmd.SetFlagErrorFunc(func(c *cobra.Command, err error) error {
		if args, ok := commandWords(c, opts.args); ok {
			return unknownCommand(c, args)
		}
		return usageError{flagHint(c, err, opts.args)}
	})
	cmd.SetVersionTemplate("feedgen {{.Version}}\n")
	cmd.SuggestionsMinimumDistance = 2
	cmd.AddCommand(
		newBuildCmd(opts),
		newServeCmd(opts),
		newBundleCmd(opts),
		newVerifyCmd(opts),
		newRulesCmd(opts),
		newImportCmd(opts),
		newPublishCmd(opts),
		newNewCmd(opts),
		newVersionCmd(opts),
	)
	return cmd
}

// checkRun is what a command, or a mode of serve, does once RunE has filled
// its options from the command line: check them, then run.
func checkRun[O interface{ check() error }](ctx context.Context, o O, run func(context.Context, O) error) error {
	if err := o.check(); err != nil {
		return err
	}
	return run(ctx, o)
}

// noArgs rejects positional arguments as a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usageError{fmt.Errorf("%s takes no arguments, got %q", cmd.CommandPath(), args)}
	}
	return nil
}

// newVersionCmd makes feedgen version, whose options are the global ones
// alone: it has no flags, and so nothing to check.
func newVersionCmd(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print feedgen's version",
		Example: "  feedgen version",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVersion(g)
		},
	}
}

// runVersion prints the version feedgen was built as.
func runVersion(g *globalOptions) error {
	_, err := fmt.Fprintf(g.stdout, "feedgen %s\n", versionLine(g.version))
	return err
}

// buildVersion, when set at link time (go build -ldflags "-X
// main.buildVersion=v1.2.3"), is the version feedgen says it is, whatever
// the build information says: for packagers who build from a tarball.
var buildVersion string

// buildVCS, when set at link time, is the commit feedgen was built from,
// where the Go toolchain stamped none: "REVISION TIME", then " modified"
// when the tree had changes. make build sets it (-ldflags "-X
// 'main.buildVCS=...'"): go stamps no commit in a linked git worktree,
// whose .git is a file.
var buildVCS string

// versionLine is what feedgen version and --version print after
// "feedgen" (buildinfo.Line).
func versionLine(v string) string { return buildinfo.Line(v, buildVCS) }

// version is the version feedgen was built as: buildVersion, or the
// module's version, or "dev".
func version() string { return buildinfo.Version(buildVersion) }

// buildTime is buildinfo.Clock, whose error is a bad command line.
func buildTime(getenv func(string) string) (func() time.Time, error) {
	now, err := buildinfo.Clock(getenv)
	if err != nil {
		return nil, usageError{err}
	}
	return now, nil
}
