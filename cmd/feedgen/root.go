package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/debug"
	"strconv"
	"syscall"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/spf13/cobra"
)

// Exit codes.
const (
	exitOK      = 0
	exitContent = 1 // content or config errors, or a failed run
	exitUsage   = 2 // bad command line
)

// globalOptions are what every command shares: where to write and how to
// read the environment.
type globalOptions struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
	version        string
}

// usageError is a bad command line: exit code 2.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// run executes the command line args and returns the exit code.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opts := &globalOptions{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv, version: version()}
	cmd := newRootCmd(opts)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(ctx)
	return report(stderr, err)
}

// report prints err and returns its exit code.
func report(stderr io.Writer, err error) int {
	if err == nil {
		return exitOK
	}
	var dl diag.List
	var ue usageError
	switch {
	case errors.As(err, &dl):
		dl.Print(stderr, "feedgen: %s, nothing written")
		return exitContent
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "feedgen: %v\nRun 'feedgen --help' for usage.\n", ue.err)
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
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		Args:              cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usageError{fmt.Errorf("unknown command %q for %q", args[0], cmd.CommandPath())}
			}
			return cmd.Help()
		},
	}
	cmd.SetOut(opts.stdout)
	cmd.SetErr(opts.stderr)
	cmd.SetIn(opts.stdin)
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	cmd.AddCommand(
		newBuildCmd(opts),
		newServeCmd(opts),
		newBundleCmd(opts),
		newVerifyCmd(opts),
		newRulesCmd(opts),
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
	_, err := fmt.Fprintf(g.stdout, "feedgen %s\n", g.version)
	return err
}

// version is the module version feedgen was built as, or "dev".
func version() string {
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" {
		return "dev"
	}
	return info.Main.Version
}

// buildTime returns the clock, or SOURCE_DATE_EPOCH when it is set
// (reproducible builds).
func buildTime(getenv func(string) string) (func() time.Time, error) {
	s := getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Now, nil
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return nil, usageError{fmt.Errorf("SOURCE_DATE_EPOCH=%q is not a whole number of seconds since 1970", s)}
	}
	t := time.Unix(sec, 0).UTC()
	return func() time.Time { return t }, nil
}
