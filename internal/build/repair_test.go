package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestRepairDamaged damages one file of a build at the same size (a byte
// flipped: a page, a chunk, an index), then builds: a build rewrites a
// file that changed since the last manifest was written (its status
// change time says so, whatever its size), with the inputs unchanged (the
// no-change shortcut) or after an unrelated edit; --clean rewrites one
// that changed without its time (as on a failing disk: here, the manifest
// written again after the damage). Each gives a clean build's bytes, and
// counts the file repaired.
func TestRepairDamaged(t *testing.T) {
	pages := func(t *testing.T) string { return site(t, 5) }
	chunks := func(t *testing.T) string { return chunkSite(t, 80) }
	// chunkOf is a chunk without article 1, which the edit changes.
	chunkOf := func(t *testing.T, out string) string {
		c, _ := chunkFiles(t, out)
		for _, f := range c {
			data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(data), `{"id":1,`) {
				return f.Path
			}
		}
		t.Fatal("every chunk holds article 1")
		return ""
	}
	tests := []struct {
		name  string
		site  func(t *testing.T) string
		file  func(t *testing.T, out string) string
		edit  bool // an unrelated article edited before the build
		clean bool // the damage hidden from times: only --clean finds it
		found bool // ... or the manifest, which gives the SHA-256 of indexes
		// mtime: the file's modification time set back after the damage,
		// before the manifest's, as cp -p or rsync -t of an older copy
		// over it does: its status change time still says.
		mtime bool
	}{
		{name: "a page", site: pages, file: func(*testing.T, string) string { return "articles/2/2.json" }},
		{name: "a page, after an edit", site: pages, file: func(*testing.T, string) string { return "articles/2/2.json" }, edit: true},
		{name: "a page, its modification time set back", site: pages, file: func(*testing.T, string) string { return "articles/2/2.json" }, mtime: true},
		{name: "a chunk, its modification time set back", site: chunks, file: chunkOf, mtime: true},
		{name: "a page, clean", site: pages, file: func(*testing.T, string) string { return "articles/2/2.json" }, clean: true},
		{name: "a chunk", site: chunks, file: chunkOf},
		{name: "a chunk, after an edit", site: chunks, file: chunkOf, edit: true},
		{name: "a chunk, clean", site: chunks, file: chunkOf, clean: true},
		{name: "an index", site: chunks, file: func(*testing.T, string) string { return chunk.IndexPath("articles/tag/t2") }},
		{name: "an index, hidden", site: chunks, file: func(*testing.T, string) string { return chunk.IndexPath("articles/tag/t2") }, clean: true, found: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := tt.site(t)
			out := filepath.Join(dir, "public")
			mustBuild(t, dir)
			name := filepath.Join(out, filepath.FromSlash(tt.file(t, out)))
			built, err := os.Stat(name)
			if err != nil {
				t.Fatal(err)
			}
			f, err := os.OpenFile(name, os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			b := make([]byte, 1)
			if _, err := f.ReadAt(b, 10); err != nil {
				t.Fatal(err)
			}
			b[0] ^= 0x01
			if _, err := f.WriteAt(b, 10); err != nil {
				t.Fatal(err)
			}
			f.Close()
			if tt.mtime {
				old := built.ModTime().Add(-time.Hour)
				if err := os.Chtimes(name, old, old); err != nil {
					t.Fatal(err)
				}
			}
			if tt.clean {
				// The manifest written after the damage: the file did not
				// change since, by its times.
				after(t, name)
				mpath := filepath.Join(out, "manifest.json")
				data, err := os.ReadFile(mpath)
				if err != nil {
					t.Fatal(err)
				}
				if err := writeAtomic(mpath, data); err != nil {
					t.Fatal(err)
				}
				if !tt.found {
					if res := mustBuild(t, dir); res.Repaired != 0 {
						t.Fatalf("a build without --clean repaired %d files, want none (the test hides the damage)", res.Repaired)
					}
				}
			}
			if tt.edit {
				testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a1.md"), strings.Replace(article(1, "2025-01-01T10:00:00"), "Body 1", "Body I", 1))
			}
			mpath := filepath.Join(out, "manifest.json")
			before, err := os.Stat(mpath)
			if err != nil {
				t.Fatal(err)
			}
			b2 := builder(dir)
			b2.opt.Clean = tt.clean && !tt.found
			res, err := b2.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Repaired != 1 {
				t.Errorf("%d files repaired, want 1: %s", res.Repaired, res.Summary())
			}
			// A new manifest file, of the same bytes when only a file was
			// repaired: a server that follows the folder loads it.
			if now, err := os.Stat(mpath); err != nil || os.SameFile(before, now) {
				t.Errorf("the manifest is the same file after a repair (%v): a server would not see the repair", err)
			}
			identical(t, snap(t, out), cleanBuild(t, dir))
		})
	}
}

// after returns once a file written now has a later status change time
// than the file name (the clock of file times ticks every few
// milliseconds).
func after(t *testing.T, name string) {
	t.Helper()
	info, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	probe := filepath.Join(t.TempDir(), "probe")
	for start := time.Now(); time.Since(start) < 10*time.Second; {
		testfiles.WriteFile(t, probe, "x")
		now, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if !changedSince(info, now) {
			return
		}
	}
	t.Fatal("the file times did not move in 10s")
}
