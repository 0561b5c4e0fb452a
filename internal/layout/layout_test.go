package layout

import (
	"crypto/sha256"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
)

func TestClassify(t *testing.T) {
	sum := sha256.Sum256([]byte("[{}]"))
	for _, tc := range []struct {
		path string
		want Kind
	}{
		{"manifest.json", Manifest},
		{"articles/index.json", Page},
		{"articles/20/0.json", Page},
		{"articles/section/news/5/3.json", Page},
		{"articles/chunks.json", Index},
		{"articles/tag/API/chunks.json", Index},
		{chunk.ChunkPath(sum), Chunk},
		{chunk.LeafPath(sum), Leaf},
		{"articles/chunks/ab/cd.leaf.json", Other},
		{"articles/chunks/ab/cd.json", Other},
		{"articles/chunks/chunks.json", Other},
		{"articles/index.html", Other},
		{"articles/20/01.json", Other},
		{"index.html", Other},
		{"", Other},
		{".feedgen-unfinished", Other},
		{"articles/feed.rss", Feed},
		{"articles/feed.atom", Feed},
		{"articles/feed.json", Feed},
		{"articles/tag/_41_50_49/feed.json", Feed},
		{"articles/section/news/category/politics/feed.atom", Feed},
		{"feed.rss", Other},
		{"articles/feed.xml", Other},
		{"articles/chunks/feed.rss", Other},
		{"articles/chunks/ab/feed.rss", Other},
		{"articlesx/feed.rss", Other},
	} {
		if got := Classify(tc.path); got != tc.want {
			t.Errorf("Classify(%q) = %v, want %v", tc.path, got, tc.want)
		}
		if got, want := Built(tc.path), tc.want != Other && tc.want != Manifest; got != want {
			t.Errorf("Built(%q) = %v, want %v", tc.path, got, want)
		}
	}
}

func TestKinds(t *testing.T) {
	for _, tc := range []struct {
		k                        Kind
		name                     string
		immutable, listed, names bool
		step                     int
	}{
		{Manifest, "manifest", false, true, false, 2},
		{Page, "page", false, true, false, 1},
		{Index, "chunk index", false, true, true, 1},
		{Chunk, "chunk", true, false, false, 0},
		{Leaf, "chunk index leaf", true, false, true, 0},
		{Feed, "feed", false, true, false, 1},
		{Other, "file", false, true, false, 1},
	} {
		k := tc.k
		if k.String() != tc.name || k.Immutable() != tc.immutable || k.Listed() != tc.listed || k.Names() != tc.names || k.Step() != tc.step || k.Step() >= Steps {
			t.Errorf("%v: got %q immutable=%v listed=%v names=%v step=%d", k, k.String(), k.Immutable(), k.Listed(), k.Names(), k.Step())
		}
		want := "public, max-age=60"
		if tc.immutable {
			want = ImmutableCacheControl
		}
		if got := k.CacheControl("public, max-age=60"); got != want {
			t.Errorf("%v: Cache-Control %q, want %q", k, got, want)
		}
	}
}

// TestContentType checks the Content-Type of each kind of file: a feed's
// its format's, every other the listing's JSON.
func TestContentType(t *testing.T) {
	for p, want := range map[string]string{
		"manifest.json":            listing.ContentType,
		"articles/20/0.json":       listing.ContentType,
		"articles/chunks.json":     listing.ContentType,
		"articles/feed.rss":        "application/rss+xml; charset=utf-8",
		"articles/tag/x/feed.atom": "application/atom+xml; charset=utf-8",
		"articles/feed.json":       "application/feed+json",
		"index.html":               listing.ContentType,
	} {
		if got := ContentType(p); got != want {
			t.Errorf("ContentType(%q) = %q, want %q", p, got, want)
		}
	}
}

func TestLayouts(t *testing.T) {
	p := listing.Pagination{DefaultLimit: 20, MaxLimit: 100, Limits: []int{20, 50, 100}, Offsets: listing.OffsetsAll}
	for _, tc := range []struct {
		field   string
		name    string
		ok      bool
		answers []int // of 1, 20, 21, 100, 101
	}{
		{"", PagesName, true, []int{20, 100}},
		{"pages", PagesName, true, []int{20, 100}},
		{"chunks", ChunksName, true, []int{1, 20, 21, 100}},
		{"tiles", "tiles", false, nil},
	} {
		l, ok := Named(tc.field)
		if l.Name != tc.name || ok != tc.ok {
			t.Errorf("Named(%q) = %q, %v", tc.field, l.Name, ok)
		}
		p.Layout = tc.field
		if Of(p).Name != l.Name {
			t.Errorf("Of(%q) = %q", tc.field, Of(p).Name)
		}
		var got []int
		for _, n := range []int{1, 20, 21, 100, 101} {
			if l.Answers(p, n) {
				got = append(got, n)
			}
		}
		if len(got) != len(tc.answers) {
			t.Errorf("%q answers %v, want %v", tc.field, got, tc.answers)
		}
		if ok && l.Field() != map[string]string{PagesName: "", ChunksName: "chunks"}[l.Name] {
			t.Errorf("%q: Field %q", l.Name, l.Field())
		}
	}
	if ls := Layouts(); ls[0].Name != PagesName || len(ls) != 2 {
		t.Errorf("Layouts() = %v", ls)
	}
	for _, l := range Layouts() {
		if !l.Has(Manifest) || l.Has(Other) {
			t.Errorf("%s: Has(Manifest)=%v Has(Other)=%v", l.Name, l.Has(Manifest), l.Has(Other))
		}
		if l.Assembled != l.Has(Chunk) {
			t.Errorf("%s: assembled but no chunks, or chunks but not assembled", l.Name)
		}
	}
}

func TestCheckFile(t *testing.T) {
	sum := sha256.Sum256([]byte("[{}]"))
	other := sha256.Sum256([]byte("x"))
	for _, tc := range []struct {
		l    Layout
		path string
		sum  [32]byte
		ok   bool
	}{
		{Pages(), "articles/20/0.json", other, true},
		{Pages(), "articles/chunks.json", other, false},
		{Pages(), chunk.ChunkPath(sum), sum, false},
		{Pages(), "manifest.json", other, false},
		{Chunks(), "articles/chunks.json", other, true},
		{Chunks(), chunk.ChunkPath(sum), sum, true},
		{Chunks(), chunk.ChunkPath(sum), other, false},
		{Chunks(), "articles/20/0.json", other, false},
		{Chunks(), "articles/x.txt", other, false},
	} {
		if msg := tc.l.CheckFile(tc.path, tc.sum); (msg == "") != tc.ok {
			t.Errorf("%s: CheckFile(%q) = %q, want ok=%v", tc.l.Name, tc.path, msg, tc.ok)
		}
	}
}
