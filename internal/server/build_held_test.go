package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// withFiltered returns the build in out with the tag filter and one more
// collection, tag=Go, of count articles in the folder articles/tag/_47o:
// its pages are placeholders, "tag=Go LIMIT/OFFSET".
func withFiltered(t *testing.T, out string, count int) fstest.MapFS {
	t.Helper()
	m := readManifest(t, out)
	fsys := fstest.MapFS{}
	for _, f := range m.Files {
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		fsys[f.Path] = &fstest.MapFile{Data: data}
	}
	const dir = "articles/tag/_47o"
	m.Filters = []string{"tag"}
	m.Collections = append(m.Collections, manifest.Collection{Dir: dir, Params: []listing.Param{{Key: "tag", Value: "Go"}}, Count: count})
	for _, l := range m.Pagination.Limits {
		for off := 0; off == 0 || off < count; off++ {
			path := listing.PageKey{Dir: dir, Limit: l, Offset: off}.Path()
			data := []byte("tag=Go " + strconv.Itoa(l) + "/" + strconv.Itoa(off))
			sum := sha256.Sum256(data)
			fsys[path] = &fstest.MapFile{Data: data}
			m.Files = append(m.Files, manifest.File{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	fsys[manifest.Name] = &fstest.MapFile{Data: m.Marshal()}
	return fsys
}

// TestCollections serves a build with a filtered collection: the filter
// parameter selects it, an empty one is no filter, a value without a
// collection is an empty collection, a filter the build does not
// pre-render is not found, and other parameters are still ignored.
func TestCollections(t *testing.T) {
	sharedSites(t)
	s, _ := newServer(t, Options{Source: Archive("filtered", withFiltered(t, allSite.out, 3), nil)})
	if got := s.cur.Load().kinds; len(got) != 1 || !got["tag"] {
		t.Fatalf("kinds %v, want tag", got)
	}
	main5 := string(file(t, allSite.out, 5, 0))
	tests := []struct {
		query  string
		status int
		body   string
	}{
		{"tag=Go&limit=20&offset=1", http.StatusOK, "tag=Go 20/1"},
		{"t%61g=G%6F", http.StatusOK, "tag=Go 5/0"},
		{"tag=Rust&tag=Go&offset=2&utm_source=x", http.StatusOK, "tag=Go 5/2"},
		{"tag=Go&offset=3", http.StatusOK, `{"count":3,"next":null,"previous":"` + base + `limit=5&tag=Go","results":[]}`},
		{"tag=Go&limit=7", http.StatusNotFound, notFoundBody},
		{"tag=Rust", http.StatusOK, `{"count":0,"next":null,"previous":null,"results":[]}`},
		{"tag=go&limit=20", http.StatusOK, `{"count":0,"next":null,"previous":null,"results":[]}`},
		{"tag=zzz&offset=40", http.StatusOK, `{"count":0,"next":null,"previous":"` + base + `limit=5&offset=35&tag=zzz","results":[]}`},
		{"tag=a+b%26c&offset=7", http.StatusOK, `{"count":0,"next":null,"previous":"` + base + `limit=5&offset=2&tag=a+b%26c","results":[]}`},
		{"tag=Rust&limit=7", http.StatusNotFound, notFoundBody},
		{"tag=Rust&offset=3", http.StatusOK, `{"count":0,"next":null,"previous":"` + base + `limit=5&tag=Rust","results":[]}`},
		{"tag=", http.StatusOK, main5},
		{"tag=Go&tag=", http.StatusOK, main5},
		{"author=x", http.StatusNotFound, notFoundBody},
		{"tag=Go&author=x", http.StatusNotFound, notFoundBody},
		{"category=x", http.StatusNotFound, notFoundBody},
		{"section=news", http.StatusNotFound, notFoundBody},
	}
	for _, tt := range tests {
		resp := request(s, http.MethodGet, "/articles/?"+tt.query, nil)
		body := readBody(t, resp)
		if resp.StatusCode != tt.status || string(body) != tt.body {
			t.Errorf("%s: got %d %.100s, want %d %.100s", tt.query, resp.StatusCode, body, tt.status, tt.body)
		}
	}
	if got := s.Current().Articles; got != 45 {
		t.Errorf("Current().Articles = %d, want the main listing's 45", got)
	}
}

// TestCollectionMissingPage refuses a build whose filtered collection
// lacks a page its count calls for.
func TestCollectionMissingPage(t *testing.T) {
	sharedSites(t)
	fsys := withFiltered(t, allSite.out, 3)
	m, err := manifest.Parse(fsys[manifest.Name].Data)
	if err != nil {
		t.Fatal(err)
	}
	m.Collections[len(m.Collections)-1].Count = 4
	if _, err := New(context.Background(), Options{Source: Archive("filtered", fsys, nil)}); err != nil {
		t.Fatalf("the build as written: %v", err)
	}
	fsys[manifest.Name] = &fstest.MapFile{Data: m.Marshal()}
	if _, err := New(context.Background(), Options{Source: Archive("filtered", fsys, nil)}); err == nil {
		t.Error("a collection with a page missing was loaded")
	}
}

// TestDecideAllocs checks that answering a query without filters with a
// pre-rendered page allocates nothing: the fast path counts on it.
func TestDecideAllocs(t *testing.T) {
	sharedSites(t)
	for _, tc := range []struct {
		name string
		opt  Options
	}{
		{"main only", Options{Source: Folder(allSite.out)}},
		{"with a filtered collection", Options{Source: Archive("filtered", withFiltered(t, allSite.out, 3), nil)}},
	} {
		s, _ := newServer(t, tc.opt)
		var cond conditions
		allocs := testing.AllocsPerRun(100, func() {
			rep := s.decide(s.cur.Load(), http.MethodGet, ListPath, "limit=20&offset=7&utm_source=x", &cond, nil)
			if rep.status != http.StatusOK {
				t.Fatalf("status %d", rep.status)
			}
		})
		if allocs != 0 {
			t.Errorf("%s: %v allocations per answer, want none", tc.name, allocs)
		}
	}
}

// BenchmarkDecide measures what the fast path does for a request between
// reading it and sending the answer: deciding the answer and writing its
// head, without the network.
func BenchmarkDecide(b *testing.B) {
	s, _ := newServer(b, Options{Source: Folder(allSite.out)})
	var cond conditions
	out := make([]byte, 0, 1<<10)
	b.ReportAllocs()
	for b.Loop() {
		rep := s.decide(s.cur.Load(), http.MethodGet, ListPath, "limit=20&offset=7", &cond, nil)
		out = rep.appendHead(out[:0], "Mon, 02 Jan 2006 15:04:05 GMT", false)
	}
}

const notFoundBody = `{"detail":"Not found."}`

// TestRecentlySent: a page is recently sent when it was last sent less
// than hotPage milliseconds before.
func TestRecentlySent(t *testing.T) {
	var p page
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	for _, step := range []struct {
		after time.Duration
		want  bool
	}{
		{0, false}, // never sent before
		{0, true},
		{time.Millisecond, true},
		{(hotPage - 1) * time.Millisecond, true},
		{hotPage * time.Millisecond, false},
		{time.Hour, false},
		{time.Microsecond, true},
	} {
		at = at.Add(step.after)
		if got := p.recentlySent(at); got != step.want {
			t.Errorf("sent again %s later: recently sent %v, want %v", step.after, got, step.want)
		}
	}
}

// TestDescribe checks the line that names a build in the log: counts
// with their nouns in agreement, "1 article", "1 page".
func TestDescribe(t *testing.T) {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	tests := []struct {
		articles, pages int
		layout          layout.Layout
		want            string
	}{
		{1, 1, layout.Pages(), "build of 2026-11-01T12:00:00Z (1 article, 1 page, 10 B)"},
		{2, 5, layout.Pages(), "build of 2026-11-01T12:00:00Z (2 articles, 5 pages, 10 B)"},
		{0, 1, layout.Chunks(), "build of 2026-11-01T12:00:00Z (0 articles, 1 file of chunks and indexes, 10 B)"},
	}
	for _, tt := range tests {
		hb := &heldBuild{buildTime: at, main: &collection{count: tt.articles}, pages: tt.pages, layout: tt.layout, bytes: 10}
		if got := hb.describe(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
