package build

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
)

// TestCancelMakingFolders cancels a build (as SIGTERM does) when it has
// made the first of its collections' folders: it makes no other (a site
// of a million collections has as many, which took a build 13 to 30
// seconds to make before it looked at a signal), writes no page and no
// manifest, and the next build finishes the job.
func TestCancelMakingFolders(t *testing.T) {
	dir := t.TempDir()
	opt := corpus.Options{Articles: 40, Limits: []int{5}, Seed: 1, Filters: []string{"section", "category", "tag", "author"}}
	if _, err := corpus.Write(dir, opt); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	b := New(Options{FS: os.DirFS(dir), ConfigName: corpus.ConfigPath, Root: dir, OutDir: out, Now: fixedNow, Generator: "feedgen test"})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	folders, pages := 0, 0
	b.onStep = func(what string) {
		switch what {
		case "folder":
			if folders++; folders == 1 {
				cancel()
			}
		case "page":
			pages++
		}
	}
	_, err := b.Build(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
	if folders != 1 || pages != 0 {
		t.Errorf("after the cancel: %d more folders made, %d pages written; want none", folders-1, pages)
	}
	if _, err := os.Stat(filepath.Join(out, "manifest.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("manifest.json: %v, want none", err)
	}
	b.onStep = func(what string) {
		if what == "folder" {
			folders++
		}
	}
	res, err := b.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if folders < 20 {
		t.Errorf("the site has %d folders: too few for the test to tell", folders)
	}
	if res.Written == 0 {
		t.Errorf("the next build wrote nothing")
	}
}
