package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/scaffold"
	"github.com/spf13/cobra"
)

// newOptions are the options of feedgen new site and new article.
type newOptions struct {
	*globalOptions
	arg    string // the folder of the site, or SECTION/CATEGORY/SLUG
	config string // new article: the site's config, or its folder
	set    func(flag string) bool

	// new article's front matter: "" and none for the defaults.
	title, author string
	tags          []string
}

func (o *newOptions) check() error { return nil }

// runNewSite writes a new site and says what to do next.
func runNewSite(_ context.Context, o *newOptions) error {
	files, err := scaffold.Site(o.arg, time.Now())
	if err != nil {
		return err
	}
	for _, f := range files {
		fmt.Fprintln(o.stdout, f)
	}
	fmt.Fprintf(o.stderr, "a new site in %s: cd %s && feedgen serve --watch previews it, feedgen build writes it\n", o.arg, o.arg)
	return nil
}

// runNewArticle writes a new draft article and prints its path.
func runNewArticle(ctx context.Context, o *newOptions) error {
	cfg, err := loadSite(o.config, o.set("config"))
	if err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	now, err := buildTime(o.getenv)
	if err != nil {
		return err
	}
	w, err := scaffold.Article(ctx, cfg, scaffold.NewArticle{Path: o.arg, Title: o.title, Author: o.author, Tags: o.tags}, now())
	if err != nil {
		return err
	}
	p := w.Path
	if abs, err := filepath.Abs(p); err == nil {
		if rel, err := filepath.Rel(cwd, abs); err == nil {
			p = rel
		}
	}
	fmt.Fprintln(o.stdout, p)
	if note := w.Note(); note != "" {
		fmt.Fprintln(o.stderr, note)
	}
	return nil
}

func newNewCmd(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "new",
		Short: "Start a site, or an article in one",
		Long: `New starts what you then edit: a site (config.yaml, one section, one
article, a .gitignore for the build), or an article of the site, as a draft
with the next free id and published now.`,
		Example: `  feedgen new site mysite && cd mysite
  feedgen new article news/general/budget-vote`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) > 0 {
				return unknownCommand(cmd, args)
			}
			return cmd.Help()
		},
	}
	one := func(what string) cobra.PositionalArgs {
		return func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one %s, got %d arguments", cmd.CommandPath(), what, len(args))}
			}
			return nil
		}
	}
	site := &newOptions{globalOptions: g}
	siteCmd := &cobra.Command{
		Use:     "site DIR",
		Short:   "Write a new site into an empty or new folder",
		Example: "  feedgen new site mysite && cd mysite && feedgen serve --watch",
		Args:    one("folder"),
		RunE: func(cmd *cobra.Command, args []string) error {
			site.arg, site.set = args[0], cmd.Flags().Changed
			return checkRun(cmd.Context(), site, runNewSite)
		},
	}
	art := &newOptions{globalOptions: g}
	articleCmd := &cobra.Command{
		Use:   "article SECTION/CATEGORY/SLUG",
		Short: "Write a new draft article, with the next free id, published now",
		Long: `Article writes content/SECTION/CATEGORY/SLUG.md in the site: a draft (left
out of builds until you remove draft: true; feedgen build -D and serve --watch
-D show it), with the next free id, published now in the site's time zone
(SOURCE_DATE_EPOCH sets now), and its title from the slug, as Hugo does
(my-great-story: My great story), or --title. Its author is --author, or the
first of config.yaml's authors by key, which it names. It prints the file's
path and opens nothing.`,
		Example: `  feedgen new article news/general/budget-vote   # title: Budget vote
  feedgen new article news/general/election-night --title "Election: night" --author editor --tags elections,city`,
		Args:              one("SECTION/CATEGORY/SLUG"),
		ValidArgsFunction: completeArticle(art),
		RunE: func(cmd *cobra.Command, args []string) error {
			art.arg, art.set = args[0], cmd.Flags().Changed
			return checkRun(cmd.Context(), art, runNewArticle)
		},
	}
	articleCmd.Flags().StringVar(&art.title, "title", "", "the article's title (default: from the slug)")
	articleCmd.Flags().StringVar(&art.author, "author", "", "the `key` of its author in config.yaml's authors (default: the first by key)")
	articleCmd.Flags().StringSliceVar(&art.tags, "tags", nil, "its tags, separated by commas")
	articleCmd.Flags().StringVarP(&art.config, "config", "c", "", "the site's config file, or its folder (default: config.yaml here or in the nearest folder above)")
	cmd.AddCommand(siteCmd, articleCmd)
	return cmd
}
