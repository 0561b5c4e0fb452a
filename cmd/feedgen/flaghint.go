package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// A flagHabit is a flag that users of Hugo, aws s3 and other tools type
// out of habit, and the flag of feedgen that does what they meant: a
// command without the flag, that has the one it means, answers an
// unknown flag with how to write it here. how is a format whose %[1]s
// is the value the user gave (or VALUE).
type flagHabit struct {
	flag string // as typed, with its dashes; long names compare in any case
	ours string // the long name of feedgen's flag; "" for an argument (then on is set)
	how  string
	on   []string // the commands (by name) it is for, where it means something else elsewhere; nil: any
}

// flagHabits are what flagHint looks up first; the first habit of a flag
// whose feedgen flag the command has wins. TestFlagHabits runs each on
// every command it applies to.
var flagHabits = []flagHabit{
	// Where a server listens: Hugo's server --port and --bind, Caddy's
	// --listen, and others'.
	{"--port", "addr", "--addr %[1]s (a port, or host:port)", nil},
	{"-p", "addr", "--addr %[1]s (a port, or host:port)", nil},
	{"--bind", "addr", "--addr %[1]s:8080 (host and port in one flag)", []string{"serve"}},
	{"--bind", "addr", "--addr %[1]s:80 (a port, or host:port)", nil},
	{"--host", "addr", "--addr %[1]s:8080 (host and port in one flag)", []string{"serve"}},
	{"--listen", "addr", "--addr %[1]s (a port, or host:port)", nil},

	// Where the build goes, or is: Hugo's --destination (-d).
	{"--destination", "dir", "--dir %[1]s (the build's folder)", []string{"serve"}},
	{"--destination", "out", "--out %[1]s (-o: the archive to write)", []string{"bundle"}},
	{"--destination", "", "the bucket as its argument, feedgen publish BUCKET_URL (and the build's folder as --dir)", []string{"publish"}},
	{"--destination", "dir", "--dir %[1]s (the build's folder, as the platform sees it)", []string{"rules"}},
	{"--destination", "out", "--out %[1]s (-o)", nil},
	{"-d", "out", "--out %[1]s (-o; Hugo's -d is --destination, feedgen's -D is --drafts)", nil},
	{"--renderToDisk", "out", "--out DIR (with --watch: the preview's pages are written there too)", []string{"serve"}},

	// The site: Hugo's --source (-s), a folder; what bundle and publish
	// read is the build's.
	{"--source", "dir", "--dir %[1]s (the build's folder)", []string{"bundle", "publish"}},
	{"--source", "config", "--config %[1]s (the site's folder, or its config.yaml)", nil},
	{"-s", "config", "--config %[1]s (the site's folder, or its config.yaml)", nil},

	// What a build includes, and how: Hugo's build flags.
	{"--buildDrafts", "drafts", "--drafts (-D)", nil},
	{"--buildFuture", "future", "--future", nil},
	{"-F", "future", "--future", nil},
	{"--baseURL", "base-url", "--base-url %[1]s", nil},
	{"--cleanDestinationDir", "clean", "--clean", nil},

	// aws s3 sync's spelling, and rclone's -n.
	{"--dryrun", "dry-run", "--dry-run (-n)", nil},
}

// flagHint returns err, a flag error of c's command line args, with what
// was likely meant: the habit of another tool (flagHabits) that c has
// an equivalent of, else a flag of c's whose name is close to the one
// given. Other errors come back as they are.
func flagHint(c *cobra.Command, err error, args []string) error {
	typed, in, ok := unknownFlag(err.Error())
	if !ok {
		return err
	}
	if h := habitHint(c, typed, in, args); h != "" {
		return fmt.Errorf("%w: %s takes %s", err, c.CommandPath(), h)
	}
	if name := closeFlag(c, typed); name != "" {
		return fmt.Errorf("%w: did you mean --%s?", err, name)
	}
	return err
}

// unknownFlag returns the flag that pflag's error message msg says is
// unknown, as typed (--name or -x), the argument it is in for a
// shorthand (-x, -x9000, -Dx), and whether msg is one.
func unknownFlag(msg string) (flag, in string, ok bool) {
	if name, ok := strings.CutPrefix(msg, "unknown flag: "); ok {
		return name, "", true
	}
	// unknown shorthand flag: 'd' in -d
	if rest, ok := strings.CutPrefix(msg, "unknown shorthand flag: '"); ok && len(rest) > 1 {
		short, in, _ := strings.Cut(rest, "' in ")
		return "-" + short, in, true
	}
	return "", "", false
}

// habitHint returns how to write in c the habit flag typed (a shorthand
// in the argument in), with the value given to it in args, or "".
func habitHint(c *cobra.Command, typed, in string, args []string) string {
	for _, h := range flagHabits {
		if !sameFlag(h.flag, typed) || h.ours != "" && c.Flags().Lookup(h.ours) == nil || h.on != nil && !slices.Contains(h.on, c.Name()) {
			continue
		}
		if !strings.Contains(h.how, "%[1]s") {
			return h.how
		}
		return fmt.Sprintf(h.how, flagValue(typed, in, args))
	}
	return ""
}

// sameFlag reports whether the habit flag h is typed: long names in any
// case (Hugo's --baseURL, --baseurl), shorthands exactly.
func sameFlag(h, typed string) bool {
	if strings.HasPrefix(h, "--") {
		return strings.EqualFold(h, typed)
	}
	return h == typed
}

// flagValue returns the value given to flag in args (--flag VALUE,
// --flag=VALUE), or "VALUE". A shorthand -x comes with in, the rest of
// its argument from it on, as pflag names it: -x9000 (or -x=9000) when
// the value is attached, -x when it is the next argument (-x 9000, and
// after other shorthands, -Dx 9000).
func flagValue(flag, in string, args []string) string {
	short := !strings.HasPrefix(flag, "--")
	if short {
		if v := strings.TrimPrefix(strings.TrimPrefix(in, flag), "="); v != "" && strings.HasPrefix(in, flag) {
			return v
		}
	}
	for i, a := range args {
		if a == "--" {
			break
		}
		if !short {
			if v, ok := strings.CutPrefix(a, flag+"="); ok && v != "" {
				return v
			}
		}
		if short && in == flag && strings.HasPrefix(a, "-") && !strings.HasPrefix(a, "--") && strings.HasSuffix(a, flag[1:]) ||
			!short && sameFlag(flag, a) {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
			break
		}
	}
	return "VALUE"
}

// closeFlag returns the long name of a flag of c close to the long flag
// typed: one or two letters apart (one for a name of four letters or
// fewer: --port is not --out), or one name the start of the other
// (--out, --output), or "".
func closeFlag(c *cobra.Command, typed string) string {
	name, ok := strings.CutPrefix(typed, "--")
	if !ok {
		return ""
	}
	var names []string
	c.Flags().VisitAll(func(f *pflag.Flag) {
		if !f.Hidden && f.Name != "help" {
			names = append(names, f.Name)
		}
	})
	slices.Sort(names)
	edits := 2
	if len(name) <= 4 {
		edits = 1
	}
	if s := config.SuggestWithin(strings.ToLower(name), names, edits); s != "" {
		return s
	}
	if len(name) >= 3 {
		for _, n := range names {
			if strings.HasPrefix(n, name) || strings.HasPrefix(name, n) {
				return n
			}
		}
	}
	return ""
}
