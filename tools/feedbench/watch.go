package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

// Targets of the watch benchmark.
const (
	targetEditSmall = 50 * time.Millisecond  // median at 1,000 articles
	targetEditLarge = 150 * time.Millisecond // median at 10,000 articles
	targetAddRatio  = 1.2                    // new article median / cold build
	// layout: chunks, an edit or a new article, up to 20,000 articles
	// and above.
	targetChunksSmall = 150 * time.Millisecond
	targetChunksLarge = 300 * time.Millisecond
)

// watchPlan is what one "feedbench watch" measures.
type watchPlan struct {
	feedgen string
	dir     string
	edits   int   // edits, and new articles, per site size
	sizes   []int // articles of each site
	chunks  bool  // layout: chunks, every filter
}

// watchAbout is what "feedbench watch -h" says the command does.
const watchAbout = `For each site size: times 3 cold builds, then runs feedgen serve --watch and times, from the
write to the first answer that holds it, edits of the title of the first article and new
articles, which go first in every collection they join.
  -layout pages (limits [20], offsets all, no filters): target median for an edit <= 50ms up
                to 1,000 articles, <= 150ms above; for a new article (every page shifts)
                <= 1.2x the cold build's.
  -layout chunks (limits [20 50 100], every filter): target median for an edit and for a new
                article <= 150ms up to 20,000 articles, <= 300ms above.
`

// parseWatchFlags returns the plan the flags of "feedbench watch" ask for.
// Usage errors are printed to stderr before they are returned; -h returns
// flag.ErrHelp.
func parseWatchFlags(args []string, stderr io.Writer) (watchPlan, error) {
	c := newCommandLine("watch", stderr, "[-feedgen PATH] [-layout pages|chunks] [-edits N] [-sizes N,N] [-dir DIR]", "-layout chunks -sizes 20000,100000", watchAbout)
	edits := c.Int("edits", 20, "edits (and new articles) per site size")
	sizes := c.String("sizes", "1000,10000", "site sizes, comma-separated")
	layout := c.String("layout", "pages", "`layout` of the sites: pages or chunks")
	if err := c.parse(args); err != nil {
		return watchPlan{}, err
	}
	plan := watchPlan{feedgen: c.feedgen, dir: c.dir, edits: *edits, chunks: *layout == "chunks"}
	if *layout != "pages" && *layout != "chunks" {
		return watchPlan{}, c.usageError("bad layout %q: want pages or chunks", *layout)
	}
	for _, s := range strings.Split(*sizes, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil || n <= 0 {
			return watchPlan{}, c.usageError("bad size %q", s)
		}
		plan.sizes = append(plan.sizes, n)
	}
	return plan, nil
}

// runWatch measures every site size of plan in a temporary folder and
// writes the report to out. It logs nothing.
func runWatch(ctx context.Context, plan watchPlan, out, _ io.Writer) (err error) {
	tmp, feedgen, err := workspace(ctx, "watch", plan.dir, plan.feedgen)
	if err != nil {
		return err
	}
	defer removeRoot(tmp, &err)
	var t tally
	for _, n := range plan.sizes {
		r, err := watchSize(ctx, feedgen, filepath.Join(tmp, strconv.Itoa(n)), plan.site(n), plan.edits)
		if err != nil {
			return fmt.Errorf("%d articles: %w", n, err)
		}
		if plan.chunks {
			target := targetChunksLarge
			if n <= 20000 {
				target = targetChunksSmall
			}
			for _, m := range []struct {
				what string
				ds   []time.Duration
			}{{"title edit visible ", r.edits}, {"new article visible", r.adds}} {
				fmt.Fprintf(out, "%6d articles  chunks  %s  median %s  max %s  (%d)   cold build median %s   target median <= %s %s\n",
					n, m.what, formatSeconds(median(m.ds)), formatSeconds(slicesMax(m.ds)), len(m.ds), formatSeconds(median(r.cold)), formatSeconds(target), t.verdict(median(m.ds) <= target))
			}
			continue
		}
		target := targetEditLarge
		if n <= 1000 {
			target = targetEditSmall
		}
		fmt.Fprintf(out, "%6d articles  title edit visible   median %s  max %s  (%d edits)   target median <= %s %s\n",
			n, formatSeconds(median(r.edits)), formatSeconds(slicesMax(r.edits)), len(r.edits), formatSeconds(target), t.verdict(median(r.edits) <= target))
		ra := ratio(median(r.adds), median(r.cold))
		fmt.Fprintf(out, "%6d articles  new article visible  median %s  max %s  (%d adds)    cold build median %s   ratio %.2f   target <= %.1f %s\n",
			n, formatSeconds(median(r.adds)), formatSeconds(slicesMax(r.adds)), len(r.adds), formatSeconds(median(r.cold)), ra, targetAddRatio, t.verdict(ra <= targetAddRatio))
	}
	fmt.Fprintln(out, t)
	return nil
}

