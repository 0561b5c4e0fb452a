package main

import (
	"strings"

	"github.com/feedgen/feedgen/internal/rules"
	"github.com/feedgen/feedgen/internal/scaffold"
	"github.com/spf13/cobra"
)

// completeTarget completes the TARGET of feedgen rules from the table of
// targets, each with the files it writes.
func completeTarget(_ *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if len(args) > 0 {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, t := range rules.Targets() {
		if strings.HasPrefix(t.Name, toComplete) {
			out = append(out, cobra.CompletionWithDesc(t.Name, strings.Join(t.Files, ", ")))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// completeArticle completes the SECTION/CATEGORY/SLUG of new article from
// the sections of the site's config.yaml (--config's, or the one found
// as the command finds it), to the slug, which is new: no space after a
// section or category, and no file names.
func completeArticle(o *newOptions) cobra.CompletionFunc {
	return func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
		if len(args) > 0 {
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		cfg, err := loadSite(o.config, cmd.Flags().Changed("config"))
		if err != nil {
			cobra.CompErrorln(err.Error())
			return nil, cobra.ShellCompDirectiveNoFileComp
		}
		var out []cobra.Completion
		for _, c := range scaffold.ArticlePaths(cfg, toComplete) {
			out = append(out, cobra.CompletionWithDesc(c.Value, c.About))
		}
		return out, cobra.ShellCompDirectiveNoSpace | cobra.ShellCompDirectiveNoFileComp
	}
}
