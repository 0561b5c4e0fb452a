package server

import (
	"bytes"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

// TestFilterTable walks the table of filter kinds (listing.Filters): for
// each kind, a site that pre-renders it alone builds collections selected
// by exactly its parameters, and the server answers each of them, a value
// no article has (an empty collection), and the parameters of the other
// kinds (not found). A kind added to the table is tested here with no
// other change.
func TestFilterTable(t *testing.T) {
	for _, f := range listing.Filters() {
		t.Run(f.Name, func(t *testing.T) {
			s := makeSite(t, corpus.Options{Articles: 30, Limits: []int{5, 20}, Seed: 2, Filters: []string{f.Name}})
			m := readManifest(t, s.out)
			if !slices.Equal(m.Filters, []string{f.Name}) {
				t.Fatalf("manifest filters %q, want [%s]", m.Filters, f.Name)
			}
			srv, _ := newServer(t, Options{Source: Folder(s.out)})
			filtered := 0
			for _, c := range m.Collections {
				if len(c.Params) == 0 {
					continue
				}
				filtered++
				if k := listing.Kind(c.Params); k != f.Kind() {
					t.Fatalf("collection %s is of kind %q, want %q", c.Dir, k, f.Kind())
				}
				q := url.Values{}
				for _, p := range c.Params {
					q.Set(p.Key, p.Value)
				}
				want, err := os.ReadFile(filepath.Join(s.out, filepath.FromSlash(listing.PageKey{Dir: c.Dir, Limit: 5}.Path())))
				if err != nil {
					t.Fatal(err)
				}
				resp := request(srv, "GET", "/articles/?"+q.Encode(), nil)
				if got := readBody(t, resp); resp.StatusCode != 200 || !bytes.Equal(got, want) {
					t.Errorf("GET ?%s: %d %.80q, want 200 %.80q", q.Encode(), resp.StatusCode, got, want)
				}
			}
			if filtered == 0 {
				t.Fatalf("no collection of kind %q in a site of 30 articles", f.Kind())
			}
			none := url.Values{}
			for _, p := range f.Params {
				none.Set(p, "no-article-has-this")
			}
			resp := request(srv, "GET", "/articles/?"+none.Encode(), nil)
			if body := readBody(t, resp); resp.StatusCode != 200 || !strings.Contains(string(body), `"count":0`) {
				t.Errorf("GET ?%s: %d %.80q, want 200 and an empty collection", none.Encode(), resp.StatusCode, body)
			}
			for _, other := range listing.Filters() {
				if other.Kind() == f.Kind() {
					continue
				}
				q := url.Values{}
				for _, p := range other.Params {
					q.Set(p, "x")
				}
				if resp := request(srv, "GET", "/articles/?"+q.Encode(), nil); resp.StatusCode != 404 {
					t.Errorf("GET ?%s of a kind not pre-rendered: %d, want 404", q.Encode(), resp.StatusCode)
				}
			}
		})
	}
}