// site is the site of n articles the plan measures.
func (plan watchPlan) site(n int) corpus.Options {
	if plan.chunks {
		return corpus.Options{Articles: n, Limits: scaleLimits, Offsets: listing.OffsetsAll, Layout: "chunks", Seed: 1, Filters: listing.FilterNames()}
	}
	return corpus.Options{Articles: n, Limits: []int{20}, Offsets: "all", Seed: 1}
}

func slicesMax(ds []time.Duration) time.Duration {
	var m time.Duration
	for _, d := range ds {
		m = max(m, d)
	}
	return m
}

type watchResult struct {
	edits, adds, cold []time.Duration
}

var titleRE = regexp.MustCompile(`(?m)^title: .*$`)
var publishedRE = regexp.MustCompile(`(?m)^published: .*$`)

// watchSize measures one site size: cold builds for reference, then a
// preview server with edits and new articles timed from the write to the
// first answer that holds them.
func watchSize(ctx context.Context, feedgen, dir string, opt corpus.Options, edits int) (watchResult, error) {
	var r watchResult
	n := opt.Articles
	if _, err := corpus.Write(dir, opt); err != nil {
		return r, err
	}
	cfg := filepath.Join(dir, corpus.ConfigPath)
	for range 3 {
		cold := filepath.Join(dir, "cold")
		os.RemoveAll(cold)
		if err := syncDisk(ctx); err != nil {
			return r, err
		}
		m, err := run(ctx, dir, feedgen, "build", "-q", "--config", cfg, "--out", cold)
		if err != nil {
			return r, err
		}
		r.cold = append(r.cold, m.wall)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return r, err
	}
	addr := ln.Addr().String()
	ln.Close()
	cmd := exec.CommandContext(ctx, feedgen, "serve", "--watch", "--config", cfg, "--addr", addr)
	cmd.Dir = dir
	var logs strings.Builder
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		cmd.Process.Signal(syscall.SIGINT)
		cmd.Wait()
	}()
	base := "http://" + addr + "/articles/"
	client := &http.Client{Timeout: 10 * time.Second}
	if err := waitFor(ctx, 5*time.Minute, func() bool { _, err := fetch(client, base); return err == nil }); err != nil {
		return r, fmt.Errorf("preview did not start: %v\n%s", err, logs.String())
	}
	for k := range edits {
		body, err := fetch(client, base)
		if err != nil {
			return r, err
		}
		path, err := topArticle(dir, body)
		if err != nil {
			return r, err
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return r, err
		}
		marker := fmt.Sprintf("Edited title %d %d", k, time.Now().UnixNano())
		data = titleRE.ReplaceAll(data, []byte(`title: "`+marker+`"`))
		start := time.Now()
		if err := os.WriteFile(path, data, 0o644); err != nil {
			return r, err
		}
		if err := waitFor(ctx, 30*time.Second, func() bool { b, _ := fetch(client, base); return strings.Contains(b, marker) }); err != nil {
			return r, fmt.Errorf("edit %d not visible: %v\n%s", k, err, logs.String())
		}
		r.edits = append(r.edits, time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	for k := range edits {
		path, data := corpus.Article(opt, n+k)
		// Newer than every generated article, and not in the future: it
		// goes first and shifts every page.
		data = publishedRE.ReplaceAll(data, []byte(fmt.Sprintf(`published: "2026-01-01T00:%02d:%02d"`, k/60, k%60)))
		name := filepath.Join(dir, filepath.FromSlash(path))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			return r, err
		}
		want := fmt.Sprintf(`"count":%d,`, n+k+1)
		start := time.Now()
		if err := os.WriteFile(name, data, 0o644); err != nil {
			return r, err
		}
		if err := waitFor(ctx, 60*time.Second, func() bool { b, _ := fetch(client, base); return strings.HasPrefix(b, "{"+want) }); err != nil {
			return r, fmt.Errorf("new article %d not visible: %v\n%s", k, err, logs.String())
		}
		r.adds = append(r.adds, time.Since(start))
		time.Sleep(50 * time.Millisecond)
	}
	return r, nil
}

func fetch(c *http.Client, u string) (string, error) {
	resp, err := c.Get(u)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("status %d", resp.StatusCode)
	}
	return string(b), nil
}

// waitFor polls f every millisecond until it is true or the time is up.
func waitFor(ctx context.Context, limit time.Duration, f func() bool) error {
	deadline := time.Now().Add(limit)
	for !f() {
		if time.Now().After(deadline) {
			return errors.New("timed out")
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
	return nil
}

// topArticle returns the source file of the first article of a page.
func topArticle(dir, page string) (string, error) {
	var p struct {
		Results []struct {
			URL string `json:"url"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(page), &p); err != nil || len(p.Results) == 0 {
		return "", fmt.Errorf("reading the first page: %v", err)
	}
	u, err := url.Parse(p.Results[0].URL)
	if err != nil {
		return "", err
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 3 {
		return "", fmt.Errorf("unexpected article URL %s", p.Results[0].URL)
	}
	return filepath.Join(dir, "content", parts[0], parts[1], parts[2]+".md"), nil
}
