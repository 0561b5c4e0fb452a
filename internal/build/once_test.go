package build

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// onceBuilder is builder(dir) for one build that bounds its memory
// (feedgen build).
func onceBuilder(dir string) *Builder {
	b := builder(dir)
	b.once = true
	return b
}

// openFDs counts this process's open descriptors; -1 where it cannot.
func openFDs(t *testing.T) int {
	t.Helper()
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return -1
	}
	return len(entries)
}

// sameData fails unless got and want hold the same files with the same
// bytes.
func sameData(t *testing.T, got, want snapshot) {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("got %d files, want %d", len(got), len(want))
	}
	for p, w := range want {
		if g, ok := got[p]; !ok {
			t.Errorf("missing %s", p)
		} else if g.data != w.data {
			t.Errorf("%s:\ngot  %.200s\nwant %.200s", p, g.data, w.data)
		}
	}
}

// names lists the files and folders in dir.
func names(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestOnceSameOutput checks that a build that bounds its memory (its
// articles encoded as they are parsed, kept in a file) writes the bytes a
// Builder that keeps them writes, filters included, and leaves no file of
// its own beside the output.
func TestOnceSameOutput(t *testing.T) {
	opt := func(out string) Options {
		return Options{FS: feedgen.Sample(), ConfigName: "config.yaml", OutDir: out, Now: fixedNow, Generator: "feedgen test", Code: testCode}
	}
	root := t.TempDir()
	kept := filepath.Join(root, "kept")
	if _, err := New(opt(kept)).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	// The sample is far smaller than writeBehindAfter: "behind" writes
	// every page behind.
	for _, tt := range []struct {
		name  string
		after int64
	}{{"lean", writeBehindAfter}, {"behind", 0}} {
		out := filepath.Join(root, tt.name)
		b := New(opt(out))
		b.once = true // as Run does
		b.writeBehindAfter = tt.after
		fds := openFDs(t)
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if got := openFDs(t); got > fds && fds >= 0 {
			t.Errorf("%s: %d descriptors open after the build, %d before", tt.name, got, fds)
		}
		if res.Estimate != res.Bytes {
			t.Errorf("%s: estimate %d, want the exact size %d", tt.name, res.Estimate, res.Bytes)
		}
		sameData(t, snap(t, out), snap(t, kept))
	}
	if got := names(t, root); !slices.Equal(got, []string{"behind", "kept", "lean"}) {
		t.Errorf("got %v beside the outputs, want only them", got)
	}
}

// TestOnceRebuilds checks that builds that bound their memory, one after
// another with edits in between, each leave what a clean build writes,
// and that one that fails leaves the output as it was.
func TestOnceRebuilds(t *testing.T) {
	dir := site(t, 9)
	out := filepath.Join(dir, "public")
	if _, err := onceBuilder(dir).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	edits := []func(){
		func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), strings.Replace(article(3, "2025-01-03T10:00:00"), "Article 3", "Changed", 1))
		},
		func() { os.Remove(filepath.Join(dir, "content/news/politics/a9.md")) },
		func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a10.md"), article(10, "2024-12-31T10:00:00"))
		},
	}
	for i, edit := range edits {
		edit()
		if _, err := onceBuilder(dir).Build(context.Background()); err != nil {
			t.Fatalf("build after edit %d: %v", i, err)
		}
		clean := t.TempDir()
		b := builder(dir)
		b.opt.OutDir = clean
		if _, err := b.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, want := snap(t, out), snap(t, clean)
		delete(got, "manifest.json") // its build time differs, and is checked elsewhere
		delete(want, "manifest.json")
		sameData(t, got, want)
	}
	before := snap(t, out)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/bad.md"), "---\nid: x\n---\n")
	if _, err := onceBuilder(dir).Build(context.Background()); err == nil {
		t.Fatal("build with a bad article: got no error")
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("failed build changed the output: %v", d)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"config.yaml", "content", "public"}) {
		t.Errorf("got %v in the site's folder, want config.yaml, content and public", got)
	}
}
