package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

// newCommand returns the subcommand name: parse reads its flags into a
// plan (see commandLine), run measures that plan. The exit code is 0 on
// success and after -h, 2 on a usage error (parse has printed it), 1 when
// run fails.
func newCommand[P any](name, summary string,
	parse func(args []string, stderr io.Writer) (P, error),
	run func(ctx context.Context, plan P, stdout, stderr io.Writer) error,
) command {
	return command{name, summary, func(ctx context.Context, args []string, stdout, stderr io.Writer) int {
		plan, err := parse(args, stderr)
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		if err != nil {
			return 2
		}
		if err := run(ctx, plan, stdout, stderr); err != nil {
			fmt.Fprintf(stderr, "feedbench %s: %v\n", name, err)
			return 1
		}
		return 0
	}}
}

// commandLine parses the flags of one subcommand. newCommandLine declares
// the flags every subcommand has (-feedgen, -dir), the flag methods below
// the ones several have (-runs, -seed, -quick), and the subcommand its own
// on the embedded FlagSet before it calls parse.
type commandLine struct {
	*flag.FlagSet
	name    string // the subcommand: "build"
	feedgen string
	dir     string
	runs    int
	seed    int64
	quick   bool
	given   map[string]bool // the flags on the command line, set by parse
}

// newCommandLine returns the flag parser of "feedbench name", printing to
// stderr. Its -h prints "usage: feedbench name synopsis", about (lines that
// end in a newline), the example "go run ./tools/feedbench name example"
// and the flags.
func newCommandLine(name string, stderr io.Writer, synopsis, example, about string) *commandLine {
	c := &commandLine{FlagSet: flag.NewFlagSet("feedbench "+name, flag.ContinueOnError), name: name}
	c.SetOutput(stderr)
	c.StringVar(&c.feedgen, "feedgen", "", "feedgen `binary` to measure (default: go build ./cmd/feedgen of the current module)")
	c.StringVar(&c.dir, "dir", "", "`folder` to create the temporary sites in (default: the system temporary folder)")
	c.Usage = func() {
		w := c.Output()
		fmt.Fprintf(w, "usage: feedbench %s %s\n", name, synopsis)
		fmt.Fprintln(w)
		fmt.Fprint(w, about)
		fmt.Fprintln(w, "A missed target is reported, not an error: the exit code is 1 only when something fails to run.")
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Example:")
		fmt.Fprintln(w, "  go run ./tools/feedbench", strings.TrimSpace(name+" "+example))
		fmt.Fprintln(w)
		fmt.Fprintln(w, "Flags:")
		c.PrintDefaults()
	}
	return c
}

// runsFlag declares -runs, 5 by default.
func (c *commandLine) runsFlag(usage string) { c.IntVar(&c.runs, "runs", 5, usage) }

// seedFlag declares -seed, the seed of the synthetic corpus, 1 by default.
func (c *commandLine) seedFlag() { c.Int64Var(&c.seed, "seed", 1, "`seed` of the synthetic corpus") }

// quickFlag declares -quick, the smoke test that usage describes.
func (c *commandLine) quickFlag(usage string) { c.BoolVar(&c.quick, "quick", false, usage) }

// parse parses args, which must hold only flags. Usage errors are printed
// before they are returned; -h returns flag.ErrHelp.
func (c *commandLine) parse(args []string) error {
	if err := c.Parse(args); err != nil {
		return err
	}
	if c.NArg() > 0 {
		err := c.usageError("unexpected argument %q", c.Arg(0))
		c.Usage()
		return err
	}
	c.given = map[string]bool{}
	c.Visit(func(f *flag.Flag) { c.given[f.Name] = true })
	return nil
}

// usageError prints "feedbench name: " and the message, and returns the
// message as an error: for flags that parse but do not make a plan.
func (c *commandLine) usageError(format string, a ...any) error {
	err := fmt.Errorf(format, a...)
	fmt.Fprintf(c.Output(), "feedbench %s: %v\n", c.name, err)
	return err
}

// quickDefault sets *p to v under -quick unless the flag name was given.
func quickDefault[T any](c *commandLine, name string, p *T, v T) {
	if c.quick && !c.given[name] {
		*p = v
	}
}

// workspace creates the temporary folder of "feedbench name" in dir (the
// system's when empty) and returns it with the feedgen binary to measure:
// the -feedgen value resolved or, when that is empty, ./cmd/feedgen built
// into the folder. The caller removes the folder with removeRoot.
func workspace(ctx context.Context, name, dir, feedgen string) (root, bin string, err error) {
	if root, err = os.MkdirTemp(dir, "feedbench-"+name+"-"); err != nil {
		return "", "", fmt.Errorf("create temporary folder: %w", err)
	}
	if feedgen == "" {
		bin, err = buildFeedgen(ctx, root)
	} else {
		bin, err = resolveBinary(feedgen)
	}
	if err != nil {
		removeRoot(root, &err)
		return "", "", err
	}
	return root, bin, nil
}

// removeRoot removes the temporary folder root and, when that fails, sets
// *err unless it holds an earlier error. Deferred by the runs.
func removeRoot(root string, err *error) {
	if rerr := os.RemoveAll(root); rerr != nil && *err == nil {
		*err = fmt.Errorf("remove temporary folder: %w", rerr)
	}
}

// tally counts the targets a run met and missed.
type tally struct{ ok, missed int }

// verdict counts a target and returns "ok" or "MISSED".
func (t *tally) verdict(ok bool) string {
	if ok {
		t.ok++
		return "ok"
	}
	t.missed++
	return "MISSED"
}

// String is the last line of a report.
func (t tally) String() string { return fmt.Sprintf("targets: %d ok, %d MISSED", t.ok, t.missed) }
