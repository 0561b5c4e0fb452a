package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/manifest/manifesttest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestOldIndexFormatRebuilt builds over the output of an older feedgen,
// whose indexes are of format 2 (flat chunks.json, no leaves: written by
// hand here, from a build, its manifest naming them with their bytes):
// the build reads none of them as a tree, rebuilds them (never taking the
// no-change shortcut, though the inputs are the manifest's), and the
// output is byte for byte a clean build's: every root and leaf written,
// and the old chunks it no longer names deleted.
func TestOldIndexFormatRebuilt(t *testing.T) {
	opt := corpus.Options{Articles: 100, Seed: 4, Layout: "chunks", Filters: []string{"tag"}}
	for _, tc := range []struct {
		name string
		// change changes the content before the build over the old
		// output; it returns whether chunks of the old one are no longer
		// named.
		change func(t *testing.T, dir string) bool
	}{
		{"same content", func(*testing.T, string) bool { return false }},
		{"one article edited", func(t *testing.T, dir string) bool {
			p, data := corpus.Article(opt, 7)
			testfiles.WriteFile(t, filepath.Join(dir, p), string(bytes.Replace(data, []byte("title: "), []byte("title: Edited "), 1)))
			return true
		}},
		{"one article removed", func(t *testing.T, dir string) bool {
			p, _ := corpus.Article(opt, 50)
			if err := os.Remove(filepath.Join(dir, p)); err != nil {
				t.Fatal(err)
			}
			return true
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if _, err := corpus.Write(dir, opt); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "public")
			build := func() *Result {
				t.Helper()
				res, err := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode}).Build(context.Background())
				if err != nil {
					t.Fatal(err)
				}
				return res
			}
			build()
			// The output as feedgen wrote it before trees: every index
			// flat, no leaf.
			manifesttest.RewriteIndexes(t, out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
				return chunktest.FormatTwo(ix), nil
			})
			leaves, err := filepath.Glob(filepath.Join(out, "articles/chunks/*/*"+chunk.LeafSuffix))
			if err != nil || len(leaves) == 0 {
				t.Fatalf("no leaf in the build (%v)", err)
			}
			for _, p := range leaves {
				if err := os.Remove(p); err != nil {
					t.Fatal(err)
				}
			}
			old := snap(t, out)
			gone := tc.change(t, dir)

			res := build()
			if res.Skipped {
				t.Errorf("the build took the no-change shortcut over indexes of format 2")
			}
			got := snap(t, out)
			identical(t, got, cleanBuild(t, dir))
			deleted := 0
			for p := range old {
				if _, ok := got[p]; !ok && chunk.IsChunk(p) {
					deleted++
				}
			}
			if gone && (deleted == 0 || res.Deleted < deleted) {
				t.Errorf("%d old chunks deleted, the build says %d: want some, each counted", deleted, res.Deleted)
			}
		})
	}
}
