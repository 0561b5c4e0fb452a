package server

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/syndication"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestFeeds serves a build with reader feeds, in both layouts, from its
// folder and from memory: every feed of the manifest answers at its URL
// (the collection's filter parameters, any order, with limit, offset and
// unknown parameters ignored) with its file's bytes, its format's
// Content-Type, its ETag and its newest item's Last-Modified; a HEAD the
// same head; a conditional GET 304; a collection the build does not have,
// 404; the other methods as the listing's.
func TestFeeds(t *testing.T) {
	for _, lay := range []string{"pages", "chunks"} {
		site := makeSite(t, corpus.Options{Articles: 30, Limits: []int{5, 10}, Seed: 4, Layout: lay,
			Filters: []string{"section", "category", "tag", "author"}, Feeds: true})
		m := readManifest(t, site.out)
		for _, src := range []struct {
			name string
			s    Source
		}{
			{"folder", Folder(site.out)},
			{"memory", Archive("site", os.DirFS(site.out), nil)},
		} {
			t.Run(lay+"/"+src.name, func(t *testing.T) {
				s, _ := newServer(t, Options{Source: src.s})
				feeds := 0
				for _, c := range m.Collections {
					for _, f := range syndication.Formats() {
						p := layout.FeedPath(c.Dir, f)
						data, err := os.ReadFile(filepath.Join(site.out, filepath.FromSlash(p)))
						if c.Count == 0 {
							if err == nil {
								t.Errorf("%s: a feed of a collection without articles", p)
							}
							continue
						}
						if err != nil {
							t.Fatal(err)
						}
						feeds++
						// Parameters in reverse order, with others.
						q := "limit=7&offset=3&utm_source=x"
						for i := len(c.Params) - 1; i >= 0; i-- {
							q += "&" + c.Params[i].Key + "=" + url.QueryEscape(c.Params[i].Value)
						}
						target := listing.Path + f.File + "?" + q
						resp := request(s, http.MethodGet, target, nil)
						body, _ := io.ReadAll(resp.Body)
						if resp.StatusCode != 200 || !bytes.Equal(body, data) {
							t.Fatalf("GET %s: %d, %d bytes; want 200 and the %d of %s", target, resp.StatusCode, len(body), len(data), p)
						}
						modified, err := syndication.Modified(f, data)
						if err != nil {
							t.Fatal(err)
						}
						wantHead := map[string]string{
							"Content-Type": f.ContentType, "Etag": etagOf(data),
							"Last-Modified": modified.UTC().Format(http.TimeFormat), "Allow": listing.Allow, "Vary": listing.Vary,
						}
						for k, v := range wantHead {
							if got := resp.Header.Get(k); got != v {
								t.Errorf("GET %s: %s %q, want %q", target, k, got, v)
							}
						}
						head := request(s, http.MethodHead, target, nil)
						if head.StatusCode != 200 || head.Header.Get("Content-Length") != resp.Header.Get("Content-Length") || head.Header.Get("Etag") != etagOf(data) {
							t.Errorf("HEAD %s: %d %v", target, head.StatusCode, head.Header)
						}
						if r := request(s, http.MethodGet, target, http.Header{"If-None-Match": {etagOf(data)}}); r.StatusCode != http.StatusNotModified {
							t.Errorf("GET %s If-None-Match: %d, want 304", target, r.StatusCode)
						}
						if r := request(s, http.MethodGet, target, http.Header{"If-Modified-Since": {wantHead["Last-Modified"]}}); r.StatusCode != http.StatusNotModified {
							t.Errorf("GET %s If-Modified-Since: %d, want 304", target, r.StatusCode)
						}
					}
				}
				if feeds == 0 {
					t.Fatal("no feeds in the build")
				}
				for _, tc := range []struct {
					method, target string
					status         int
				}{
					{"GET", "/articles/feed.rss?tag=no+such+tag", 404},
					{"GET", "/articles/feed.rss?color=red", 200}, // not a filter: the main listing's
					{"GET", "/articles/feed.xml", 404},
					{"GET", "/articles/feed.rss/", 404},
					{"POST", "/articles/feed.atom", 405},
					{"OPTIONS", "/articles/feed.json", 200},
				} {
					if r := request(s, tc.method, tc.target, nil); r.StatusCode != tc.status {
						t.Errorf("%s %s: %d, want %d", tc.method, tc.target, r.StatusCode, tc.status)
					}
				}
			})
		}
	}
}

// TestFeedsFastPath checks that the fast path answers the feeds with the
// bytes net/http writes for them, in both layouts.
func TestFeedsFastPath(t *testing.T) {
	for _, lay := range []string{"pages", "chunks"} {
		t.Run(lay, func(t *testing.T) {
			site := makeSite(t, corpus.Options{Articles: 12, Seed: 5, Layout: lay, Filters: []string{"tag"}, Feeds: true})
			s, _ := newServer(t, Options{Source: Folder(site.out)})
			fast, plain := serveTwoWays(t, s)
			rss, err := os.ReadFile(filepath.Join(site.out, "articles", "feed.rss"))
			if err != nil {
				t.Fatal(err)
			}
			const h = " HTTP/1.1\r\nHost: example.com\r\n"
			for _, req := range []string{
				"GET /articles/feed.rss" + h + "\r\n",
				"HEAD /articles/feed.atom?limit=3" + h + "\r\n",
				"GET /articles/feed.json?tag=nothing" + h + "\r\n",
				"GET /articles/feed.rss" + h + "If-None-Match: " + etagOf(rss) + "\r\n\r\n",
				"GET /articles/feed.rss?x=1" + h + "\r\nGET /articles/?limit=20" + h + "\r\n",
			} {
				methods := []string{"GET"}
				if strings.Count(req, "HTTP/1.1") == 2 {
					methods = []string{"GET", "GET"}
				} else if strings.HasPrefix(req, "HEAD") {
					methods = []string{"HEAD"}
				}
				got := sameBothWays(t, fast, plain, req, methods)
				if strings.HasPrefix(req, "GET /articles/feed.rss"+h+"\r\n") && !strings.Contains(got, "Content-Type: application/rss+xml; charset=utf-8\r\n") {
					t.Errorf("%q: %.300q", req, got)
				}
			}
		})
	}
}

