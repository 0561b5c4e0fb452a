package main

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/testfiles"
)

func TestParseScaleFlags(t *testing.T) {
	wrk := wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 3}
	quick := wrkPlan{duration: 2 * time.Second, warmup: time.Second, threads: 2, connections: 64, rounds: 1}
	tests := []struct {
		args    []string
		want    scalePlan
		wantErr bool
	}{
		{nil, scalePlan{articles: 10_000, buildArticles: 1_000_000, buildRuns: 6, seed: 1, parts: "abc", layout: "pages", wrkPlan: wrk}, false},
		{[]string{"-quick"}, scalePlan{articles: 1_000, buildArticles: 20_000, buildRuns: 3, seed: 1, parts: "abc", layout: "pages", wrkPlan: quick, quick: true}, false},
		{[]string{"-parts", "a", "-articles", "500"}, scalePlan{articles: 500, buildArticles: 1_000_000, buildRuns: 6, seed: 1, parts: "a", layout: "pages", wrkPlan: wrk}, false},
		{[]string{"-parts", "c"}, scalePlan{articles: 10_000, buildArticles: 1_000_000, buildRuns: 6, seed: 1, parts: "c", layout: "pages", wrkPlan: wrk}, false},
		{[]string{"-parts", "ac"}, scalePlan{articles: 10_000, buildArticles: 1_000_000, buildRuns: 6, seed: 1, parts: "ac", layout: "pages", wrkPlan: wrk}, false},
		{[]string{"-parts", "b", "-build-articles", "50000", "-build-runs", "5"}, scalePlan{articles: 10_000, buildArticles: 50_000, buildRuns: 5, seed: 1, parts: "b", layout: "pages", wrkPlan: wrk}, false},
		{[]string{"-quick", "-build-articles", "50000"}, scalePlan{articles: 1_000, buildArticles: 50_000, buildRuns: 3, seed: 1, parts: "abc", layout: "pages", wrkPlan: quick, quick: true}, false},
		{[]string{"-parts", "d"}, scalePlan{}, true},
		{[]string{"-parts", "ab-"}, scalePlan{}, true},
		{[]string{"-parts", ""}, scalePlan{}, true},
		{[]string{"-articles", "5"}, scalePlan{}, true},
		{[]string{"-build-articles", "999"}, scalePlan{}, true},
		{[]string{"-build-runs", "0"}, scalePlan{}, true},
		{[]string{"extra"}, scalePlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseScaleFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	const status = "Name:\tfeedgen\nVmHWM:\t  2528212 kB\nVmRSS:\t  2524868 kB\nRssAnon:\t   56416 kB\nRssFile:\t 2468452 kB\nRssShmem:\t       0 kB\n"
	got, err := parseProcStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	want := procMemory{rss: 2524868 << 10, anon: 56416 << 10, file: 2468452 << 10, shmem: 0, hwm: 2528212 << 10}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStatus([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without RssAnon was read")
	}
	if _, err := readProcStatus(os.Getpid()); err != nil {
		t.Errorf("reading this process's status: %v", err)
	}
}

func TestScaleTargets(t *testing.T) {
	got := scaleTargets(3, []int{20, 50}, 1)
	if len(got) != 6 {
		t.Fatalf("got %d targets, want 6", len(got))
	}
	want := []string{
		"/articles/?limit=20&offset=0", "/articles/?limit=20&offset=1", "/articles/?limit=20&offset=2",
		"/articles/?limit=50&offset=0", "/articles/?limit=50&offset=1", "/articles/?limit=50&offset=2",
	}
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, want) {
		t.Errorf("got %q, want every page once", sorted)
	}
	if long := scaleTargets(100, []int{20}, 1); slices.IsSorted(long) || slices.Equal(long, scaleTargets(100, []int{20}, 2)) {
		t.Error("the targets are not shuffled by the seed")
	}
	if e := outputEstimate(10_000, scaleLimits); e < 2e9 || e > 3e9 {
		t.Errorf("estimate %d bytes for the 2.4 GB output", e)
	}
}

// TestNginxWrapper runs the wrapper of a fake nginx that prints its
// limit: the conf is edited to half the limit when the limit could not be
// raised above 40,000, and left as it is otherwise.
func TestNginxWrapper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake nginx")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nulimit -n\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte("http { open_file_cache max=20000 inactive=60s; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := nginxWrapper(dir, fake, 65536)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script, "-p", dir, "-c", conf).Output()
	if err != nil {
		t.Fatal(err)
	}
	limit := strings.TrimSpace(string(out))
	data, _ := os.ReadFile(conf)
	want := "20000"
	if n, err := strconv.Atoi(limit); err == nil && n/2 < 20000 {
		want = strconv.Itoa(n / 2)
	}
	if m := openFileCacheMax.FindSubmatch(data); m == nil || string(m[1]) != want {
		t.Errorf("limit %s: conf %q, want open_file_cache max=%s", limit, data, want)
	}
	if n, err := processNofile(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("processNofile: %d, %v", n, err)
	}
}

