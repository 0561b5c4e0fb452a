package bundle

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestWriteNamedPipes puts a named pipe where a page, a chunk, a leaf
// of an index or the manifest goes, in the folder bundle reads as feedgen bundle opens it
// (outfile.RootFS): Write refuses it at once, saying what to do, rather
// than block in its open.
func TestWriteNamedPipes(t *testing.T) {
	for _, tt := range []struct {
		name, layout string
		pipe         func(out string) string // the file to replace
		want         string
	}{
		{"page", layout.PagesName, func(string) string { return "articles/5/5.json" },
			"articles/5/5.json: not a regular file (a named pipe): the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"chunk", layout.ChunksName, func(out string) string {
			return firstNamed(t, out, chunk.IsChunk)
		}, ": not a regular file (a named pipe): the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"leaf", layout.ChunksName, func(out string) string {
			return firstNamed(t, out, chunk.IsLeaf)
		}, ".leaf.json: does not match manifest.json (a build is being written, or died: run feedgen build)"},
		{"manifest", layout.PagesName, func(string) string { return "manifest.json" },
			"reading manifest: public/manifest.json is not a regular file (a named pipe): remove it and run feedgen build --clean"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			o := buildSite(t, corpus.Options{Articles: 12, Limits: []int{5, 10}, Seed: 3, Layout: tt.layout})
			p := tt.pipe(o.out)
			testfiles.FIFO(t, filepath.Join(o.out, filepath.FromSlash(p)))
			root, err := os.OpenRoot(o.out)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			err = eventtest.Returns(t, 5*time.Second, "Write", func() error {
				_, err := Write(context.Background(), io.Discard, outfile.RootFS(root, "public"), Options{Config: o.config, BundledBy: "feedgen test"})
				return err
			})
			if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
				t.Errorf("got %v, want an error ending %q", err, tt.want)
			}
		})
	}
}

// firstNamed returns the first file of out's chunks folder whose path is
// one is accepts.
func firstNamed(t *testing.T, out string, is func(string) bool) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, "articles/chunks/*/*.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range m {
		rel, _ := filepath.Rel(out, p)
		if rel = filepath.ToSlash(rel); is(rel) {
			return rel
		}
	}
	t.Fatalf("none in %s", out)
	return ""
}
