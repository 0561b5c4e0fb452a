package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// chunkSite is a site of the chunks layout with all four filters: 150
// articles, max_limit 24, so that the main listing has several chunks and
// pages cross their ends.
func chunkSite(t *testing.T) testSite {
	t.Helper()
	return makeSite(t, corpus.Options{
		Articles: 150, Limits: []int{5, 24}, Seed: 3, Layout: layout.ChunksName,
		Filters: []string{"section", "category", "tag", "author"},
	})
}

// siteListing loads the content of s and renders its listing, as a build
// of the pages layout does: the bytes of every page file it would write.
func siteListing(t *testing.T, s testSite) *feed.Listing { return siteListingOf(t, s) }

// siteListingOf is siteListing for a test, benchmark or fuzz test.
func siteListingOf(t testing.TB, s testSite) *feed.Listing {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dir, corpus.ConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(corpus.ConfigPath, s.dir, data)
	if err != nil {
		t.Fatal(err)
	}
	site, err := content.NewLoader(cfg).Load(context.Background(), content.DirFS(cfg.ContentDir), content.Options{Now: buildTime, Root: cfg.ContentDir})
	if err != nil {
		t.Fatal(err)
	}
	return feed.New(cfg.BaseURL, cfg.Pagination, cfg.Filters, site.Articles)
}

// query returns the query of page (limit, offset) of collection c.
func query(c *feed.Collection, limit, offset int) string {
	v := url.Values{}
	for _, p := range c.Params {
		v.Set(p.Key, p.Value)
	}
	v.Set("limit", strconv.Itoa(limit))
	v.Set("offset", strconv.Itoa(offset))
	return v.Encode()
}

// TestChunksMatchPages is the differential test of the chunks layout: for
// every collection, every limit 1..max_limit and every offset (and past
// the end), the page a server assembles from chunks is the page the pages
// layout writes for it, byte for byte; served from the folder (chunks
// mapped or not) and from an archive, as a bundle is.
func TestChunksMatchPages(t *testing.T) {
	s := chunkSite(t)
	l := siteListing(t, s)
	max := l.Pagination.MaxLimit
	sources := map[string]Options{
		"folder":      {Source: Folder(s.out)},
		"descriptors": {Source: Folder(s.out), noMapping: true},
	}
	// What a bundle is served as (package bundle's tests serve real
	// ones): files read from an fs.FS into stores.
	sources["archive"] = Options{Source: Archive("archive", os.DirFS(s.out), nil)}
	for name, opt := range sources {
		t.Run(name, func(t *testing.T) {
			srv, _ := newServer(t, opt)
			h := srv.Handler()
			n := 0
			var scratch []byte
			for _, c := range l.Collections {
				for limit := 1; limit <= max; limit++ {
					for offset := 0; offset <= c.Count()+1; offset++ {
						want, err := l.AppendPage(scratch[:0], feed.Page{Coll: c, Limit: limit, Offset: offset})
						if err != nil {
							t.Fatal(err)
						}
						scratch = want
						q := query(c, limit, offset)
						resp := request(h, http.MethodGet, "/articles/?"+q, nil)
						got := readBody(t, resp)
						if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
							t.Fatalf("?%s: status %d\n got %.300s\nwant %.300s", q, resp.StatusCode, got, want)
						}
						if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(want)) {
							t.Fatalf("?%s: Content-Length %s, body %d bytes", q, cl, len(want))
						}
						n++
					}
				}
			}
			t.Logf("%d pages of %d collections, limits 1..%d: identical", n, len(l.Collections), max)
		})
	}
}