func TestScaleBuildSites(t *testing.T) {
	got := scaleBuildSites(1_000_000, 7)
	for i, want := range []int{100_000, 1_000_000} {
		opt := got[i]
		if opt.Articles != want || !slices.Equal(opt.Limits, []int{20, 50, 100}) || opt.Offsets != "aligned" || opt.Seed != 7 || len(opt.Filters) != 0 {
			t.Errorf("site %d: got %+v, want %d articles, limits [20 50 100], aligned, seed 7, no filters", i, opt, want)
		}
	}
	if got := scaleBuildSites(20_005, 1); got[0].Articles != 2_000 || got[1].Articles != 20_005 {
		t.Errorf("20005 articles: got sites of %d and %d, want 2000 and 20005", got[0].Articles, got[1].Articles)
	}
}

func TestScaleBuildRuns(t *testing.T) {
	tests := []struct {
		runs int
		want [2]int
	}{
		{1, [2]int{1, 1}},
		{2, [2]int{2, 1}},
		{3, [2]int{3, 1}},
		{4, [2]int{4, 2}},
		{5, [2]int{5, 2}},
	}
	for _, tt := range tests {
		if got := scaleBuildRuns(tt.runs); got != tt.want {
			t.Errorf("scaleBuildRuns(%d) = %v, want %v", tt.runs, got, tt.want)
		}
	}
}

func TestLinearRatio(t *testing.T) {
	s := time.Second
	tests := []struct {
		small, large   time.Duration
		nSmall, nLarge int
		want           float64
	}{
		{s, 10 * s, 100_000, 1_000_000, 1.0},
		{s, 12 * s, 100_000, 1_000_000, 1.2},
		{2 * s, 10 * s, 100_000, 1_000_000, 0.5},
		{s, 5 * s, 2_000, 20_005, 5 / 10.0025},
		{0, s, 100_000, 1_000_000, math.Inf(1)},
		{s, s, 0, 1_000_000, math.Inf(1)},
	}
	for _, tt := range tests {
		if got := linearRatio(tt.small, tt.large, tt.nSmall, tt.nLarge); got != tt.want && math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("linearRatio(%v, %v, %d, %d) = %v, want %v", tt.small, tt.large, tt.nSmall, tt.nLarge, got, tt.want)
		}
	}
}

func TestScaleEstimate(t *testing.T) {
	const margin = 256 << 20
	withMargin := func(n int64) int64 { return n + n/4 + margin }
	a, c := outputEstimate(10_000, scaleLimits), outputEstimate(10_000, []int{20})
	b := scaleBuildEstimate(1_000_000, 3)
	tests := []struct {
		parts string
		want  int64
	}{
		{"a", withMargin(a)},
		{"c", withMargin(c)},
		{"ac", withMargin(a + c)},
		{"b", withMargin(b)},
		{"abc", withMargin(max(a+c, b))},
	}
	for _, tt := range tests {
		plan := scalePlan{articles: 10_000, buildArticles: 1_000_000, buildRuns: 3, parts: tt.parts}
		if got := scaleEstimate(plan); got != tt.want {
			t.Errorf("-parts %s: got %d bytes, want %d", tt.parts, got, tt.want)
		}
	}
	// 1M articles of about 3 kB, and one output of 3 × 1M articles in
	// pages and its copy.
	if b < 12e9 || b > 16e9 {
		t.Errorf("estimate %s for the site of 1,000,000 articles and one output", formatBytes(b))
	}
	if more := scaleBuildEstimate(1_000_000, 4); more <= b {
		t.Errorf("two large outputs (-build-runs 4) need %d bytes, one %d", more, b)
	}
}

