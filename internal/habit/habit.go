// Package habit owns what users of other tools (Hugo, aws s3, rclone,
// Caddy) type out of habit, and what feedgen takes for it: the commands
// and flags, as data, and how an unknown one is answered (the command or
// flag to write instead, with the value given). feedgen's own names are
// not habits: a renamed flag is an alias of the command that had it.
package habit

import (
	"fmt"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/config"
)

// A Flag is a flag that users of Hugo, aws s3 and other tools type
// out of habit, and the flag of feedgen that does what they meant: a
// command without the flag, that has the one it means, answers an
// unknown flag with how to write it here. how is a format whose %[1]s
// is the value the user gave (or VALUE).
type Flag struct {
	Flag string // as typed, with its dashes; long names compare in any case
	Ours string // the long name of feedgen's flag; "" for an argument (then On is set)
	How  string
	On   []string // the commands (by name) it is for, where it means something else elsewhere; nil: any
}

// Flags are the flags of habit, looked up first for an unknown flag;
// the first of a flag whose feedgen flag the command has wins.
// cmd/feedgen's TestFlagHabits runs each on every command it applies to.
func Flags() []Flag {
	return []Flag{
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
}

// A Command is a command that users of Hugo and other tools type out
// of habit, and what feedgen does for it: an unknown command answers with
// the command to run instead (exit 2).
type Command struct {
	Parent string // the command it is typed after: "feedgen", "feedgen new"
	Name   string // as typed
	What   string // what it is for: "to upload the build"
	// run is the feedgen command to run instead. In a command of new
	// article, %[1]s is the article's SECTION/CATEGORY/SLUG, from the
	// argument given after the habit when there is one (see articleArg).
	Run string
}

// Commands are the commands of habit, looked up first for an unknown
// command. cmd/feedgen's TestCommandHabits runs each.
func Commands() []Command {
	return []Command{
		// Hugo: hugo new content posts/x.md, hugo new post x (the archetype
		// "post"), hugo new posts/x.md.
		{"feedgen new", "content", "to write a new article", "feedgen new article %[1]s"},
		{"feedgen new", "post", "to write a new article", "feedgen new article %[1]s"},
		{"feedgen new", "posts", "to write a new article", "feedgen new article %[1]s"},
		{"feedgen new", "page", "to write a new article", "feedgen new article %[1]s"},
		{"feedgen new", "theme", "feedgen has no themes: its pages are JSON; to start a site", "feedgen new site DIR"},
		{"feedgen", "post", "to write a new article", "feedgen new article %[1]s"},

		// Hugo's commands, and other tools'.
		{"feedgen", "server", "to serve the build (with --watch, a preview of the content)", "feedgen serve"},
		{"feedgen", "deploy", "to upload the build to a bucket", "feedgen publish BUCKET_URL"},
		{"feedgen", "upload", "to upload the build to a bucket", "feedgen publish BUCKET_URL"},
		{"feedgen", "push", "to upload the build to a bucket", "feedgen publish BUCKET_URL"},
		{"feedgen", "sync", "to upload the build to a bucket", "feedgen publish BUCKET_URL"},
		{"feedgen", "watch", "to preview the content, rebuilt on every change", "feedgen serve --watch"},
		{"feedgen", "dev", "to preview the content, rebuilt on every change", "feedgen serve --watch"},
		{"feedgen", "preview", "to preview the content, rebuilt on every change", "feedgen serve --watch"},
		{"feedgen", "run", "to preview the content, rebuilt on every change", "feedgen serve --watch"},
		{"feedgen", "start", "to preview the content, rebuilt on every change", "feedgen serve --watch"},
		{"feedgen", "generate", "to write the build", "feedgen build"},
		{"feedgen", "gen", "to write the build", "feedgen build"},
		{"feedgen", "render", "to write the build", "feedgen build"},
		{"feedgen", "compile", "to write the build", "feedgen build"},
		{"feedgen", "clean", "to write the build anew, deleting what it no longer has", "feedgen build --clean"},
		{"feedgen", "init", "to start a site", "feedgen new site DIR"},
		{"feedgen", "export", "to write the build into one archive", "feedgen bundle -o FILE.zip"},
		{"feedgen", "archive", "to write the build into one archive", "feedgen bundle -o FILE.zip"},
		{"feedgen", "check", "to check the content, build it (it writes nothing when it finds errors); to check an archive", "feedgen verify FILE.zip"},
		{"feedgen", "env", "to see the version and how it was built", "feedgen version"},
		{"feedgen", "hugo", "to write the build", "feedgen build"},
		{"feedgen", "list", "to see the listing", "feedgen build && feedgen serve"},
		{"feedgen", "config", "to check config.yaml (a build writes nothing when it finds errors)", "feedgen build"},
		{"feedgen", "convert", "to make a site of a live listing", "feedgen import URL"},
	}
}

// CommandHint returns what the command name, typed after parent
// ("feedgen", "feedgen new"), is for and what to run instead, "to upload
// the build, run feedgen publish BUCKET_URL", when it is a habit; rest
// are the arguments after it.
func CommandHint(parent, name string, rest []string) (string, bool) {
	for _, h := range Commands() {
		if h.Parent == parent && strings.EqualFold(h.Name, name) {
			run := h.Run
			if strings.Contains(run, "%[1]s") {
				run = fmt.Sprintf(run, ArticleArg(rest))
			}
			return h.What + ", run " + run, true
		}
	}
	return "", false
}

// ArticleArg is the SECTION/CATEGORY/SLUG of new article for the
// arguments after a habit (Hugo's path of a content file,
// posts/x.md or content/news/x.md, or a slug alone): the path without
// content/ and .md, with what it lacks in capitals.
func ArticleArg(args []string) string {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") || args[0] == "" {
		return "SECTION/CATEGORY/SLUG"
	}
	p := strings.TrimSuffix(strings.TrimPrefix(strings.Trim(args[0], "/"), "content/"), ".md")
	switch strings.Count(p, "/") {
	case 0:
		return "SECTION/CATEGORY/" + p
	case 1:
		return "SECTION/" + p
	}
	return p
}

