package build

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestOneNewArticleOneLeaf checks what the index's tree is for (issue
// 38): after one new article, the newest, each collection it joins has
// a new root and exactly one new leaf, every other leaf of it the same
// file; every other collection's root is the same bytes; and the output
// is a clean build's.
func TestOneNewArticleOneLeaf(t *testing.T) {
	dir := t.TempDir()
	opt := corpus.Options{Articles: 1500, Seed: 1, Layout: "chunks", Filters: []string{"section", "author"}}
	if _, err := corpus.Write(dir, opt); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	// Leaves of 2 chunks on average (64 articles), at most 8.
	sizes := chunk.DefaultSizes()
	sizes.LeafAverage, sizes.LeafMaxChunks = 2, 8
	build := func() {
		t.Helper()
		opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, leaves: &sizes}
		if _, err := New(opt).Build(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	build()
	before := roots(t, out)
	if n := len(before["articles"].Leaves); n < 10 {
		t.Fatalf("the main listing has %d leaves: too few to test", n)
	}
	p, data := corpus.Article(opt, opt.Articles)
	newest := regexp.MustCompile(`(?m)^published: .*$`).ReplaceAll(data, []byte(`published: "`+buildTime.Add(-1e9).UTC().Format("2006-01-02T15:04:05")+`"`))
	testfiles.WriteFile(t, filepath.Join(dir, p), string(newest))
	build()
	after := roots(t, out)
	joined := 0
	for d, a := range after {
		b, ok := before[d]
		if !ok {
			continue // a collection the article made: all new
		}
		if a.Count == b.Count {
			if string(chunk.AppendRoot(nil, a)) != string(chunk.AppendRoot(nil, b)) {
				t.Errorf("%s: the article is not in it, and its root changed", d)
			}
			continue
		}
		joined++
		old := map[string]bool{}
		for _, l := range b.Leaves {
			old[l.Path] = true
		}
		var added []string
		for _, l := range a.Leaves {
			if !old[l.Path] {
				added = append(added, l.Path)
			}
		}
		if len(added) != 1 || len(a.Leaves) != len(b.Leaves) || a.Leaves[0].Path != added[0] {
			t.Errorf("%s (%d leaves): new leaves %v, want one, the first", d, len(a.Leaves), added)
		}
	}
	if joined < 2 {
		t.Fatalf("the new article joined %d collections, want the main listing and more", joined)
	}
	// A clean build with the same leaves writes the same bytes.
	clean := t.TempDir()
	copt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, OutDir: clean, leaves: &sizes}
	if _, err := New(copt).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	identical(t, snap(t, out), snap(t, clean))
}

// roots returns the root of every collection of the build in out, by
// folder.
func roots(t *testing.T, out string) map[string]*chunk.Root {
	t.Helper()
	m := readTestManifest(t, out)
	rs := map[string]*chunk.Root{}
	for _, c := range m.Collections {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(chunk.IndexPath(c.Dir))))
		if err != nil {
			t.Fatal(err)
		}
		if rs[c.Dir], err = chunk.ParseRoot(data); err != nil {
			t.Fatal(err)
		}
	}
	return rs
}
