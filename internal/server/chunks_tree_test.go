package server

import (
	"bytes"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest/manifesttest"
)

// The index of a collection is a tree (chunk.IndexFormat 3): a root and
// leaves. A site of the tests is too small for a collection of more than
// one leaf of the build's sizes (about 4,096 articles): smallLeaves
// writes its indexes again as leaves of at most max chunks.

// readIndex reads the index of collection dir of the build in out,
// flattened.
func readIndex(t testing.TB, out, dir string) *chunk.Index {
	t.Helper()
	return manifesttest.ReadIndex(t, out, dir)
}

// smallLeaves writes every index of the build in out again as leaves of
// at most max chunks, and returns each collection's leaves, by folder.
func smallLeaves(t testing.TB, out string, max int) map[string][]chunk.LeafRef {
	t.Helper()
	roots := manifesttest.RewriteIndexes(t, out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
		return chunktest.TreeOf(ix, max)
	})
	leaves := map[string][]chunk.LeafRef{}
	for dir, data := range roots {
		r, err := chunk.ParseRoot(data)
		if err != nil {
			t.Fatal(err)
		}
		leaves[dir] = r.Leaves
	}
	return leaves
}

// TestChunksMatchPagesLeaves is TestChunksMatchPages over indexes of
// several leaves (a leaf a chunk): for every collection of more than one
// leaf, every limit 1..max_limit and every offset, the page a server
// assembles is the page the pages layout writes for it, byte for byte,
// pages that run from one leaf into the next included. (An archive's
// leaves are read as a folder's are, into memory: package bundle's
// TestServeLikeDir serves a bundle of such indexes.)
func TestChunksMatchPagesLeaves(t *testing.T) {
	s := chunkSite(t)
	l := siteListing(t, s)
	leaves := smallLeaves(t, s.out, 1)
	if n := len(leaves[listing.Dir]); n < 3 {
		t.Fatalf("the main listing has %d leaves, want 3 or more", n)
	}
	max := l.Pagination.MaxLimit
	srv, _ := newServer(t, Options{Source: Folder(s.out)})
	h := srv.Handler()
	n, across, colls := 0, 0, 0
	var scratch []byte
	for _, c := range l.Collections {
		if len(leaves[c.Dir]) < 2 {
			continue
		}
		colls++
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
				if len(leavesOf(leaves[c.Dir], offset, limit)) > 1 {
					across++
				}
				n++
			}
		}
	}
	if across < 100 {
		t.Fatalf("only %d pages run across leaves", across)
	}
	t.Logf("%d pages of %d collections (%d across leaves): identical", n, colls, across)
}

// leavesOf returns the leaves of a collection that page (offset, limit)
// needs.
func leavesOf(leaves []chunk.LeafRef, offset, limit int) []chunk.LeafRef {
	var need []chunk.LeafRef
	for _, lr := range leaves {
		if lr.First < offset+limit && offset < lr.First+lr.Count {
			need = append(need, lr)
		}
	}
	return need
}

var unavailableLeafLine = regexp.MustCompile(`(?m)^1 page of the build of 2026-11-01T12:00:00Z does not match its manifest \(a build died or is being written, or it changed since\): articles/chunks/[0-9a-f]{2}/[0-9a-f]{64}\.leaf\.json; answering 503 for it until a build rewrites it \(feedgen build; --clean checks every file's bytes\)$`)

