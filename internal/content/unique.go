package content

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/cespare/xxhash/v2"
	"github.com/feedgen/feedgen/internal/diag"
)

// unique returns the articles of cand, in the order walked, that do not
// repeat the id or the URL of one before them, and adds an error to errs
// for each that does, naming the first: ids first, then URLs among the
// articles with an id of their own. URLs that differ only in letter case
// are one page on many hosts, so one URL.
//
// It sorts rather than fills maps: at a million articles, maps of them
// take more memory than the articles' index, and as much time again.
func unique(cand []*Article, errs *diag.List) []*Article {
	return uniqueBy(cand, errs, xxhash.Sum64String)
}

// uniqueBy is unique with the hash of lowercase URLs; tests give a weak one.
func uniqueBy(cand []*Article, errs *diag.List, hash func(string) uint64) []*Article {
	drop := make([]bool, len(cand))
	keys := make([]posKey, len(cand))
	for i, a := range cand {
		keys[i] = posKey{key: uint64(a.ID), pos: i}
	}
	sortKeys(keys)
	for run := range runs(keys) {
		o := cand[run[0].pos]
		for _, k := range run[1:] {
			a := cand[k.pos]
			errs.Add(a.Path, a.Line, fmt.Sprintf("duplicate id %d: %s:%d has it too; ids must be unique across the site", a.ID, o.Path, o.Line))
			drop[k.pos] = true
		}
	}
	keys = keys[:0]
	for i, a := range cand {
		if !drop[i] {
			keys = append(keys, posKey{key: hash(strings.ToLower(a.URL)), pos: i})
		}
	}
	sortKeys(keys)
	for run := range runs(keys) {
		// Articles with one hash have one URL, but for a collision:
		// each is compared with those before it, of which the first with
		// its URL is kept.
		for j, k := range run[1:] {
			a := cand[k.pos]
			url := strings.ToLower(a.URL)
			for _, f := range run[:j+1] {
				if o := cand[f.pos]; strings.ToLower(o.URL) == url {
					errs.Add(a.Path, 0, fmt.Sprintf("duplicate article URL %s: %s has it too (URLs that differ only in letter case are one page on many hosts); rename one file", a.URL, o.Path))
					drop[k.pos] = true
					break
				}
			}
		}
	}
	out := make([]*Article, 0, len(cand))
	for i, a := range cand {
		if !drop[i] {
			out = append(out, a)
		}
	}
	return out
}

// posKey is a key of the article at pos among the candidates.
type posKey struct {
	key uint64
	pos int
}

// sortKeys sorts keys by key, then pos: each key's first is the first
// walked.
func sortKeys(keys []posKey) {
	slices.SortFunc(keys, func(x, y posKey) int {
		if c := cmp.Compare(x.key, y.key); c != 0 {
			return c
		}
		return cmp.Compare(x.pos, y.pos)
	})
}

// runs yields the runs of sorted keys that share a key, of two or more.
func runs(keys []posKey) func(yield func([]posKey) bool) {
	return func(yield func([]posKey) bool) {
		for i := 0; i < len(keys); {
			j := i + 1
			for j < len(keys) && keys[j].key == keys[i].key {
				j++
			}
			if j-i > 1 && !yield(keys[i:j]) {
				return
			}
			i = j
		}
	}
}
