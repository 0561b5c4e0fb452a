package server

import (
	"context"
	"crypto/sha256"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

var titleLine = regexp.MustCompile(`(?m)^title: .*$`)

// editTitle gives the article file n (in sorted order) of a site a new
// title, and returns its path relative to the content folder.
func editTitle(t *testing.T, s testSite, n int, title string) string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(s.dir, "content", "*", "*", "*.md"))
	if err != nil || len(files) <= n {
		t.Fatalf("no article %d: %v", n, err)
	}
	data, err := os.ReadFile(files[n])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(files[n], titleLine.ReplaceAll(data, []byte(`title: "`+title+`"`)), 0o644); err != nil {
		t.Fatal(err)
	}
	rel, _ := filepath.Rel(filepath.Join(s.dir, "content"), files[n])
	return filepath.ToSlash(rel)
}

// checkServes checks that s answers every page of the manifest of out with
// the bytes of its file there.
func checkServes(t *testing.T, s *Server, out string) {
	t.Helper()
	for _, f := range readManifest(t, out).Files {
		limit, offset, index, ok := parsePage(f.Path)
		if !ok {
			continue
		}
		target := "/articles/?limit=" + strconv.Itoa(limit) + "&offset=" + strconv.Itoa(offset)
		if index {
			target = "/articles/"
		}
		want, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		resp := request(s, http.MethodGet, target, nil)
		if got := readBody(t, resp); string(got) != string(want) {
			t.Fatalf("%s: got %.80q, want the bytes of %s (%.80q)", target, got, f.Path, want)
		}
	}
}

// parsePage reads a page of the main listing from its path.
func parsePage(p string) (limit, offset int, index, ok bool) {
	k, ok := listing.ParsePageKey(p)
	if !ok || k.Dir != listing.Dir {
		return 0, 0, false, false
	}
	return k.Limit, k.Offset, k.Index, true
}

// newSums counts the distinct page sums of manifest b that manifest a
// does not have.
func newSums(a, b *manifest.Manifest) int {
	old := map[string]bool{}
	for _, f := range a.Files {
		old[f.SHA256] = true
	}
	n := 0
	for _, f := range b.Files {
		if !old[f.SHA256] {
			old[f.SHA256] = true
			n++
		}
	}
	return n
}

// TestIncrementalReload rebuilds a site after one title changed: the
// server reads only the pages whose bytes are new, and answers every page
// of the new build.
func TestIncrementalReload(t *testing.T) {
	s := makeSite(t, corpus.Options{Articles: 45, Limits: []int{5, 20}, Seed: 3})
	srv, _ := newServer(t, Options{Source: Folder(s.out)})
	before := readManifest(t, s.out)
	if got := srv.cur.Load().read; got != newSums(&manifest.Manifest{}, before) {
		t.Errorf("first load read %d pages, want every distinct page, %d", got, newSums(&manifest.Manifest{}, before))
	}
	editTitle(t, s, 7, "A new title")
	s.build(t, s.out)
	if switched, err := srv.Reload(); err != nil || !switched {
		t.Fatalf("Reload: %v, %v", switched, err)
	}
	after := readManifest(t, s.out)
	want := newSums(before, after)
	if got := srv.cur.Load().read; got != want || want == 0 {
		t.Errorf("reload read %d pages, want the %d with new bytes", got, want)
	}
	checkServes(t, srv, s.out)
}

// memoryBuild builds a site in memory, handing its pages to srv.
type memoryBuild struct {
	srv   *Server
	b     *build.Builder
	batch *Batch
}

func newMemoryBuild(t *testing.T, srv *Server, s testSite) *memoryBuild {
	mb := &memoryBuild{srv: srv}
	mb.b = build.New(build.Options{
		FS: os.DirFS(s.dir), ConfigName: corpus.ConfigPath, Root: s.dir, Memory: true,
		Now:    func() time.Time { return buildTime },
		OnPage: func(_ string, data []byte, sum [sha256.Size]byte) { mb.batch.Add(data, sum) },
	})
	return mb
}