// TestFeedsOwnStores loads a build in memory, then the next build of the
// same site (one old article edited: most feeds the same bytes) after it,
// as the preview and a reloaded bundle do: every feed of the second build
// is held in a store of its own (an unchanged feed does not keep the first
// build's stores alive), with the bytes of its file and its Last-Modified.
func TestFeedsOwnStores(t *testing.T) {
	opt := corpus.Options{Articles: 30, Limits: []int{5}, Seed: 6, Filters: []string{"tag", "author"}, Feeds: true}
	site := makeSite(t, opt)
	load := func(prev *heldBuild) *heldBuild {
		t.Helper()
		snap, err := manifest.Read(os.DirFS(site.out))
		if err != nil {
			t.Fatal(err)
		}
		hb, err := loadBuild(context.Background(), snap.Data, snap.Manifest, loadSource{fsys: os.DirFS(site.out), prev: prev})
		if err != nil {
			t.Fatal(err)
		}
		return hb
	}
	first := load(nil)
	// An old article: in none of the feeds (of the 5 newest).
	path, data := corpus.Article(opt, 0)
	testfiles.WriteFile(t, filepath.Join(site.dir, filepath.FromSlash(path)), strings.Replace(string(data), "title: ", "title: Edited ", 1))
	site.build(t, site.out)
	second := load(first)
	own := map[*store]bool{}
	for _, st := range second.stores {
		own[st] = true
	}
	held := 0
	for _, c := range second.collections {
		for k, fp := range c.feeds {
			if fp == nil {
				continue
			}
			held++
			f := syndication.Formats()[k]
			want, err := os.ReadFile(filepath.Join(site.out, filepath.FromSlash(layout.FeedPath(c.dir, f))))
			if err != nil {
				t.Fatal(err)
			}
			if !own[fp.pg.st] || !bytes.Equal(fp.pg.body, want) {
				t.Errorf("%s %s: in a store of its own %v, its file's bytes %v", c.dir, f.Name, own[fp.pg.st], bytes.Equal(fp.pg.body, want))
			}
			if date, _ := syndication.Modified(f, want); !fp.lastMod.Equal(date) || fp.modified[0] != date.UTC().Format(http.TimeFormat) {
				t.Errorf("%s %s: Last-Modified %v %v, want %v", c.dir, f.Name, fp.lastMod, fp.modified, date)
			}
		}
	}
	if held == 0 {
		t.Fatal("no feeds held")
	}
}

// TestFeedFormatsOfTheBuild checks that the feed path of a format the
// build has no feeds in is no path of the build's, whatever the method:
// it answers as any other unknown path does (the JSON 404, without the
// listing's Allow and Vary), in a build without feeds and in one with
// only RSS; the formats it has answer.
func TestFeedFormatsOfTheBuild(t *testing.T) {
	none := makeSite(t, corpus.Options{Articles: 6, Seed: 7, Filters: []string{"tag"}})
	rss := makeSite(t, corpus.Options{Articles: 6, Seed: 7, Filters: []string{"tag"}, Feeds: true})
	cfg := filepath.Join(rss.dir, "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	testfiles.WriteFile(t, cfg, strings.Replace(string(data), "feeds:\n", "feeds:\n  formats: [rss]\n", 1))
	rss.build(t, rss.out)
	for _, tc := range []struct {
		site    testSite
		formats []string // those answered
	}{{none, nil}, {rss, []string{"rss"}}} {
		s, _ := newServer(t, Options{Source: Folder(tc.site.out)})
		other := request(s, http.MethodPost, "/articles/feed.xml", nil)
		otherBody, _ := io.ReadAll(other.Body)
		for _, f := range syndication.Formats() {
			answered := slices.Contains(tc.formats, f.Name)
			for _, method := range []string{"GET", "POST", "OPTIONS"} {
				target := listing.Path + f.File
				r := request(s, method, target, nil)
				body, _ := io.ReadAll(r.Body)
				if answered {
					if r.Header.Get("Allow") != listing.Allow {
						t.Errorf("formats %v: %s %s: %d, Allow %q; want the listing's", tc.formats, method, target, r.StatusCode, r.Header.Get("Allow"))
					}
					continue
				}
				if r.StatusCode != http.StatusNotFound || !bytes.Equal(body, otherBody) || r.Header.Get("Allow") != "" || r.Header.Get("Vary") != other.Header.Get("Vary") {
					t.Errorf("formats %v: %s %s: %d %q, Allow %q; want %d %q as any other path", tc.formats, method, target, r.StatusCode, body, r.Header.Get("Allow"), other.StatusCode, otherBody)
				}
			}
		}
	}
}