func TestCountPages(t *testing.T) {
	dir := t.TempDir()
	s := site{dir: dir, opt: scaleBuildSites(1_000, 1)[1]} // 50, 20 and 10 pages
	for _, limit := range []int{20, 50, 100} {
		for off := 0; off < 1_000; off += limit {
			testfiles.WriteFile(t, filepath.Join(s.public(), "articles", strconv.Itoa(limit), strconv.Itoa(off)+".json"), "{}")
		}
	}
	testfiles.WriteFile(t, filepath.Join(s.public(), "articles", "index.json"), "{}")
	testfiles.WriteFile(t, filepath.Join(s.public(), "articles", "20", "notes.txt"), "")
	if err := os.Mkdir(filepath.Join(s.public(), "articles", "50", "dir.json"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got, want, err := countPages(s); err != nil || got != 80 || want != 80 {
		t.Errorf("got %d pages, want %d, %v; want 80 and 80", got, want, err)
	}
	if err := os.Remove(filepath.Join(s.public(), "articles", "100", "900.json")); err != nil {
		t.Fatal(err)
	}
	if got, want, err := countPages(s); err != nil || got != 79 || want != 80 {
		t.Errorf("one page removed: got %d pages, want %d, %v; want 79 and 80", got, want, err)
	}
	if got, want, err := countPages(site{dir: t.TempDir(), opt: s.opt}); err != nil || got != 0 || want != 80 {
		t.Errorf("no output: got %d pages, want %d, %v; want 0 and 80", got, want, err)
	}
}

// TestSettle checks when settle waits, without waiting: a wait is cut short
// by a canceled context.
func TestSettle(t *testing.T) {
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	now := time.Now()
	tests := []struct {
		name     string
		removed  time.Time
		quick    bool
		wantWait bool
	}{
		{"nothing removed", time.Time{}, false, false},
		{"removed long ago", now.Add(-2 * recentlyFreed), false, false},
		{"removed just now", now, false, true},
		{"removed just now, quick", now, true, false},
	}
	for _, tt := range tests {
		var out strings.Builder
		b := &scaleBench{plan: scalePlan{quick: tt.quick}, out: &out, removed: tt.removed}
		err := b.settle(canceled)
		if gotWait := err != nil; gotWait != tt.wantWait || gotWait != (out.Len() > 0) {
			t.Errorf("%s: got %v, %q; want a wait %v", tt.name, err, out.String(), tt.wantWait)
		}
	}
}

func TestRemove(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	testfiles.WriteFile(t, filepath.Join(a, "x", "y"), "y")
	testfiles.WriteFile(t, filepath.Join(b, "z"), "z")
	sb := &scaleBench{}
	before := time.Now()
	if err := sb.remove(context.Background(), a, b, filepath.Join(dir, "none")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{a, b} {
		if _, err := os.Stat(d); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("%s: got %v, want it removed", d, err)
		}
	}
	if sb.removed.Before(before) {
		t.Errorf("removed at %v, before the call at %v", sb.removed, before)
	}
}

func TestSetOutputDir(t *testing.T) {
	dir := t.TempDir()
	config := filepath.Join(dir, "config.yaml")
	testfiles.WriteFile(t, config, corpus.Config(corpus.Options{Articles: 1}))
	if err := setOutputDir(config, "/disk/out"); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(config)
	if err != nil {
		t.Fatal(err)
	}
	if got := string(data); !strings.Contains(got, "\noutput_dir: /disk/out\n") || strings.Contains(got, "output_dir: public") {
		t.Errorf("got config\n%s\nwant output_dir: /disk/out", got)
	}
	if err := setOutputDir(config, "/again"); err == nil {
		t.Error("a config without output_dir: public: got no error")
	}
}
