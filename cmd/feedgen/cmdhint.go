package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/feedgen/feedgen/internal/habit"
	"github.com/feedgen/feedgen/internal/rules"
	"github.com/spf13/cobra"
)

// unknownCommand is the error of args, given to c, a command of
// subcommands, whose first is none of them: a usage error with the
// command to run instead (habit.Commands), or the subcommand of c whose
// name is close, or an argument that is an article's path after new.
func unknownCommand(c *cobra.Command, args []string) error {
	name := args[0]
	msg := fmt.Sprintf("unknown command %q for %q", name, c.CommandPath())
	if hint, ok := habit.CommandHint(c.CommandPath(), name, args[1:]); ok {
		return usageError{fmt.Errorf("%s: %s", msg, hint)}
	}
	if !c.HasParent() {
		if t, err := rules.Find(name); err == nil {
			// A target typed as a command.
			return usageError{fmt.Errorf("%s: to write the files %s needs (%s), run feedgen rules %s -o DIR", msg, t.Name, strings.Join(t.Files, ", "), t.Name)}
		}
	}
	if c.CommandPath() == "feedgen new" && strings.Contains(name, "/") {
		// Hugo's hugo new posts/x.md: the path without a kind.
		return usageError{fmt.Errorf("%s: to write a new article, run feedgen new article %s", msg, habit.ArticleArg(args))}
	}
	if c.SuggestionsMinimumDistance <= 0 {
		c.SuggestionsMinimumDistance = 2
	}
	if s := c.SuggestionsFor(name); len(s) > 0 {
		return usageError{fmt.Errorf("%s: did you mean %q?", msg, s[0])}
	}
	return usageError{errors.New(msg)}
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
