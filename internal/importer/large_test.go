package importer

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
)

// TestImportLarge measures the import of a 10,000-article site served by
// the real server on the loopback (docs/contract.md §11's target: 10 s at most), then
// rebuilds it and compares its pages. It takes a while: it runs only with
// FEEDGEN_IMPORT_LARGE=1, e.g.
//
//	FEEDGEN_IMPORT_LARGE=1 go test -run TestImportLarge -v ./internal/importer/
func TestImportLarge(t *testing.T) {
	if os.Getenv("FEEDGEN_IMPORT_LARGE") == "" {
		t.Skip("set FEEDGEN_IMPORT_LARGE=1 to import a 10,000-article site")
	}
	opt := corpus.Options{Articles: 10_000, Seed: 1, Limits: []int{20, 100}, Offsets: "aligned"}
	src := t.TempDir()
	if _, err := corpus.Write(src, opt); err != nil {
		t.Fatal(err)
	}
	orig := t.TempDir()
	res := buildSite(t, os.DirFS(src), src, orig, corpus.HardNow)
	url := serve(t, orig)

	start := time.Now()
	s, err := Import(context.Background(), Options{URL: url, Layout: layout.PagesName, Offsets: "aligned", Now: func() time.Time { return corpus.HardNow }, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	read := time.Since(start)
	dir := filepath.Join(t.TempDir(), "site")
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	took := time.Since(start)
	t.Logf("imported %d articles (%d pages checked) in %v (%v to read, check and convert, %v to write), %d requests; %s of pages built by the original",
		s.Articles, s.Pages, took.Round(time.Millisecond), read.Round(time.Millisecond), (took - read).Round(time.Millisecond), s.Requests, human.Bytes(res.Bytes))
	if took > 10*time.Second {
		t.Errorf("took %v, want 10s at most", took)
	}
	out := filepath.Join(t.TempDir(), "public")
	buildSite(t, os.DirFS(dir), dir, out, corpus.HardNow)
	want := mainPages(t, orig)
	if same := comparePages(t, want, mainPages(t, out)); same != len(want) {
		t.Errorf("%d of %d pages byte-identical", same, len(want))
	} else {
		t.Logf("all %d pages of the rebuilt site byte-identical", same)
	}
	if !bytes.Contains(s.Files[configName], []byte("offsets: aligned")) {
		t.Error("config.yaml does not say offsets: aligned")
	}
}
