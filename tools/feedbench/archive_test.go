package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/testfiles"
)

func TestParseArchiveFlags(t *testing.T) {
	t.Setenv("FEEDGEN_VERSITYGW", "/opt/versitygw")
	wrk := wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 3}
	quickWrk := wrkPlan{duration: 2 * time.Second, warmup: time.Second, threads: 2, connections: 64, rounds: 1}
	full := archivePlan{articles: 1_000_000, reference: 10_000, seed: 1, versitygw: "/opt/versitygw", changes: 3, edge: true, wrkPlan: wrk}
	quick := archivePlan{articles: 2_000, reference: 1_000, seed: 1, versitygw: "/opt/versitygw", changes: 1, edge: true, wrkPlan: quickWrk, quick: true}
	with := func(p archivePlan, f func(*archivePlan)) archivePlan { f(&p); return p }
	tests := []struct {
		args    []string
		want    archivePlan
		wantErr bool
	}{
		{nil, full, false},
		{[]string{"-quick"}, quick, false},
		{[]string{"-quick", "-articles", "20000", "-changes", "2"}, with(quick, func(p *archivePlan) { p.articles, p.changes = 20_000, 2 }), false},
		{[]string{"-articles", "100000", "-reference", "5000", "-edge=false", "-versitygw", "gw", "-dir", "/big"},
			with(full, func(p *archivePlan) {
				p.articles, p.reference, p.edge, p.versitygw, p.dir = 100_000, 5_000, false, "gw", "/big"
			}), false},
		{[]string{"-articles", "99"}, archivePlan{}, true},
		{[]string{"-reference", "5"}, archivePlan{}, true},
		{[]string{"-changes", "0"}, archivePlan{}, true},
		{[]string{"-changes", "51"}, archivePlan{}, true},
		{[]string{"-rounds", "0"}, archivePlan{}, true},
		{[]string{"extra"}, archivePlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseArchiveFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
	var help bytes.Buffer
	if _, err := parseArchiveFlags([]string{"-h"}, &help); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
	// The help names what is measured and every goal.
	for _, want := range []string{"versitygw", "file://", "nginx-njs", "<= 5s and <= 500 MB", "<= 1 GB", "<= 1 MB", "<= 200 MB", "<= 2s", ">= 1.0x", "*.leaf.json"} {
		if !strings.Contains(help.String(), want) {
			t.Errorf("-h does not say %q:\n%s", want, help.String())
		}
	}
}

func TestArchiveEstimate(t *testing.T) {
	disk := archiveEstimate(1_000_000, 10_000, false)
	mem := archiveEstimate(1_000_000, 10_000, true)
	// The content (5 GB on disk), the output and two buckets (10 GB each).
	if disk < 35e9 || disk > 45e9 {
		t.Errorf("content on disk: %s for a million articles, want about 35 GB and a margin", formatBytes(disk))
	}
	if mem >= disk || disk-mem < 5e9 {
		t.Errorf("content in memory: %s, on disk %s: want about 5 GB less", formatBytes(mem), formatBytes(disk))
	}
}

func TestFileKind(t *testing.T) {
	sum := strings.Repeat("ab", 32)
	tests := []struct{ path, want string }{
		{"manifest.json", kindManifest},
		{".feedgen-chunk-inputs", kindState},
		{".feedgen-cache/parsed/00", kindState},
		{chunk.Dir + "/ab/" + sum + ".json", kindChunk},
		{chunk.Dir + "/ab/" + sum + ".leaf.json", kindLeaf},
		{"articles/chunks.json", kindRoot},
		{"articles/tag/go/chunks.json", kindRoot},
		{"articles/index.json", kindOther},
		{"articles/20/0.json", kindOther},
		{chunk.Dir + "/ab/short.json", kindOther},
		{"notes.txt", kindOther},
	}
	for _, tt := range tests {
		if got := fileKind(tt.path); got != tt.want {
			t.Errorf("fileKind(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

func TestOutputStats(t *testing.T) {
	sum := func(c string) string { return chunk.Dir + "/" + c + c + "/" + strings.Repeat(c, 64) }
	files := map[string]fileState{
		sum("a") + ".json":           {size: 100},
		sum("b") + ".json":           {size: 300},
		sum("c") + ".leaf.json":      {size: 50},
		"articles/chunks.json":       {size: 40},
		"articles/tag/x/chunks.json": {size: 20},
		"manifest.json":              {size: 7},
		".feedgen-chunk-inputs":      {size: 9},
	}
	st := statsOf(files, slices.Collect(maps.Keys(files)))
	if f, n := st.total(); f != 7 || n != 526 {
		t.Errorf("total %d files, %d bytes; want 7, 526", f, n)
	}
	want := "7 files, 526 B: chunks 2, 400 B (mean 200 B, largest 300 B); leaves 1, 50 B (mean 50 B, largest 50 B); " +
		"root indexes 2, 60 B (the largest articles/chunks.json, 40 B); manifest.json 7 B; state 1, 9 B (the largest .feedgen-chunk-inputs, 9 B)"
	if got := st.String(); got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	// Format 2: indexes and no leaf says so; a set without indexes (what
	// a build deleted) does not.
	noLeaf := statsOf(files, []string{sum("a") + ".json", "articles/chunks.json"})
	if got := noLeaf.String(); !strings.Contains(got, "leaves none (no *.leaf.json)") {
		t.Errorf("no leaf: %s", got)
	}
	if got := statsOf(files, []string{sum("a") + ".json"}).String(); strings.Contains(got, "leaves") {
		t.Errorf("chunks only: %s", got)
	}
	if got := statsOf(files, nil).String(); got != "no file" {
		t.Errorf("nothing: %q", got)
	}
}

func TestCheckBucket(t *testing.T) {
	sum := strings.Repeat("cd", 32)
	build := map[string]string{
		"manifest.json":                           `{"m":1}`,
		"articles/chunks.json":                    "index",
		chunk.Dir + "/cd/" + sum + ".json":        "[chunk]",
		chunk.Dir + "/cd/" + sum + ".leaf.json":   "leaf",
		".feedgen-chunk-inputs":                   "state, never published",
		".feedgen-unfinished/x":                   "",
		"articles/tag/go/chunks.json":             "tag index",
		chunk.Dir + "/cd/" + sum[:60] + "aa.json": "[other chunk]",
	}
	published := func() map[string]string {
		m := map[string]string{".feedgen-publish-lock": "lock"}
		for p, data := range build {
			if !strings.HasPrefix(p, ".") {
				m[p] = data
			}
		}
		return m
	}
	old := chunk.Dir + "/ef/" + strings.Repeat("ef", 32)
	tests := []struct {
		name   string
		change func(m map[string]string)
		extra  int
		err    string
	}{
		{"the build", func(map[string]string) {}, 0, ""},
		{"publish's record", func(m map[string]string) { m[publish.KeptName] = "{}" }, 0, ""},
		{"a chunk and a leaf kept", func(m map[string]string) { m[old+".json"], m[old+".leaf.json"] = "[old]", "old leaf" }, 2, ""},
		{"a file missing", func(m map[string]string) { delete(m, "articles/tag/go/chunks.json") }, 0, "articles/tag/go/chunks.json is missing"},
		{"another size", func(m map[string]string) { m["articles/chunks.json"] = "index!" }, 0, "articles/chunks.json has 6 bytes, the build's 5"},
		{"a stranger", func(m map[string]string) { m["articles/20/0.json"] = "{}" }, 0, "articles/20/0.json is not in the build"},
		{"an old index", func(m map[string]string) { m["articles/tag/old/chunks.json"] = "{}" }, 0, "articles/tag/old/chunks.json is not in the build"},
		{"the manifest's bytes", func(m map[string]string) { m["manifest.json"] = `{"m":2}` }, 0, "manifest.json has other bytes"},
	}
	dir := t.TempDir()
	public := filepath.Join(dir, "public")
	testfiles.Write(t, public, build)
	for i, tt := range tests {
		bucket := filepath.Join(dir, "bucket", string(rune('a'+i)))
		m := published()
		tt.change(m)
		testfiles.Write(t, bucket, m)
		extra, err := checkBucket(public, bucket)
		if tt.err == "" && (err != nil || extra != tt.extra) || tt.err != "" && (err == nil || err.Error() != tt.err) {
			t.Errorf("%s: got %d, %v; want %d, %q", tt.name, extra, err, tt.extra, tt.err)
		}
	}
}

// TestWriteCorpus: the site is corpus.Write's, byte for byte, and a
// canceled context stops it.
func TestWriteCorpus(t *testing.T) {
	opt := corpus.Options{Articles: 120, Limits: scaleLimits, Layout: "chunks", Seed: 3, Filters: listing.FilterNames()}
	dir := t.TempDir()
	mine, theirs := filepath.Join(dir, "mine"), filepath.Join(dir, "theirs")
	n, err := writeCorpus(context.Background(), mine, opt)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := corpus.Write(theirs, opt); err != nil {
		t.Fatal(err)
	}
	var markdown int64
	for i := range opt.Articles {
		_, data := corpus.Article(opt, i)
		markdown += int64(len(data))
	}
	if n != markdown {
		t.Errorf("%d bytes of markdown, want %d", n, markdown)
	}
	read := func(root string) map[string]string {
		files := map[string]string{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			files[rel] = string(data)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return files
	}
	got, want := read(mine), read(theirs)
	if len(got) != opt.Articles+1 || len(got) != len(want) {
		t.Fatalf("%d files, corpus.Write %d, want %d", len(got), len(want), opt.Articles+1)
	}
	for p, data := range want {
		if got[p] != data {
			t.Errorf("%s differs from corpus.Write's", p)
		}
	}
	if !strings.Contains(got[corpus.ConfigPath], "layout: \"chunks\"") {
		t.Errorf("config without layout chunks:\n%s", got[corpus.ConfigPath])
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := writeCorpus(ctx, filepath.Join(dir, "canceled"), corpus.Options{Articles: 100_000}); !errors.Is(err, context.Canceled) {
		t.Errorf("canceled: got %v, want context.Canceled", err)
	}
}

// TestNewArticleFrom: successive new articles are new (not the corpus's),
// distinct, each published at its time.
func TestNewArticleFrom(t *testing.T) {
	opt := corpus.Options{Articles: 500, Seed: 2, Filters: listing.FilterNames()}
	first, err := newArticle(opt)
	if err != nil {
		t.Fatal(err)
	}
	next := 0 // below opt.Articles: starts there
	seen := map[string]bool{}
	for k, at := range []string{"2026-01-01T00:00:00", "2026-01-01T00:01:00", "2026-01-01T00:02:00"} {
		var a editTarget
		if a, next, err = newArticleFrom(opt, next, at); err != nil {
			t.Fatal(err)
		}
		if k == 0 && a.id != first.id {
			t.Errorf("the first is article %d, newArticle's %d", a.id, first.id)
		}
		if a.id <= opt.Articles || a.tags < 3 || a.author == "" || seen[a.path] || next != a.id {
			t.Errorf("article %d: got %v at %s, next %d", k, a, a.path, next)
		}
		seen[a.path] = true
		if !bytes.Contains(a.data, []byte("\npublished: \""+at+"\"\n")) {
			t.Errorf("article %d not published at %s:\n%s", k, at, a.data)
		}
	}
}

func TestRunsFigure(t *testing.T) {
	s := time.Second
	one := summarize([]measurement{{wall: 2 * s, rss: 5_000_000}})
	if got := one.String(); got != "2.000s, 5.0 MB" {
		t.Errorf("one run: %q", got)
	}
	three := summarize([]measurement{{wall: 3 * s, rss: 1}, {wall: s, rss: 7_000_000}, {wall: 2 * s, rss: 2}})
	if three.median != 2*s || three.rss != 7_000_000 {
		t.Errorf("three runs: %+v", three)
	}
	if got := three.String(); got != "2.000s (1.000s-3.000s), 7.0 MB" {
		t.Errorf("three runs: %q", got)
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 20_000: "20,000", 1_000_000: "1,000,000", -1234: "-1,234"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

// archiveSmoke is the variable that runs the whole benchmark in
// TestArchive: go build of feedgen, two small sites, versitygw, and with
// nginx, njs and wrk installed the edge: about a minute on 2 cores, too
// long for make test. FEEDBENCH_ARCHIVE=1 go test -run TestArchive
// ./tools/feedbench (versitygw found as feedbench finds it).
const archiveSmoke = "FEEDBENCH_ARCHIVE"

// TestArchive runs feedbench archive at 300 articles, a reference of
// 150 and two changes: every row of the table is there, every goal met
// (at that size), and nothing is left in -dir.
func TestArchive(t *testing.T) {
	if os.Getenv(archiveSmoke) == "" {
		t.Skipf("set %s=1 to run the whole benchmark on small sites (about a minute)", archiveSmoke)
	}
	dir := t.TempDir()
	args := []string{"archive", "-articles", "300", "-reference", "150", "-changes", "2", "-dir", dir, "-duration", "1s", "-warmup", "1s", "-rounds", "1"}
	_, wrkErr := exec.LookPath("wrk")
	_, njsErr := os.Stat(njsModule)
	if wrkErr != nil || njsErr != nil {
		t.Logf("no wrk or no %s: without the edge", njsModule)
		args = append(args, "-edge=false")
	}
	var stdout bytes.Buffer
	var stderr lineWatcher // the servers' output is copied to it from goroutines
	if code := Run(context.Background(), args, &stdout, &stderr); code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{
		"one new article (the newest), 2 in turn", "150 articles", "300 articles", "goal at 1,000,000",
		"feedgen build after it (output and state present)", "the cold build before them",
		"bytes publish uploads (to versitygw, the proxy's count)", "publish to versitygw after it",
		"publish of an unchanged build, to versitygw", "publish of an unchanged build, to file://",
		"publish to a file:// bucket after a change", "edge, nginx-njs",
		"output of the archive (300 articles, cold build)", "root indexes", "the largest articles/chunks.json",
		"targets: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the report does not say %q:\n%s", want, out)
		}
	}
	// At this size every goal but the edge's (a draw between two tiny
	// sites) is met by far.
	for line := range strings.SplitSeq(out, "\n") {
		if strings.HasSuffix(line, "MISSED") && !strings.HasPrefix(line, "edge") && !strings.HasPrefix(line, "targets:") {
			t.Errorf("missed at 300 articles: %s", line)
		}
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left in -dir: %v", left)
	}
}

// TestArchiveInterrupted cancels the benchmark once the archive's cold
// build has started: it stops within seconds, says why, and leaves
// nothing in -dir nor in /dev/shm.
func TestArchiveInterrupted(t *testing.T) {
	if os.Getenv(archiveSmoke) == "" {
		t.Skipf("set %s=1 to run the whole benchmark on small sites", archiveSmoke)
	}
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var stdout lineWatcher
	stdout.match, stdout.seen = "archive: 20000 articles", cancel
	var stderr lineWatcher
	var canceledAt time.Time
	done := make(chan int)
	go func() {
		done <- Run(ctx, []string{"archive", "-articles", "20000", "-reference", "100", "-changes", "1", "-edge=false", "-dir", dir}, &stdout, &stderr)
	}()
	select {
	case <-ctx.Done():
		canceledAt = time.Now()
	case code := <-done:
		t.Fatalf("exit %d before the archive's build\n%s", code, stderr.String())
	}
	code := <-done
	if took := time.Since(canceledAt); took > 10*time.Second {
		t.Errorf("stopped %s after the cancel", took)
	}
	if code != 1 || !strings.Contains(stderr.String(), "context canceled") && !strings.Contains(stderr.String(), "killed") {
		t.Errorf("exit %d, stderr:\n%s", code, stderr.String())
	}
	if left, _ := os.ReadDir(dir); len(left) > 0 {
		t.Errorf("left in -dir: %v", left)
	}
	if shm, _ := filepath.Glob("/dev/shm/feedbench-archive-*"); len(shm) > 0 {
		t.Logf("in /dev/shm (maybe another run's): %v", shm)
	}
}

// lineWatcher is an io.Writer that calls seen once when what is written
// to it contains match (none when match is empty), safe for several
// goroutines.
type lineWatcher struct {
	mu    sync.Mutex
	buf   bytes.Buffer
	match string
	seen  func()
	done  bool
}

func (w *lineWatcher) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if !w.done && w.match != "" && strings.Contains(w.buf.String(), w.match) {
		w.done = true
		w.seen()
	}
	return len(p), nil
}

func (w *lineWatcher) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}