// rebuild builds after the changes listed (nil: anything), and installs.
func (mb *memoryBuild) rebuild(t *testing.T, changed []string) {
	t.Helper()
	mb.batch = mb.srv.NewBatch()
	res, err := mb.b.Rebuild(context.Background(), changed)
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	if _, err := mb.srv.Install(Handover{Manifest: res.Manifest, Data: res.ManifestData, Pages: mb.batch}); err != nil {
		t.Fatalf("Install: %v", err)
	}
}

// TestInstallFromMemory serves builds that exist only in memory: the same
// answers as the files of a build of the same content, none read.
func TestInstallFromMemory(t *testing.T) {
	dir := t.TempDir()
	s, err := writeSite(dir, corpus.Options{Articles: 45, Limits: []int{5, 20}, Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, Options{Source: Pushed("")})
	mb := newMemoryBuild(t, srv, s)
	mb.rebuild(t, nil)
	if _, err := os.Stat(s.out); !os.IsNotExist(err) {
		t.Errorf("a build in memory made %s: %v", s.out, err)
	}
	ref := filepath.Join(t.TempDir(), "ref")
	s.build(t, ref)
	checkServes(t, srv, ref)

	path := editTitle(t, s, 3, "Edited in memory")
	mb.rebuild(t, []string{filepath.Join(s.dir, "content", filepath.FromSlash(path))})
	s.build(t, ref)
	checkServes(t, srv, ref)
	if got := srv.cur.Load().read; got != 0 {
		t.Errorf("an install read %d pages from files, want 0", got)
	}
}

// TestCompact rebuilds many times, a few pages changing each time: the
// stores of bodies no longer used are let go.
func TestCompact(t *testing.T) {
	dir := t.TempDir()
	s, err := writeSite(dir, corpus.Options{Articles: 45, Limits: []int{5, 20}, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, Options{Source: Pushed("")})
	srv.compactSlack = 0
	mb := newMemoryBuild(t, srv, s)
	mb.rebuild(t, nil)
	maxStores := 0
	for i := range 12 {
		path := editTitle(t, s, i, "Title number "+strconv.Itoa(i))
		mb.rebuild(t, []string{filepath.Join(s.dir, "content", filepath.FromSlash(path))})
		hb := srv.cur.Load()
		maxStores = max(maxStores, len(hb.stores))
		var total, live int64
		for _, at := range hb.bySum {
			live += at.size
		}
		for _, x := range hb.stores {
			total += x.size
		}
		if total > 2*live {
			t.Fatalf("after rebuild %d: stores of %d bytes for %d bytes of pages", i, total, live)
		}
	}
	if maxStores < 2 {
		t.Errorf("rebuilds never shared a store with the build before (at most %d stores)", maxStores)
	}
	ref := filepath.Join(t.TempDir(), "ref")
	s.build(t, ref)
	checkServes(t, srv, ref)
}

// TestPagesHandedOver starts a server on a build in a file system (as
// serve --bundle does) with its pages handed over in memory (Archive's pages):
// none is read from the file system, and every page is answered.
func TestPagesHandedOver(t *testing.T) {
	sharedSites(t)
	fsys := fstest.MapFS{}
	pages := NewPages()
	for path, data := range readTree(t, allSite.out) {
		fsys[path] = &fstest.MapFile{Data: data}
		if path != manifest.Name {
			pages.Add(data, sha256.Sum256(data))
		}
	}
	s, _ := newServer(t, Options{Source: Archive("feed.zip", fsys, pages)})
	if got := s.cur.Load().read; got != 0 {
		t.Errorf("read %d pages from the file system, want none", got)
	}
	checkServes(t, s, allSite.out)

	// Without them, each page is read once.
	s, _ = newServer(t, Options{Source: Archive("feed.zip", fsys, nil)})
	if got := s.cur.Load().read; got == 0 {
		t.Error("read no page from the file system")
	}
	checkServes(t, s, allSite.out)
}
