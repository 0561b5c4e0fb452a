package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

func TestParseChunksFlags(t *testing.T) {
	tests := []struct {
		args    []string
		want    chunksPlan
		wantErr bool
	}{
		{nil, chunksPlan{articles: 20_000, runs: 5, seed: 1}, false},
		{[]string{"-quick"}, chunksPlan{articles: 1_000, runs: 1, seed: 1, quick: true}, false},
		{[]string{"-quick", "-runs", "2", "-articles", "300", "-publish", "-json"}, chunksPlan{articles: 300, runs: 2, seed: 1, publish: true, json: true, quick: true}, false},
		{[]string{"-articles", "5"}, chunksPlan{}, true},
		{[]string{"-runs", "0"}, chunksPlan{}, true},
		{[]string{"extra"}, chunksPlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseChunksFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
	var stderr bytes.Buffer
	if _, err := parseChunksFlags([]string{"-h"}, &stderr); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
}

// TestLayoutConfig reads the configs of the three layouts as feedgen does.
func TestLayoutConfig(t *testing.T) {
	dir := t.TempDir()
	for _, l := range chunksLayouts(100, 1) {
		data, err := layoutConfig(l.opt, l.chunked, l.Key)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := config.Parse(l.Key+".yaml", dir, data)
		if err != nil {
			t.Fatalf("%s: %v\n%s", l.Name, err, data)
		}
		pg := cfg.Pagination
		if (pg.Layout == "chunks") != l.chunked || pg.MaxLimit != 100 && l.Key != "pages1" || !reflect.DeepEqual(pg.Limits, l.opt.Limits) {
			t.Errorf("%s: pagination %+v", l.Name, pg)
		}
		if !l.chunked && pg.Offsets != listing.OffsetsAligned {
			t.Errorf("%s: offsets %q", l.Name, pg.Offsets)
		}
		if want := filepath.Join(dir, l.Key); cfg.OutputDir != want {
			t.Errorf("%s: output_dir %q, want %q", l.Name, cfg.OutputDir, want)
		}
		if len(cfg.Filters) != len(listing.FilterNames()) {
			t.Errorf("%s: filters %v", l.Name, cfg.Filters)
		}
	}
}

func TestChangedFiles(t *testing.T) {
	chunkA, chunkB := chunk.ChunkPath(sha256.Sum256([]byte("a"))), chunk.ChunkPath(sha256.Sum256([]byte("b")))
	prev := &buildManifest{raw: []byte("manifest 1"), Files: []manifestFile{
		{Path: "articles/chunks.json", Size: 100, SHA256: "i1"},
		{Path: chunkA, Size: 1000, SHA256: "a"},
		{Path: "articles/20/0.json", Size: 50, SHA256: "p0"},
		{Path: "articles/20/20.json", Size: 60, SHA256: "p20"},
	}}
	tests := []struct {
		name string
		next *buildManifest
		want upload
	}{
		{"unchanged", &buildManifest{raw: []byte("manifest 1"), Files: prev.Files}, upload{}},
		{"manifest only", &buildManifest{raw: []byte("manifest 22"), Files: prev.Files}, upload{files: 1, bytes: 11, manifest: 11}},
		{"new chunk, changed index, page gone", &buildManifest{raw: []byte("manifest 2"), Files: []manifestFile{
			{Path: "articles/chunks.json", Size: 120, SHA256: "i2"},
			{Path: chunkA, Size: 1000, SHA256: "a"},
			{Path: chunkB, Size: 2000, SHA256: "b"},
			{Path: "articles/20/0.json", Size: 50, SHA256: "p0"},
		}}, upload{files: 3, bytes: 120 + 2000 + 10, deleted: 1, manifest: 10, chunks: 1, chunkBytes: 2000}},
		{"same size, other bytes", &buildManifest{raw: []byte("manifest 3"), Files: []manifestFile{
			{Path: "articles/chunks.json", Size: 100, SHA256: "i1"},
			{Path: chunkA, Size: 1000, SHA256: "a"},
			{Path: "articles/20/0.json", Size: 50, SHA256: "p0'"},
			{Path: "articles/20/20.json", Size: 60, SHA256: "p20"},
		}}, upload{files: 2, bytes: 50 + 10, manifest: 10}},
	}
	for _, tt := range tests {
		if got := changedFiles(prev, tt.next); got != tt.want {
			t.Errorf("%s: got %+v, want %+v", tt.name, got, tt.want)
		}
	}
}

func TestManifestMismatch(t *testing.T) {
	m := &buildManifest{Files: []manifestFile{
		{Path: "articles/a.json", Size: 10},
		{Path: "articles/b.json", Size: 20},
		{Path: "articles/c.json", Size: 30},
	}}
	files := map[string]fileState{
		"manifest.json":         {size: 5},
		".feedgen-sources":      {size: 7},
		".feedgen-chunk-inputs": {size: 8},
		"articles/a.json":       {size: 10},
		"articles/b.json":       {size: 21},
		"articles/d.json":       {size: 40},
	}
	want := []string{"articles/b.json", "articles/c.json", "articles/d.json"}
	if got := manifestMismatch(files, m); !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	delete(files, "articles/d.json")
	files["articles/b.json"] = fileState{size: 20}
	files["articles/c.json"] = fileState{size: 30}
	if got := manifestMismatch(files, m); len(got) != 0 {
		t.Errorf("got %q for a manifest that matches", got)
	}
}

// TestArticleBytes writes the pages and the chunks of two collections
// and checks that both count their articles' bytes alike, and the first
// article of each.
func TestArticleBytes(t *testing.T) {
	articles := []string{`{"id":3,"title":"c"}`, `{"id":2,"title":"bb"}`, `{"id":1,"title":"ааа"}`}
	collections := []struct {
		dir string
		ids []int // of articles
	}{
		{"articles", []int{0, 1, 2}},
		{"articles/tag/x", []int{1}},
		{"articles/tag/empty", nil},
	}
	const limit = 2
	pages, chunks := t.TempDir(), t.TempDir()
	write := func(root, p string, data []byte) {
		t.Helper()
		name := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m := &buildManifest{}
	var want int64
	entries := 0
	for _, c := range collections {
		m.Collections = append(m.Collections, struct {
			Dir   string `json:"dir"`
			Count int    `json:"count"`
		}{c.dir, len(c.ids)})
		var results []string
		for _, i := range c.ids {
			results = append(results, articles[i])
			want += int64(len(articles[i]))
			entries++
		}
		for off := 0; off == 0 || off < len(results); off += limit {
			page := `{"count":` + strconv.Itoa(len(results)) + `,"next":null,"previous":null,"results":[` + strings.Join(results[off:min(off+limit, len(results))], ",") + "]}"
			write(pages, c.dir+"/"+strconv.Itoa(limit)+"/"+strconv.Itoa(off)+".json", []byte(page))
		}
		write(pages, c.dir+"/index.json", []byte(`{"count":0,"results":[`+strings.Join(results[:min(limit, len(results))], ",")+"]}"))
		// Chunks of one article, then of the rest.
		ix := chunk.Index{Count: len(results)}
		for _, cut := range [][]string{results[:min(1, len(results))], results[min(1, len(results)):]} {
			if len(cut) == 0 {
				continue
			}
			data := []byte("[" + strings.Join(cut, ",") + "]")
			r := chunk.Ref{Path: chunk.ChunkPath(sha256.Sum256(data)), Size: len(data)}
			end := 0
			for _, a := range cut {
				end += 1 + len(a)
				r.Ends = append(r.Ends, end)
			}
			write(chunks, r.Path, data)
			ix.Chunks = append(ix.Chunks, r)
		}
		root, leaves := chunktest.Tree(&ix)
		for p, d := range leaves {
			write(chunks, p, d)
		}
		write(chunks, chunk.IndexPath(c.dir), root)
	}
	for _, tt := range []struct {
		name string
		sum  func() (int64, int, error)
	}{
		{"pages", func() (int64, int, error) { return pageArticleBytes(pages, m, limit) }},
		{"chunks", func() (int64, int, error) { return chunkArticleBytes(chunks, m) }},
	} {
		got, n, err := tt.sum()
		if err != nil || got != want || n != entries {
			t.Errorf("%s: got %d bytes, %d articles, %v; want %d, %d", tt.name, got, n, err, want, entries)
		}
	}
	for _, chunked := range []bool{false, true} {
		root := map[bool]string{false: pages, true: chunks}[chunked]
		if id, err := firstID(root, chunked); err != nil || id != 3 {
			t.Errorf("firstID (chunked %v): got %d, %v; want 3", chunked, id, err)
		}
	}
	// A collection whose pages miss an article is an error.
	m.Collections[1].Count = 2
	if _, _, err := pageArticleBytes(pages, m, limit); err == nil {
		t.Error("pages: a count the pages do not hold was accepted")
	}
	if _, _, err := chunkArticleBytes(chunks, m); err == nil {
		t.Error("chunks: a count the index does not hold was accepted")
	}
}

func TestNewArticle(t *testing.T) {
	opt := corpus.Options{Articles: 500, Seed: 2, Filters: listing.FilterNames()}
	a, err := newArticle(opt)
	if err != nil {
		t.Fatal(err)
	}
	if a.id <= opt.Articles || a.tags < 3 || a.author == "" {
		t.Errorf("got %v", a)
	}
	if !bytes.Contains(a.data, []byte("\npublished: \""+newestPublished+"\"\n")) {
		t.Errorf("not published at %s:\n%s", newestPublished, a.data)
	}
	for i := range opt.Articles {
		if p, _ := corpus.Article(opt, i); p == a.path {
			t.Fatalf("the new article has the path of article %d, %s", i, p)
		}
	}
}

func TestSetPublishedEditTitle(t *testing.T) {
	const article = "---\nid: 4\ntitle: \"Old \\\"news\\\"\"\npublished: \"2016-07-08T17:19:47\"\nauthor: x\n---\n\ntitle: \"body\"\npublished: \"body\"\n"
	got, err := setPublished([]byte(article), "2026-01-01T00:00:00")
	if want := strings.Replace(article, "2016-07-08T17:19:47", "2026-01-01T00:00:00", 1); err != nil || string(got) != want {
		t.Errorf("setPublished: got %q, %v; want %q", got, err, want)
	}
	got, err = editTitle([]byte(article))
	if want := strings.Replace(article, `title: "Old`, `title: "Edited Old`, 1); err != nil || string(got) != want {
		t.Errorf("editTitle: got %q, %v; want %q", got, err, want)
	}
	for _, bad := range []string{"---\nid: 4\n---\n", "---\npublished: 2016-07-08\n---\n"} {
		if _, err := setPublished([]byte(bad), "2026-01-01T00:00:00"); err == nil {
			t.Errorf("setPublished(%q) succeeded", bad)
		}
		if _, err := editTitle([]byte(bad)); err == nil {
			t.Errorf("editTitle(%q) succeeded", bad)
		}
	}
}

func TestParsePublishSummary(t *testing.T) {
	for _, tt := range []struct {
		out  string
		want publishSummary
	}{
		{"uploaded 2952 files (159.0 MB), unchanged 2, deleted 0, in 1.234s\n",
			publishSummary{Line: "uploaded 2952 files (159.0 MB), unchanged 2, deleted 0, in 1.234s", Uploaded: 2952, UploadedBytes: "159.0 MB", Unchanged: 2}},
		{"notice\nuploaded 1 file (1 B), unchanged 0, deleted 7, in 3ms\n",
			publishSummary{Line: "uploaded 1 file (1 B), unchanged 0, deleted 7, in 3ms", Uploaded: 1, UploadedBytes: "1 B", Deleted: 7}},
	} {
		got, err := parsePublishSummary(tt.out)
		if err != nil || got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v", tt.out, got, err, tt.want)
		}
	}
	if _, err := parsePublishSummary("dry run: would upload 1 file (1 B), unchanged 0, would delete 0, in 1ms; nothing changed\n"); err == nil {
		t.Error("a dry run's summary was accepted")
	}
}

// TestChunksReportJSON checks that the -json report carries the layouts'
// keys and the changes.
func TestChunksReportJSON(t *testing.T) {
	rep := chunksReport{Articles: 3, Layouts: []layoutReport{{layout: chunksLayouts(3, 1)[2], Files: 4,
		Changes: []changeReport{{Change: "new article", Files: 2, Bytes: 9, Publish: &publishSummary{Uploaded: 2}}}}}}
	data, err := json.Marshal(rep)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"key":"chunks"`, `"name":"chunks, max_limit 100"`, `"change":"new article"`, `"publish":{"line":"","uploaded":2`} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("no %s in %s", want, data)
		}
	}
	if s := fmt.Sprint(rep.Layouts[0].Changes[0].Publish); s != "2 files, ; 0 deleted" {
		t.Errorf("publish cell %q", s)
	}
}
