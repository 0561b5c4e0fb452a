package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"testing"
	"testing/fstest"

	"github.com/feedgen/feedgen/internal/diag"
)

// mapFS returns files as a file system.
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func loadFS(t *testing.T, l *Loader, fsys fstest.MapFS, opt Options) *Site {
	t.Helper()
	opt.Now, opt.Root = now, "content"
	site, err := l.Load(context.Background(), fsys, opt)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return site
}

const good2 = "---\nid: 2\ntitle: Second\npublished: 2025-01-03T10:00:00\nauthor: ivan\n---\nBody two.\n"

// TestDigest checks that Site.Digest changes with the path or bytes of any
// article file, and with nothing the loader ignores.
func TestDigest(t *testing.T) {
	base := map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2}
	with := func(change func(m map[string]string)) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		change(m)
		return m
	}
	want := loadFS(t, NewLoader(testCfg(t)), mapFS(base), Options{}).Digest
	if again := loadFS(t, NewLoader(testCfg(t)), mapFS(base), Options{}).Digest; again != want {
		t.Fatalf("two loads of the same content: digests %x and %x", again, want)
	}
	tests := []struct {
		name string
		same bool
		fsys map[string]string
	}{
		{"one byte of a body", false, with(func(m map[string]string) { m["news/politics/b.md"] = good2[:len(good2)-2] + "!\n" })},
		{"a draft added", false, with(func(m map[string]string) {
			m["news/politics/c.md"] = "---\nid: 3\ntitle: C\npublished: 2025-01-03T10:00:00\nauthor: ivan\ndraft: true\n---\n"
		})},
		{"a file removed", false, with(func(m map[string]string) { delete(m, "news/politics/b.md") })},
		{"a file renamed", false, with(func(m map[string]string) {
			m["news/politics/c.md"] = m["news/politics/b.md"]
			delete(m, "news/politics/b.md")
		})},
		{"two files swap bytes", false, with(func(m map[string]string) { m["news/politics/a.md"], m["news/politics/b.md"] = good2, good })},
		{"an ignored file", true, with(func(m map[string]string) { m["news/politics/_c.md"] = "anything" })},
		{"a hidden folder", true, with(func(m map[string]string) { m["news/.git/c.md"] = "anything" })},
		{"a file not .md", true, with(func(m map[string]string) { m["news/politics/notes.txt"] = "anything" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadFS(t, NewLoader(testCfg(t)), mapFS(tt.fsys), Options{}).Digest
			if (got == want) != tt.same {
				t.Errorf("digest %x, base %x: want same %v", got, want, tt.same)
			}
		})
	}
}

// TestDigestFromCache checks that a caching loader, which takes unchanged
// files from its cache, gives the digest a new loader gives.
func TestDigestFromCache(t *testing.T) {
	fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
	l := NewLoader(testCfg(t))
	l.Cache = true
	loadFS(t, l, fsys, Options{})
	fsys["news/politics/b.md"] = &fstest.MapFile{Data: []byte(good2 + "More.\n")}
	got := loadFS(t, l, fsys, Options{Changed: []string{"news/politics/b.md"}})
	if got.Reparsed != 1 {
		t.Fatalf("reparsed %d files, want 1", got.Reparsed)
	}
	if want := loadFS(t, NewLoader(testCfg(t)), fsys, Options{}).Digest; got.Digest != want {
		t.Errorf("digest from the cache %x, want %x", got.Digest, want)
	}
}

// TestUnchanged checks Options.Unchanged: asked with the digest the Site
// gets, it stops before parsing when it says yes, and otherwise the Site
// is what a plain load gives, also when the bytes kept from the first pass
// do not fit and files are read again.
func TestUnchanged(t *testing.T) {
	fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
	plain := loadFS(t, NewLoader(testCfg(t)), fsys, Options{})
	ids := func(s *Site) []int64 {
		var ids []int64
		for _, a := range s.Articles {
			ids = append(ids, a.ID)
		}
		slices.Sort(ids)
		return ids
	}
	for _, tt := range []struct {
		name   string
		answer bool
		keep   int64
	}{
		{"unchanged", true, keepLimit},
		{"changed", false, keepLimit},
		{"changed, nothing kept", false, 0},
		{"changed, one file kept", false, int64(len(good))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLoader(testCfg(t))
			l.keep = tt.keep
			var asked [][sha256.Size]byte
			site := loadFS(t, l, fsys, Options{Unchanged: func(p Probe) bool {
				asked = append(asked, p.Digest)
				return tt.answer
			}})
			if len(asked) != 1 || asked[0] != plain.Digest {
				t.Fatalf("asked with %x, want once with %x", asked, plain.Digest)
			}
			if site.Digest != plain.Digest || site.Unchanged != tt.answer {
				t.Errorf("got digest %x unchanged %v, want %x %v", site.Digest, site.Unchanged, plain.Digest, tt.answer)
			}
			wantIDs := ids(plain)
			if tt.answer {
				wantIDs = nil
			}
			if got := ids(site); !slices.Equal(got, wantIDs) {
				t.Errorf("got articles %v, want %v", got, wantIDs)
			}
		})
	}
}

