package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/feedgen/feedgen/internal/rules"
	"github.com/spf13/cobra"
)

// A commandHabit is a command that users of Hugo and other tools type out
// of habit, and what feedgen does for it: an unknown command answers with
// the command to run instead (exit 2).
type commandHabit struct {
	parent string // the command it is typed after: "feedgen", "feedgen new"
	name   string // as typed
	what   string // what it is for: "to upload the build"
	// run is the feedgen command to run instead. In a command of new
	// article, %[1]s is the article's SECTION/CATEGORY/SLUG, from the
	// argument given after the habit when there is one (see articleArg).
	run string
}

// commandHabits are what unknownCommand looks up first. TestCommandHabits
// runs each.
var commandHabits = []commandHabit{
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

// unknownCommand is the error of args, given to c, a command of
// subcommands, whose first is none of them: a usage error with the
// command to run instead (commandHabits), or the subcommand of c whose
// name is close, or an argument that is an article's path after new.
func unknownCommand(c *cobra.Command, args []string) error {
	name := args[0]
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	for _, h := range commandHabits {
		if h.parent == c.CommandPath() && strings.EqualFold(h.name, name) {
			run := h.run
			if strings.Contains(run, "%[1]s") {
				run = fmt.Sprintf(run, articleArg(args[1:]))
			}
			return usageError{fmt.Errorf("%s: %s, run %s", msg, h.what, run)}
		}
	}
	if !c.HasParent() {
		if t, err := rules.Find(name); err == nil {
			// A target typed as a command.
			return usageError{fmt.Errorf("%s: to write the files %s needs (%s), run feedgen rules %s -o DIR", msg, t.Name, strings.Join(t.Files, ", "), t.Name)}
		}
	}
	if c.CommandPath() == "feedgen new" && strings.Contains(name, "/") {
		// Hugo's hugo new posts/x.md: the path without a kind.
		return usageError{fmt.Errorf("%s: to write a new article, run feedgen new article %s", msg, articleArg(args))}
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		return usageError{fmt.Errorf("%s: did you mean %q?", msg, s[0])}
	}
	return usageError{errors.New(msg)}
}

// articleArg is the SECTION/CATEGORY/SLUG of new article for the
// arguments after a habit (Hugo's path of a content file,
// posts/x.md or content/news/x.md, or a slug alone): the path without
// content/ and .md, with what it lacks in capitals.
func articleArg(args []string) string {
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

// commandWords returns the arguments of the command line args from the
// first that is not a flag after the words of c's path (feedgen new:
// after "new"), and whether c takes commands and that argument is none
// of them: what a flag error of c is about when the command it is after
// is unknown (feedgen deploy --target x).
func commandWords(c *cobra.Command, args []string) ([]string, bool) {
	if !c.HasSubCommands() {
		return nil, false
	}
	path := strings.Fields(c.CommandPath())[1:]
	for _, a := range args {
		if len(path) == 0 {
			break
		}
		if a == path[0] {
			path = path[1:]
		}
		args = args[1:]
	}
	for i, a := range args {
		if !strings.HasPrefix(a, "-") {
			for _, sub := range c.Commands() {
				if sub.Name() == a || sub.HasAlias(a) {
					return nil, false
				}
			}
			return args[i:], true
		}
	}
	return nil, false
}
