package content

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/feedgen/feedgen/internal/diag"
)

// manyFiles returns n valid articles (more than a batch of Digest),
// with base's files added.
func manyFiles(n int, base map[string]string) map[string]string {
	m := map[string]string{}
	for i := range n {
		m[fmt.Sprintf("news/politics/a%04d.md", i)] = fmt.Sprintf("---\nid: %d\ntitle: T%d\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\nBody %d.\n", i+1, i, i)
	}
	for k, v := range base {
		m[k] = v
	}
	return m
}

// countingFS counts the files read from a MapFS.
type countingFS struct {
	fstest.MapFS
	reads *atomic.Int64
}

func (c countingFS) Open(name string) (fs.File, error) {
	c.reads.Add(1)
	return c.MapFS.Open(name)
}

func (c countingFS) ReadFile(name string) ([]byte, error) {
	c.reads.Add(1)
	return c.MapFS.ReadFile(name)
}

// TestDigestStreamed checks Loader.Digest against Load: the same digest
// for the same content, whatever the cache vouches for; not ok where Load
// finds the content broken; and no file read that the cache vouches for.
func TestDigestStreamed(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		files  map[string]string
		broken bool
	}{
		{"empty", map[string]string{}, false},
		{"one", map[string]string{"news/politics/a.md": good}, false},
		{"1300", manyFiles(1300, nil), false},
		{"ignored and other files", manyFiles(600, map[string]string{"news/politics/_x.md": "x", "news/.git/y.md": "y", "news/politics/n.txt": "n"}), false},
		{"an article outside a category folder", manyFiles(700, map[string]string{"news/stray.md": good}), true},
		{"a draft", manyFiles(10, map[string]string{"news/politics/zz.md": "---\nid: 99\ntitle: D\npublished: 2025-01-02T10:00:00\nauthor: ivan\ndraft: true\n---\n"}), false},
		// Not parsed: the digest differs from the build's, which a
		// build that fails never wrote.
		{"a file that does not parse", manyFiles(10, map[string]string{"news/politics/zz.md": "---\ntitle: [\n---\n"}), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := testCfg(t)
			fsys := cachedFS(tt.files)
			site, err := NewLoader(cfg).Load(ctx, fsys, Options{Now: now, Root: "content", FileClock: later, Drafts: true, Future: true,
				Unchanged: func(Probe) bool { return true }})
			var list diag.List
			loadBroken := errors.As(err, &list)
			if err != nil && !loadBroken {
				t.Fatal(err)
			}
			if tt.broken != loadBroken {
				t.Fatalf("Load: broken %v, the test says %v (%v)", loadBroken, tt.broken, err)
			}
			sum, ok, err := NewLoader(cfg).Digest(ctx, fsys, "content", nil)
			if err != nil {
				t.Fatal(err)
			}
			if ok == tt.broken {
				t.Fatalf("Digest: ok %v for content that is broken: %v", ok, tt.broken)
			}
			if tt.broken {
				return
			}
			if sum != site.Digest {
				t.Fatalf("Digest %x, Load %x", sum, site.Digest)
			}
			// With the cache of a build: nothing read, the same digest;
			// then one file changed, and only it is read.
			full, err := NewLoader(cfg).Load(ctx, fsys, Options{Now: now, Root: "content", FileClock: later, Drafts: true, Future: true})
			if errors.As(err, &list) {
				return // no cache of a build
			}
			if err != nil {
				t.Fatal(err)
			}
			var reads atomic.Int64
			counted := countingFS{fsys, &reads}
			cache, err := ReadCache(bytes.NewReader(writeCache(t, full, [32]byte{1})))
			if err != nil {
				t.Fatal(err)
			}
			if sum, ok, err = NewLoader(cfg).Digest(ctx, counted, "content", cache); err != nil || !ok || sum != site.Digest {
				t.Fatalf("with the cache: %x, %v, %v; want %x", sum, ok, err, site.Digest)
			}
			if n := reads.Load(); n != 0 {
				t.Errorf("with the cache of the same content: %d files read, want 0", n)
			}
			if len(tt.files) == 0 {
				return
			}
			var name string
			for name = range tt.files {
				break
			}
			fsys[name] = &fstest.MapFile{Data: append([]byte(tt.files[name]), "more\n"...), ModTime: fsys[name].ModTime}
			want := loadFS(t, NewLoader(cfg), fsys, Options{Drafts: true, Future: true}).Digest
			reads.Store(0)
			cache, _ = ReadCache(bytes.NewReader(writeCache(t, full, [32]byte{1})))
			if sum, ok, err = NewLoader(cfg).Digest(ctx, counted, "content", cache); err != nil || !ok || sum != want {
				t.Fatalf("one file changed: %x, %v, %v; want %x", sum, ok, err, want)
			}
			if n := reads.Load(); n != 1 {
				t.Errorf("one file changed: %d files read, want 1", n)
			}
		})
	}
}

// TestDigestOnDisk checks Digest on a folder on disk (stat'ed through
// its folders' descriptors), and a broken link, which Load refuses.
func TestDigestOnDisk(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	for name, data := range manyFiles(1100, nil) {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testCfg(t)
	site, err := NewLoader(cfg).Load(ctx, DirFS(dir), Options{Now: now, Root: dir, FileClock: later})
	if err != nil {
		t.Fatal(err)
	}
	cache, err := ReadCache(bytes.NewReader(writeCache(t, site, [32]byte{1})))
	if err != nil {
		t.Fatal(err)
	}
	sum, ok, err := NewLoader(cfg).Digest(ctx, DirFS(dir), dir, cache)
	if err != nil || !ok || sum != site.Digest {
		t.Fatalf("Digest: %x, %v, %v; Load %x", sum, ok, err, site.Digest)
	}
	if err := os.Symlink("nowhere.md", filepath.Join(dir, "news", "politics", "b0.md")); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := NewLoader(cfg).Digest(ctx, DirFS(dir), dir, nil); err != nil || ok {
		t.Fatalf("with a broken link: ok %v, %v; want not ok", ok, err)
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := NewLoader(cfg).Digest(cctx, DirFS(dir), dir, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: %v", err)
	}
}