// TestUnchangedKeptBytes checks that the second pass parses the bytes
// the first pass kept, those its digest was made of, rather than read the
// files again; and reads them again when nothing could be kept.
func TestUnchangedKeptBytes(t *testing.T) {
	for _, tt := range []struct {
		name string
		keep int64
		want []string // titles, sorted
	}{
		{"kept", keepLimit, []string{"Hello", "Second"}},
		{"nothing kept", 0, []string{"Hello again", "Second again"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
			l := NewLoader(testCfg(t))
			l.keep = tt.keep
			site := loadFS(t, l, fsys, Options{Unchanged: func(Probe) bool {
				// Edited between the passes.
				for _, f := range fsys {
					f.Data = bytes.Replace(f.Data, []byte("Hello"), []byte("Hello again"), 1)
					f.Data = bytes.Replace(f.Data, []byte("Second"), []byte("Second again"), 1)
				}
				return false
			}})
			var got []string
			for _, a := range site.Articles {
				got = append(got, a.Title)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got titles %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUnchangedNotAsked checks when Options.Unchanged is not asked: the
// content has errors found while walking it, or the loader has a cache
// (the caller knows more than the digest would tell).
func TestUnchangedNotAsked(t *testing.T) {
	ask := func(asked *bool) func(Probe) bool {
		return func(Probe) bool { *asked = true; return true }
	}
	var asked bool
	_, err := NewLoader(testCfg(t)).Load(context.Background(),
		mapFS(map[string]string{"news/politics/a.md": good, "news/stray.md": good2}),
		Options{Now: now, Root: "content", Unchanged: ask(&asked)})
	if err == nil || asked {
		t.Errorf("article outside a category: err %v, asked %v; want the error, not asked", err, asked)
	}

	fsys := mapFS(map[string]string{"news/politics/a.md": good})
	l := NewLoader(testCfg(t))
	l.Cache = true
	loadFS(t, l, fsys, Options{})
	asked = false
	if site := loadFS(t, l, fsys, Options{Unchanged: ask(&asked)}); asked || site.Unchanged || len(site.Articles) != 1 {
		t.Errorf("caching loader: asked %v, unchanged %v, %d articles; want not asked, 1 article", asked, site.Unchanged, len(site.Articles))
	}
}

// TestNextScheduled checks Site.NextScheduled: the earliest scheduled
// publication, zero when nothing is scheduled.
func TestNextScheduled(t *testing.T) {
	art := func(id int, pub string) string {
		return "---\nid: " + string(rune('0'+id)) + "\ntitle: T\npublished: " + pub + "\nauthor: ivan\n---\n"
	}
	site := loadFS(t, NewLoader(testCfg(t)), mapFS(map[string]string{
		"news/politics/a.md": art(1, "2025-01-02T10:00:00"),
		"news/politics/b.md": art(2, "2027-03-01T10:00:00+03:00"),
		"news/politics/c.md": art(3, "2027-02-01T10:00:00+03:00"),
	}), Options{})
	if want := "2027-02-01T07:00:00Z"; site.Scheduled != 2 || site.NextScheduled.UTC().Format("2006-01-02T15:04:05Z") != want {
		t.Errorf("got %d scheduled, next %v; want 2, next %s", site.Scheduled, site.NextScheduled.UTC(), want)
	}
	if site := loadFS(t, NewLoader(testCfg(t)), mapFS(map[string]string{"news/politics/a.md": good}), Options{}); !site.NextScheduled.IsZero() {
		t.Errorf("nothing scheduled: next %v, want zero", site.NextScheduled)
	}
}

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

// countingFS counts the files read from a MapFS; the read of fail, if
// set, fails, and the read number cancelAt (if not 0) calls cancel.
type countingFS struct {
	fstest.MapFS
	reads    *atomic.Int64
	fail     string
	cancelAt int64
	cancel   func()
}

func (c countingFS) Open(name string) (fs.File, error) {
	if err := c.read(name); err != nil {
		return nil, err
	}
	return c.MapFS.Open(name)
}

func (c countingFS) ReadFile(name string) ([]byte, error) {
	if err := c.read(name); err != nil {
		return nil, err
	}
	return c.MapFS.ReadFile(name)
}

func (c countingFS) read(name string) error {
	if n := c.reads.Add(1); n == c.cancelAt {
		c.cancel()
	}
	if name == c.fail {
		return &fs.PathError{Op: "read", Path: name, Err: errors.New("input/output error")}
	}
	return nil
}

// TestDigestFails checks that Digest is not ok for a file that cannot be
// read, and that a Digest cancelled once the walk is done, while files
// are still being read, returns the cancellation and no digest.
func TestDigestFails(t *testing.T) {
	cfg := testCfg(t)
	fsys := cachedFS(manyFiles(3*checkBatch, nil))
	var reads atomic.Int64
	_, ok, err := NewLoader(cfg).Digest(context.Background(), countingFS{MapFS: fsys, reads: &reads, fail: "news/politics/a0700.md"}, "content", nil)
	if err != nil || ok {
		t.Fatalf("a file that cannot be read: ok %v, %v; want not ok", ok, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reads.Store(0)
	// The last batch is read once the walk has listed every file: cancel
	// at its first read.
	sum, ok, err := NewLoader(cfg).Digest(ctx, countingFS{MapFS: fsys, reads: &reads, cancelAt: 2*checkBatch + 1, cancel: cancel}, "content", nil)
	if !errors.Is(err, context.Canceled) || ok {
		t.Fatalf("cancelled: %x, ok %v, %v; want context.Canceled", sum, ok, err)
	}
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
			counted := countingFS{MapFS: fsys, reads: &reads}
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
			name := "news/politics/a.md" // read by a Load: not ignored
			if _, ok := tt.files[name]; !ok {
				name = "news/politics/a0000.md"
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
