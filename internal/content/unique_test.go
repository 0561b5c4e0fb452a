package content

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/cespare/xxhash/v2"
	"github.com/feedgen/feedgen/internal/diag"
)

// uniqueMaps is what unique does, with maps: the reference it is checked
// against.
func uniqueMaps(cand []*Article, errs *diag.List) []*Article {
	byID := map[int64]*Article{}
	byURL := map[string]*Article{}
	var out []*Article
	for _, a := range cand {
		if o, dup := byID[a.ID]; dup {
			errs.Add(a.Path, a.Line, fmt.Sprintf("duplicate id %d: %s:%d has it too; ids must be unique across the site", a.ID, o.Path, o.Line))
			continue
		}
		byID[a.ID] = a
		key := strings.ToLower(a.URL)
		if o, dup := byURL[key]; dup {
			errs.Add(a.Path, 0, fmt.Sprintf("duplicate article URL %s: %s has it too (URLs that differ only in letter case are one page on many hosts); rename one file", a.URL, o.Path))
			continue
		}
		byURL[key] = a
		out = append(out, a)
	}
	return out
}

// TestUnique checks unique against maps on random sites with repeated ids
// and URLs (some differing in letter case only), with the real hash and
// with hashes that collide: the same articles kept, the same errors.
func TestUnique(t *testing.T) {
	hashes := []struct {
		name string
		hash func(string) uint64
	}{
		{"xxhash", xxhash.Sum64String},
		{"by length", func(s string) uint64 { return uint64(len(s)) }},
		{"one value", func(string) uint64 { return 7 }},
	}
	for _, h := range hashes {
		t.Run(h.name, func(t *testing.T) {
			for seed := range uint64(200) {
				r := rand.New(rand.NewPCG(seed, 1))
				n := r.IntN(40)
				cand := make([]*Article, n)
				for i := range cand {
					slug := fmt.Sprintf("s%d", r.IntN(n+1))
					if r.IntN(4) == 0 {
						slug = strings.ToUpper(slug)
					}
					cand[i] = &Article{ID: int64(r.IntN(n + 1)), URL: "https://x/" + slug + "/", Path: fmt.Sprintf("content/a/b/%03d.md", i), Line: 2}
				}
				var got, want diag.List
				kept := uniqueBy(cand, &got, h.hash)
				wantKept := uniqueMaps(cand, &want)
				got.Sort()
				want.Sort()
				if !slices.Equal(kept, wantKept) {
					t.Fatalf("seed %d: kept %d articles, want %d", seed, len(kept), len(wantKept))
				}
				if !slices.Equal(got, want) {
					t.Fatalf("seed %d: got errors\n%s\nwant\n%s", seed, got.Err(), want.Err())
				}
			}
		})
	}
}