// TestChunksMatchPagesFiles compares the page files of a build of the
// pages layout with what a server of the chunks layout answers for them,
// on the same content: every file of limits [1, 7, 24], every offset.
func TestChunksMatchPagesFiles(t *testing.T) {
	s := chunkSite(t)
	cfgPath := filepath.Join(s.dir, corpus.ConfigPath)
	cfg, err := os.ReadFile(cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	pagesCfg := strings.Replace(string(cfg), "limits: [5, 24]", "limits: [1, 5, 7, 24]", 1)
	pagesCfg = strings.Replace(pagesCfg, `layout: "chunks"`, `layout: "pages"`, 1)
	if pagesCfg == string(cfg) {
		t.Fatal("could not turn the config into the pages layout's")
	}
	pagesDir := t.TempDir()
	os.WriteFile(filepath.Join(pagesDir, corpus.ConfigPath), []byte(pagesCfg), 0o644)
	os.Symlink(filepath.Join(s.dir, "content"), filepath.Join(pagesDir, "content"))
	ps := testSite{dir: pagesDir, out: filepath.Join(pagesDir, "public")}
	ps.build(t, ps.out)
	m := readManifest(t, ps.out)

	srv, _ := newServer(t, Options{Source: Folder(s.out)})
	h := srv.Handler()
	params := map[string][]listing.Param{}
	for _, c := range m.Collections {
		params[c.Dir] = c.Params
	}
	n := 0
	for _, f := range m.Files {
		k, ok := listing.ParsePageKey(f.Path)
		if !ok {
			t.Fatalf("%s: not a page", f.Path)
		}
		v := url.Values{}
		for _, p := range params[k.Dir] {
			v.Set(p.Key, p.Value)
		}
		if !k.Index {
			v.Set("limit", strconv.Itoa(k.Limit))
			v.Set("offset", strconv.Itoa(k.Offset))
		}
		want, err := os.ReadFile(filepath.Join(ps.out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		resp := request(h, http.MethodGet, "/articles/?"+v.Encode(), nil)
		if got := readBody(t, resp); resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Fatalf("%s (?%s): status %d\n got %.300s\nwant %.300s", f.Path, v.Encode(), resp.StatusCode, got, want)
		}
		n++
	}
	if n < 1000 {
		t.Fatalf("only %d pages compared", n)
	}
	t.Logf("%d page files identical", n)
}

// TestChunksAnswers checks what a chunked build answers beyond pages:
// lenient parsing, limits no config lists, clamping, past the end,
// methods, the redirect, conditional requests, and entity tags that
// differ between pages.
func TestChunksAnswers(t *testing.T) {
	s := chunkSite(t)
	l := siteListing(t, s)
	srv, _ := newServer(t, Options{Source: Folder(s.out)})
	h := srv.Handler()
	page := func(limit, offset int) string {
		b, err := l.AppendPage(nil, feed.Page{Coll: l.Main(), Limit: limit, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	empty := func(limit int, offset string) string {
		return string(listing.AppendEmptyPage(nil, l.BaseURL, nil, l.Main().Count(), limit, offset))
	}
	for _, tc := range []struct {
		method, target string
		status         int
		body           string
	}{
		{"GET", "/articles/", 200, page(5, 0)},
		{"GET", "/articles/?limit=13&offset=17", 200, page(13, 17)},
		{"GET", "/articles/?offset=17&limit=13", 200, page(13, 17)},
		{"GET", "/articles/?limit=+13_0&offset=%EF%BC%91%EF%BC%97", 200, page(24, 17)}, // 130 clamped; fullwidth 17
		{"GET", "/articles/?limit=%2013%20&offset=17&offset=x", 200, page(13, 0)},
		{"GET", "/articles/?limit=0", 200, page(5, 0)},
		{"GET", "/articles/?limit=-3&offset=-1", 200, page(5, 0)},
		{"GET", "/articles/?limit=999999999999999999999999", 200, page(24, 0)},
		{"GET", "/articles/?limit=7&offset=149", 200, page(7, 149)},
		{"GET", "/articles/?limit=7&offset=150", 200, empty(7, "150")},
		{"GET", "/articles/?limit=7&offset=99999999999999999999999", 200, empty(7, "99999999999999999999999")},
		{"GET", "/articles/?limit=7&offset=utm", 200, page(7, 0)},
		{"HEAD", "/articles/?limit=7&offset=3", 200, ""},
		{"OPTIONS", "/articles/", 200, string(listing.OptionsBody)},
		{"POST", "/articles/", 405, `{"detail":"Method \"POST\" not allowed."}`},
		{"GET", "/articles?limit=3", 301, ""},
		{"GET", "/articles/chunks.json", 404, string(listing.NotFoundBody)},
		{"GET", "/articles/?tag=zzz&offset=40", 200, string(listing.AppendEmptyPage(nil, l.BaseURL, []listing.Param{{Key: "tag", Value: "zzz"}}, 0, 5, "40"))},
		{"GET", "/articles/?category=x", 404, string(listing.NotFoundBody)},
	} {
		resp := request(h, tc.method, tc.target, nil)
		got := string(readBody(t, resp))
		if resp.StatusCode != tc.status || tc.status != 301 && got != tc.body {
			t.Errorf("%s %s: %d %.200s\nwant %d %.200s", tc.method, tc.target, resp.StatusCode, got, tc.status, tc.body)
		}
		if tc.method == "HEAD" && resp.Header.Get("Content-Length") != strconv.Itoa(len(page(7, 3))) {
			t.Errorf("HEAD: Content-Length %s, want %d", resp.Header.Get("Content-Length"), len(page(7, 3)))
		}
	}

	// Entity tags: one per body, and 304 for it.
	tags := map[string]string{}
	for _, q := range []string{"limit=5&offset=0", "limit=5&offset=1", "limit=6&offset=0", "limit=24&offset=30", "tag=zzz"} {
		resp := request(h, "GET", "/articles/?"+q, nil)
		body := readBody(t, resp)
		tag := resp.Header.Get("Etag")
		if other, ok := tags[tag]; ok || tag == "" {
			t.Errorf("?%s: entity tag %q, also of ?%s", q, tag, other)
		}
		tags[tag] = q
		resp = request(h, "GET", "/articles/?"+q, http.Header{"If-None-Match": {tag}})
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("?%s with If-None-Match %s: %d, want 304", q, tag, resp.StatusCode)
		}
		resp = request(h, "GET", "/articles/?"+q, http.Header{"If-Modified-Since": {buildTime.Add(time.Hour).Format(http.TimeFormat)}})
		if resp.StatusCode != http.StatusNotModified {
			t.Errorf("?%s with If-Modified-Since: %d, want 304", q, resp.StatusCode)
		}
		_ = body
	}
	if t.Failed() {
		fmt.Println(srv.Current())
	}
}

// TestFastPathMatchesNetHTTPChunks checks that the fast path sends a page
// put together from chunks (one writev) as net/http does, also pipelined
// and for pages that cross chunks, and every page of a walk over limits
// and offsets of the main listing and a tag.
func TestFastPathMatchesNetHTTPChunks(t *testing.T) {
	s := chunkSite(t)
	for _, mode := range sendModes {
		t.Run(mode.name, func(t *testing.T) {
			opt := Options{Source: Folder(s.out)}
			mode.opt(&opt)
			srv, _ := newServer(t, opt)
			fast, plain := serveTwoWays(t, srv)
			const h = " HTTP/1.1\r\nHost: example.com:8080\r\n"
			resp := request(srv.Handler(), "GET", "/articles/?limit=24&offset=20", nil)
			etag := resp.Header.Get("Etag")
			for _, req := range []string{
				"GET /articles/" + h + "\r\n",
				"HEAD /articles/?limit=24&offset=20" + h + "\r\n",
				"GET /articles/?limit=24&offset=20" + h + "If-None-Match: " + etag + "\r\n\r\n",
				"GET /articles/?limit=24&offset=20" + h + "If-None-Match: \"x\"\r\n\r\n",
				"GET /articles/?limit=%2013&offset=+0_7" + h + "\r\n",
				"GET /articles/?offset=1000000000000000000000000" + h + "\r\n",
				"GET /articles/?tag=zzz&offset=3" + h + "\r\n",
			} {
				sameBothWays(t, fast, plain, req, nil)
			}
			var pipelined strings.Builder
			var methods []string
			for limit := 1; limit <= 24; limit += 5 {
				for offset := 0; offset < 160; offset += 7 {
					fmt.Fprintf(&pipelined, "GET /articles/?limit=%d&offset=%d%s\r\n", limit, offset, h)
					fmt.Fprintf(&pipelined, "GET /articles/?limit=%d&offset=%d&tag=%s%s\r\n", limit, offset/5, url.QueryEscape(firstTag(t, s)), h)
					methods = append(methods, "GET", "GET")
				}
			}
			sameBothWays(t, fast, plain, pipelined.String(), methods)
		})
	}
}

// firstTag returns the tag of the largest tag collection of s.
func firstTag(t *testing.T, s testSite) string {
	t.Helper()
	tag, most := "", 0
	for _, c := range readManifest(t, s.out).Collections {
		if len(c.Params) == 1 && c.Params[0].Key == "tag" && c.Count > most {
			tag, most = c.Params[0].Value, c.Count
		}
	}
	if most < 5 {
		t.Fatalf("no tag of 5 articles or more")
	}
	return tag
}

// BenchmarkDecideChunks is the work of one answer of a chunked build but
// the sending: parsing the query, putting the page together, its entity
// tag.
func BenchmarkDecideChunks(b *testing.B) {
	s, err := writeSite(b.TempDir(), corpus.Options{Articles: 1000, Limits: []int{20, 100}, Seed: 3, Layout: layout.ChunksName})
	if err != nil {
		b.Fatal(err)
	}
	s.build(b, s.out)
	srv, _ := newServer(b, Options{Source: Folder(s.out)})
	hb := srv.cur.Load()
	var asm assembled
	var cond conditions
	for _, q := range []string{"limit=20&offset=40", "limit=100&offset=517"} {
		b.Run(q, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				rep := srv.decide(hb, http.MethodGet, ListPath, q, &cond, &asm)
				if rep.status != http.StatusOK || rep.asm == nil {
					b.Fatal(rep.status)
				}
			}
		})
	}
}

// FuzzServeChunks checks the answer of a chunked build to any query of
// a collection it has against the page the pages layout writes for the
// query as ParseQuery reads it (or the page past the end).
func FuzzServeChunks(f *testing.F) {
	for _, q := range []string{
		"", "limit=7&offset=3", "limit=%2013&offset=+1_0", "limit=999&offset=149", "offset=150", "tag=x&limit=3",
		"section=news&limit=2&offset=1", "limit=0&offset=-1", "offset=99999999999999999999999", "limit=%D9%A2",
	} {
		f.Add(q)
	}
	s, err := writeSite(f.TempDir(), corpus.Options{
		Articles: 150, Limits: []int{5, 24}, Seed: 3, Layout: layout.ChunksName,
		Filters: []string{"section", "category", "tag", "author"},
	})
	if err != nil {
		f.Fatal(err)
	}
	s.build(f, s.out)
	l := siteListingOf(f, s)
	byKey := map[string]*feed.Collection{}
	for _, c := range l.Collections {
		byKey[collectionKey(c.Params)] = c
	}
	srv, _ := newServer(f, Options{Source: Folder(s.out)})
	f.Fuzz(func(t *testing.T, raw string) {
		resp := request(srv, http.MethodGet, "/articles/?"+raw, nil)
		got := readBody(t, resp)
		q := listing.ParseQuery(raw, l.Pagination, l.Filters)
		c := byKey[collectionKey(q.Params)]
		if c == nil {
			return // no such collection: empty or not found, as TestChunksAnswers checks
		}
		var want []byte
		if off, small := canonical(q.Offset); small && off < c.Count() {
			if want, err = l.AppendPage(nil, feed.Page{Coll: c, Limit: q.Limit, Offset: off}); err != nil {
				t.Fatal(err)
			}
		} else {
			want = listing.AppendEmptyPage(nil, l.BaseURL, c.Params, c.Count(), q.Limit, q.Offset)
		}
		if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
			t.Fatalf("?%s: %d\n got %.300s\nwant %.300s", raw, resp.StatusCode, got, want)
		}
	})
}

// TestCompactChunks is TestCompact for a chunks build in memory (the
// preview's): after each of many rebuilds, some of which compact the
// stores, and the stores no build uses collected, every page is the
// pages layout's.
func TestCompactChunks(t *testing.T) {
	s, err := writeSite(t.TempDir(), corpus.Options{Articles: 60, Limits: []int{5, 24}, Seed: 5, Layout: layout.ChunksName, Filters: []string{"tag"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, Options{Source: Pushed("")})
	srv.compactSlack = 0
	mb := newMemoryBuild(t, srv, s)
	mb.rebuild(t, nil)
	h := srv.Handler()
	compacted := false
	for i := range 12 {
		before := len(srv.cur.Load().stores)
		path := editTitle(t, s, i, "Title number "+strconv.Itoa(i))
		mb.rebuild(t, []string{filepath.Join(s.dir, "content", filepath.FromSlash(path))})
		if len(srv.cur.Load().stores) == 1 && before > 1 {
			compacted = true
		}
		runtime.GC() // the stores no build uses are unmapped
		runtime.GC()
		l := siteListing(t, s)
		for _, c := range l.Collections {
			for _, limit := range []int{1, 7, 24} {
				for offset := 0; offset < c.Count(); offset += 5 {
					want, err := l.AppendPage(nil, feed.Page{Coll: c, Limit: limit, Offset: offset})
					if err != nil {
						t.Fatal(err)
					}
					q := query(c, limit, offset)
					if got := readBody(t, request(h, http.MethodGet, "/articles/?"+q, nil)); !bytes.Equal(got, want) {
						t.Fatalf("after rebuild %d, ?%s:\n got %.200s\nwant %.200s", i, q, got, want)
					}
				}
			}
		}
	}
	if !compacted {
		t.Errorf("no rebuild compacted the stores")
	}
}

// TestChunksLeavesTakenOver checks that a build loaded after another
// takes the leaves of the indexes they share as the other parsed and
// checked them, and parses only its new ones: an edited article changes
// the leaves of the collections that hold it, no other.
func TestChunksLeavesTakenOver(t *testing.T) {
	s, err := writeSite(t.TempDir(), corpus.Options{Articles: 60, Limits: []int{5, 24}, Seed: 5, Layout: layout.ChunksName, Filters: []string{"tag"}})
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, Options{Source: Pushed("")})
	mb := newMemoryBuild(t, srv, s)
	mb.rebuild(t, nil)
	before := srv.cur.Load().leaves
	path := editTitle(t, s, 0, "An edited title")
	mb.rebuild(t, []string{filepath.Join(s.dir, "content", filepath.FromSlash(path))})
	after := srv.cur.Load().leaves
	taken, parsed := 0, 0
	for sum, l := range after {
		switch {
		case before[sum] == l:
			taken++
		case before[sum] != nil:
			t.Errorf("leaf %x was parsed again", sum[:4])
		default:
			parsed++
		}
	}
	if taken == 0 || parsed == 0 || parsed >= taken {
		t.Errorf("%d leaves taken over, %d parsed: want most taken, a few parsed (those of the edited article's collections)", taken, parsed)
	}
}

// TestChunksConnectionAcrossBuilds asks one kept-alive connection of the
// fast path for the same page before and after a new build with other
// bytes for it: the page a connection answered last is kept only for its
// build.
func TestChunksConnectionAcrossBuilds(t *testing.T) {
	s := chunkSite(t)
	srv, _ := newServer(t, Options{Source: Folder(s.out)})
	conn, err := net.Dial("tcp", strings.TrimPrefix(serve(t, srv), "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	r := bufio.NewReader(conn)
	get := func() string {
		t.Helper()
		if _, err := io.WriteString(conn, "GET /articles/?limit=24&offset=0 HTTP/1.1\r\nHost: x\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(r, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp.Header.Get("Etag") + " " + string(body)
	}
	before := get()
	if again := get(); again != before {
		t.Fatalf("the same page twice differs")
	}
	l := siteListing(t, s)
	title := l.Main().Articles[0].Title
	path := ""
	files, _ := filepath.Glob(filepath.Join(s.dir, "content", "*", "*", "*.md"))
	for _, f := range files {
		if data, _ := os.ReadFile(f); strings.Contains(string(data), "id: "+strconv.FormatInt(l.Main().Articles[0].ID, 10)+"\n") {
			path = f
		}
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	testfiles.Replace(t, path, strings.Replace(string(data), "title: ", "title: Rebuilt ", 1))
	s.build(t, s.out)
	if _, err := srv.Reload(); err != nil { // switched by now, or here
		t.Fatal(err)
	}
	if !strings.Contains(string(readBody(t, request(srv, http.MethodGet, "/articles/?limit=24", nil))), "Rebuilt") {
		t.Fatal("the server did not switch to the new build")
	}
	after := get()
	if tag, _, _ := strings.Cut(after, " "); tag == strings.Fields(before)[0] || !strings.Contains(after, "Rebuilt") {
		t.Errorf("after a new build, the connection got the old page or its entity tag (%q was first)", title)
	}
}