// TestChunksDamagedLeaf starts a server on a build whose leaf was
// damaged after the build (other bytes, cut short, removed), a leaf of
// the main listing in the middle: as for a damaged chunk, the pages that
// need it answer 503 with Retry-After, every other page its bytes (of
// the main listing, and of another collection), and the log says it
// once; the next build mends it.
func TestChunksDamagedLeaf(t *testing.T) {
	s := chunkSite(t)
	l := siteListing(t, s)
	leaves := smallLeaves(t, s.out, 1)
	bad := leaves[listing.Dir][1]
	name := filepath.Join(s.out, filepath.FromSlash(bad.Path))
	good, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	var colls []*feed.Collection // the main listing, and one other
	for _, c := range l.Collections {
		if c.Dir == listing.Dir || len(colls) == 1 && c.Count() > 24 {
			colls = append(colls, c)
		}
	}
	for _, tc := range []struct {
		name   string
		damage func() error
	}{
		{"other bytes", func() error {
			data := bytes.Clone(good)
			data[len(data)/2] ^= 1
			return os.WriteFile(name, data, 0o644)
		}},
		{"cut short", func() error { return os.Truncate(name, 10) }},
		{"missing", func() error { return os.Remove(name) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.damage(); err != nil {
				t.Fatal(err)
			}
			defer manifesttest.Replace(t, s.out, bad.Path, good)
			srv, log := newServer(t, Options{Source: Folder(s.out)})
			if n := len(unavailableLeafLine.FindAllString(log.String(), -1)); n != 1 || !strings.Contains(log.String(), bad.Path) {
				t.Errorf("got %d lines about the leaf %s, want 1; log:\n%s", n, bad.Path, log)
			}
			h := srv.Handler()
			var ok, unavailable int
			for _, c := range colls {
				for _, limit := range []int{1, 5, 24} {
					for offset := 0; offset < c.Count(); offset++ {
						q := query(c, limit, offset)
						resp := request(h, http.MethodGet, "/articles/?"+q, nil)
						got := readBody(t, resp)
						if slices.Contains(leavesOf(leaves[c.Dir], offset, limit), bad) {
							unavailable++
							if resp.StatusCode != http.StatusServiceUnavailable || string(got) != `{"detail":"Service temporarily unavailable, try again later."}` || resp.Header.Get("Retry-After") != "5" {
								t.Fatalf("?%s needs the damaged leaf: got %d %q (Retry-After %q), want 503 with Retry-After", q, resp.StatusCode, got, resp.Header.Get("Retry-After"))
							}
							continue
						}
						ok++
						want, err := l.AppendPage(nil, feed.Page{Coll: c, Limit: limit, Offset: offset})
						if err != nil {
							t.Fatal(err)
						}
						if resp.StatusCode != http.StatusOK || !bytes.Equal(got, want) {
							t.Fatalf("?%s does not need the damaged leaf: status %d\n got %.300s\nwant %.300s", q, resp.StatusCode, got, want)
						}
					}
				}
			}
			if unavailable == 0 || ok < unavailable {
				t.Fatalf("%d pages answered, %d unavailable", ok, unavailable)
			}
		})
	}

	// The next build writes the leaf's articles again (of its own
	// sizes: other leaves), and every page is answered.
	if err := os.Remove(name); err != nil {
		t.Fatal(err)
	}
	srv, _ := newServer(t, Options{Source: Folder(s.out), RetryInterval: 5 * time.Millisecond, PollInterval: 30 * time.Millisecond})
	target := "/articles/?" + query(l.Main(), 1, bad.First)
	if code := request(srv, http.MethodGet, target, nil).StatusCode; code != http.StatusServiceUnavailable {
		t.Fatalf("%s: %d before the build, want 503", target, code)
	}
	followBuilds(t, srv)
	s.build(t, s.out)
	waitFor(t, 5*time.Second, "every page to be served", func() bool {
		return request(srv, http.MethodGet, target, nil).StatusCode == http.StatusOK
	})
	for offset := range l.Main().Count() {
		want, err := l.AppendPage(nil, feed.Page{Coll: l.Main(), Limit: 5, Offset: offset})
		if err != nil {
			t.Fatal(err)
		}
		q := query(l.Main(), 5, offset)
		if got := readBody(t, request(srv, http.MethodGet, "/articles/?"+q, nil)); !bytes.Equal(got, want) {
			t.Fatalf("after the build, ?%s:\n got %.300s\nwant %.300s", q, got, want)
		}
	}
}

// TestServeOldIndexFormat serves a build whose indexes an older feedgen
// wrote (format 2: flat, at chunks.json, no leaves), its manifest
// matching: it is refused at once, saying to rebuild, never read as a
// tree; a server following a folder keeps its build when such a build
// replaces it.
func TestServeOldIndexFormat(t *testing.T) {
	// The first index in the manifest's order.
	const want = `articles/(\S+/)?chunks\.json: reading chunk index: chunk index format 2, not 3: written by another version of feedgen; rebuild the output \(feedgen build\)`
	t.Run("start", func(t *testing.T) {
		s := chunkSite(t)
		manifesttest.RewriteIndexes(t, s.out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
			return chunktest.FormatTwo(ix), nil
		})
		var log strings.Builder
		start := time.Now()
		_, err := New(t.Context(), Options{Source: Folder(s.out), Log: &log, StartTimeout: 5 * time.Second})
		if re := regexp.MustCompile("^" + regexp.QuoteMeta(s.out) + ": " + want + "$"); err == nil || !re.MatchString(err.Error()) {
			t.Errorf("got %v, want an error matching %s", err, re)
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("refused in %s: it waited for a build", d)
		}
		var fe *chunk.FormatError
		if !errors.As(err, &fe) {
			t.Errorf("%v is not a chunk.FormatError", err)
		}
	})
	t.Run("switch", func(t *testing.T) {
		s := chunkSite(t)
		srv, log := newServer(t, Options{Source: Folder(s.out), PollInterval: 20 * time.Millisecond, RetryInterval: 5 * time.Millisecond})
		ev := followBuilds(t, srv)
		before := log.String()
		a0, p0 := ev.counts()
		manifesttest.RewriteIndexes(t, s.out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
			return chunktest.FormatTwo(ix), nil
		})
		waitFor(t, 5*time.Second, "the old build to be refused", func() bool { return len(log.String()) > len(before) })
		ev.waitMore(t, "a few polls", a0, p0, 0, 3)
		re := regexp.MustCompile("^" + regexp.QuoteMeta(s.out) + ": not switching builds: " + want + `; still serving the build of 2026-11-01T12:00:00Z \(150 articles, .*\)\n$`)
		if said := strings.TrimPrefix(log.String(), before); !re.MatchString(said) {
			t.Errorf("got log %q, want one line saying to rebuild", said)
		}
		resp := request(srv, http.MethodGet, "/articles/?limit=24&offset=20", nil)
		if got := readBody(t, resp); resp.StatusCode != http.StatusOK || !bytes.HasPrefix(got, []byte(`{"count":150,`)) {
			t.Errorf("after the old build: %d %.80q, want the build served before", resp.StatusCode, got)
		}
	})
}