// UnknownFlag returns the flag that pflag's error message msg says is
// unknown, as typed (--name or -x), the argument it is in for a
// shorthand (-x, -x9000, -Dx), and whether msg is one.
func UnknownFlag(msg string) (flag, in string, ok bool) {
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

// FlagHint returns how the command named cmd takes the flag of habit
// typed (a shorthand in the argument in), with the value given to it in
// args, the command line; "" when it is no habit there. has says whether
// the command has a flag of that long name.
func FlagHint(cmd, typed, in string, args []string, has func(name string) bool) string {
	for _, h := range Flags() {
		if !SameFlag(h.Flag, typed) || h.Ours != "" && !has(h.Ours) || h.On != nil && !slices.Contains(h.On, cmd) {
			continue
		}
		if !strings.Contains(h.How, "%[1]s") {
			return h.How
		}
		return fmt.Sprintf(h.How, flagValue(typed, in, args))
	}
	return ""
}

// SameFlag reports whether the habit flag h is typed: long names in any
// case (Hugo's --baseURL, --baseurl), shorthands exactly.
func SameFlag(h, typed string) bool {
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
			!short && SameFlag(flag, a) {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "-") {
				return args[i+1]
			}
			break
		}
	}
	return "VALUE"
}

// CloseFlag returns the one of names (a command's flags, sorted) close
// to the long flag typed: one or two letters apart (one for a name of
// four letters or fewer: --port is not --out), or one name the start of
// the other (--out, --output), or "".
func CloseFlag(typed string, names []string) string {
	name, ok := strings.CutPrefix(typed, "--")
	if !ok {
		return ""
	}
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
