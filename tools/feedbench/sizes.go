package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/feed"
)

// sizesPlan is what one "feedbench sizes" measures.
type sizesPlan struct {
	dir      string
	seed     int64
	articles []int
}

// sizeCandidate is one pagination and filters a new site could start
// with.
type sizeCandidate struct {
	name    string
	limits  []int
	offsets string
	filters []string
	chunked bool
}

// sizeCandidates are the defaults feedgen new site could write: the one
// it wrote before (every offset of three limits, four filters) and what
// keeps a growing site's output in bounds.
func sizeCandidates() []sizeCandidate {
	all4 := []string{"section", "category", "tag", "author"}
	two := []string{"section", "category"}
	limits := []int{20, 50, 100}
	return []sizeCandidate{
		{"pages, offsets all, 4 filters (before)", limits, "all", all4, false},
		{"pages, offsets all, no filters", limits, "all", nil, false},
		{"pages, aligned, 4 filters", limits, "aligned", all4, false},
		{"pages, aligned, section+category", limits, "aligned", two, false},
		{"chunks, 4 filters", limits, "all", all4, true},
		{"chunks, section+category", limits, "all", two, true},
	}
}

const sizesAbout = `Measures, in process, the output size of each pagination a new site could start
with (feedgen new site's defaults), at each number of articles: a corpus of that many
articles is written and loaded once, and each candidate's output (pages, or chunks
and indexes) is sized as a build sizes it before writing (build.OutputSize), without
writing it. The sizes are what pagination.max_output_bytes (default 4 GiB) is
compared with.
`

func parseSizesFlags(args []string, stderr io.Writer) (sizesPlan, error) {
	c := newCommandLine("sizes", stderr, "[-articles 1000,10000,100000] [-dir DIR]", "", sizesAbout)
	counts := c.String("articles", "1000,10000,100000", "comma-separated `numbers` of articles")
	c.seedFlag()
	if err := c.parse(args); err != nil {
		return sizesPlan{}, err
	}
	plan := sizesPlan{dir: c.dir, seed: c.seed}
	for _, s := range strings.Split(*counts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			fmt.Fprintf(stderr, "feedbench sizes: -articles %q: want positive numbers, e.g. 1000,10000\n", *counts)
			return sizesPlan{}, fmt.Errorf("bad -articles")
		}
		plan.articles = append(plan.articles, n)
	}
	return plan, nil
}

func runSizes(ctx context.Context, plan sizesPlan, stdout, stderr io.Writer) error {
	cands := sizeCandidates()
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprint(tw, "candidate\t")
	for _, n := range plan.articles {
		fmt.Fprintf(tw, "%d articles\t", n)
	}
	fmt.Fprintln(tw)
	rows := make([][]string, len(cands))
	for _, n := range plan.articles {
		start := time.Now()
		sizes, err := measureSizesAt(ctx, plan, n, cands)
		if err != nil {
			return err
		}
		for i, s := range sizes {
			rows[i] = append(rows[i], s)
		}
		fmt.Fprintf(stderr, "%d articles measured in %s\n", n, time.Since(start).Round(time.Second))
	}
	for i, c := range cands {
		fmt.Fprintf(tw, "%s\t%s\t\n", c.name, strings.Join(rows[i], "\t"))
	}
	return tw.Flush()
}

// measureSizesAt writes a corpus of n articles and returns, for each
// candidate, its output's bytes and files.
func measureSizesAt(ctx context.Context, plan sizesPlan, n int, cands []sizeCandidate) ([]string, error) {
	dir, err := os.MkdirTemp(plan.dir, "feedbench-sizes-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	base := corpus.Options{Articles: n, Seed: plan.seed, Limits: []int{20, 50, 100}}
	if _, err := corpus.Write(dir, base); err != nil {
		return nil, err
	}
	cfg, err := config.Parse(corpus.ConfigPath, dir, corpus.Config(base))
	if err != nil {
		return nil, err
	}
	site, err := content.NewLoader(cfg).Load(ctx, content.DirFS(cfg.ContentDir), content.Options{Now: time.Now(), Future: true, Root: cfg.ContentDir})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, c := range cands {
		opt := base
		opt.Limits, opt.Offsets, opt.Filters = c.limits, c.offsets, c.filters
		if c.chunked {
			opt.Layout = "chunks"
		}
		cc, err := config.Parse(corpus.ConfigPath, dir, corpus.Config(opt))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		l := feed.New(cc.BaseURL, cc.Pagination, cc.Filters, site.Articles)
		var pages []feed.Page
		if cc.Pagination.Layout != "chunks" {
			pages = l.Pages()
		}
		bytes, files := build.OutputSize(cc, l, pages)
		out = append(out, fmt.Sprintf("%s in %d files", formatBytes(bytes), files))
	}
	return out, nil
}
