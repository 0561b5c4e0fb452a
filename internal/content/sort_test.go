package content

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"
)

// sortArticles returns n articles with publication times drawn from a
// small range, so that many share a time (some in another zone, the same
// instant) and their ids, all different, break the ties. Half the sites
// are published around 1970, on both sides of it.
func sortArticles(r *rand.Rand, n int) []*Article {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	if r.IntN(2) == 0 {
		t0 = time.Unix(0, 0).Add(-time.Duration(n/8) * time.Minute)
	}
	moscow := time.FixedZone("MSK", 3*3600)
	out := make([]*Article, n)
	for i := range out {
		p := t0.Add(time.Duration(r.IntN(n/4+1))*time.Minute + time.Duration(r.IntN(3))*time.Nanosecond)
		if r.IntN(2) == 0 {
			p = p.In(moscow)
		}
		out[i] = &Article{ID: int64(i - n/2), Published: p}
	}
	return out
}

// TestSort checks Sort against Before: every result in Before's order,
// whatever the order given.
func TestSort(t *testing.T) {
	for seed := range uint64(50) {
		r := rand.New(rand.NewPCG(seed, 2))
		in := sortArticles(r, 1+r.IntN(300))
		got := slices.Clone(in)
		Sort(got)
		want := slices.Clone(in)
		slices.SortFunc(want, cmpBefore)
		if !slices.Equal(got, want) {
			t.Fatalf("seed %d: %d articles not in Before's order", seed, len(in))
		}
	}
}

// BenchmarkSort sorts a million shuffled articles: Sort, and for
// reference a sort that calls Before on the articles themselves.
func BenchmarkSort(b *testing.B) {
	in := sortArticles(rand.New(rand.NewPCG(1, 2)), 1_000_000)
	rand.New(rand.NewPCG(3, 4)).Shuffle(len(in), func(i, j int) { in[i], in[j] = in[j], in[i] })
	s := make([]*Article, len(in))
	for _, bb := range []struct {
		name string
		sort func([]*Article)
	}{
		{"keys", Sort},
		{"before", func(s []*Article) { slices.SortFunc(s, func(a, b *Article) int { return cmpBefore(a, b) }) }},
	} {
		b.Run(bb.name, func(b *testing.B) {
			for b.Loop() {
				copy(s, in)
				bb.sort(s)
			}
		})
	}
}

// cmpBefore is Before as a comparison.
func cmpBefore(a, b *Article) int {
	switch {
	case Before(a, b):
		return -1
	case Before(b, a):
		return 1
	}
	return 0
}
