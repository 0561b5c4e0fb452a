package importer

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// roundTrip imports the listing at url, writes the site, builds it at now
// and compares every page of the main listing with those of the build in
// orig, byte for byte: the rebuilt page files (layout: pages), or the
// answers of the real server to the same requests (layout: chunks, the
// default, whose pages it puts together).
func roundTrip(t *testing.T, url, orig string, now time.Time, opt Options) *Site {
	t.Helper()
	opt.URL, opt.Log = url, testLog{t}
	opt.Now = func() time.Time { return now }
	s, err := Import(context.Background(), opt)
	if err != nil {
		t.Fatalf("import:\n%v", err)
	}
	dir := filepath.Join(t.TempDir(), "site")
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	wantLayout := opt.Layout
	if wantLayout == "" {
		wantLayout = layout.ChunksName
	}
	if s.Layout != wantLayout || !bytes.Contains(s.Files[configName], []byte("\n  layout: chunks\n")) != (wantLayout == layout.PagesName) {
		t.Errorf("layout %s, want %s; config.yaml:\n%s", s.Layout, wantLayout, s.Files[configName])
	}
	out := filepath.Join(t.TempDir(), "public")
	buildSite(t, os.DirFS(dir), dir, out, now)
	want := mainPages(t, orig)
	got := mainPages(t, out)
	if s.Layout == layout.ChunksName {
		got = servedPages(t, serve(t, out), want)
	}
	same := comparePages(t, want, got)
	t.Logf("%d articles imported in %d requests (%d pages checked); %d of %d pages of the rebuilt site (%s) byte-identical",
		s.Articles, s.Requests, s.Pages, same, len(want), s.Layout)
	return s
}

// servedPages returns the answers of the listing at url to the requests
// of the pages of pages (by path, as mainPages): /articles/ for the
// index, ?limit=L&offset=O for the others.
func servedPages(t *testing.T, url string, pages map[string][]byte) map[string][]byte {
	t.Helper()
	got := map[string][]byte{}
	for p := range pages {
		k, _ := listing.ParsePageKey(p)
		u := url
		if !k.Index {
			u += "?limit=" + strconv.Itoa(k.Limit) + "&offset=" + strconv.Itoa(k.Offset)
		}
		resp, err := http.Get(u)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %v", u, resp.StatusCode, err)
		}
		got[p] = body
	}
	return got
}

// TestRoundTripSample imports the sample site, served by the real server,
// and rebuilds it: every page of its listing, at every limit and offset,
// is the same bytes.
func TestRoundTripSample(t *testing.T) {
	now := time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	orig := t.TempDir()
	res := buildSite(t, feedgen.Sample(), "", orig, now)
	url := serve(t, orig)
	roundTrip(t, url, orig, now, Options{Layout: layout.PagesName, Limits: []int{50}})
	s := roundTrip(t, url, orig, now, Options{})
	if s.Articles != res.Articles || s.Count != res.Articles {
		t.Errorf("got %d articles of count %d, want %d", s.Articles, s.Count, res.Articles)
	}
	if s.SiteURL != "https://www.example.com" || s.BaseURL != "https://api.example.com" || s.DefaultLimit != 20 || s.MaxLimit != 100 {
		t.Errorf("got site_url %s, base_url %s, limits %d and %d; want the sample's", s.SiteURL, s.BaseURL, s.DefaultLimit, s.MaxLimit)
	}
}

// TestRoundTripHard does the same with a corpus of hard values, with
// every offset and with aligned offsets only.
func TestRoundTripHard(t *testing.T) {
	tests := []struct {
		name    string
		opt     corpus.Options
		offsets string
	}{
		{"all", corpus.Options{Articles: 200, Seed: 1, Limits: []int{5, 20}}, "all"},
		{"aligned", corpus.Options{Articles: 120, Seed: 2, Limits: []int{7, 50}, Offsets: "aligned"}, "aligned"},
		{"one page", corpus.Options{Articles: 15, Seed: 3, Limits: []int{20, 40}}, "all"},
		{"empty", corpus.Options{Limits: []int{3, 9}}, "all"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			src := t.TempDir()
			testfiles.Write(t, src, corpus.HardFiles(tt.opt))
			if err := os.MkdirAll(filepath.Join(src, "content"), 0o755); err != nil {
				t.Fatal(err)
			}
			orig := t.TempDir()
			buildSite(t, os.DirFS(src), src, orig, corpus.HardNow)
			url := serve(t, orig)
			roundTrip(t, url, orig, corpus.HardNow, Options{Layout: layout.PagesName, Offsets: tt.offsets})
			roundTrip(t, url, orig, corpus.HardNow, Options{})
		})
	}
}
