package listing

import (
	"math"
	"slices"
	"strconv"
	"testing"
)

func TestPageKey(t *testing.T) {
	tests := []struct {
		in   string
		want PageKey
		ok   bool
	}{
		{"articles/index.json", PageKey{Dir: "articles", Index: true}, true},
		{"articles/20/40.json", PageKey{Dir: "articles", Limit: 20, Offset: 40}, true},
		{"articles/20/0.json", PageKey{Dir: "articles", Limit: 20}, true},
		{"articles/tag/_47o/20/40.json", PageKey{Dir: "articles/tag/_47o", Limit: 20, Offset: 40}, true},
		{"articles/tag/_47o/index.json", PageKey{Dir: "articles/tag/_47o", Index: true}, true},
		{"articles/category/politics/section/news/50/0.json", PageKey{Dir: "articles/category/politics/section/news", Limit: 50}, true},
		{"articles/tag/20/20/0.json", PageKey{Dir: "articles/tag/20", Limit: 20}, true},
		{"articles/" + strconv.Itoa(math.MaxInt) + "/0.json", PageKey{Dir: "articles", Limit: math.MaxInt}, true},
		{"articles/9223372036854775808/0.json", PageKey{}, false}, // past MaxInt
		{"articles/20/040.json", PageKey{}, false},
		{"articles/020/40.json", PageKey{}, false},
		{"articles/0/0.json", PageKey{}, false},
		{"articles/+20/0.json", PageKey{}, false},
		{"articles/20/-1.json", PageKey{}, false},
		{"articles/20/1.txt", PageKey{}, false},
		{"articles/20/.json", PageKey{}, false},
		{"articles//0.json", PageKey{}, false},
		{"articles/0.json", PageKey{}, false},
		{"articles/20/1/2.json", PageKey{Dir: "articles/20", Limit: 1, Offset: 2}, true}, // a folder the manifest may not have
		{"other/tag/x/20/0.json", PageKey{}, false},
		{"articlesx/20/0.json", PageKey{}, false},
		{"index.json", PageKey{}, false},
		{"", PageKey{}, false},
	}
	for _, tt := range tests {
		got, ok := ParsePageKey(tt.in)
		if got != tt.want || ok != tt.ok {
			t.Errorf("ParsePageKey(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
		if ok && got.Path() != tt.in {
			t.Errorf("ParsePageKey(%q).Path() = %q", tt.in, got.Path())
		}
		if ok && !got.Index && PagePathOf(got.Dir, strconv.Itoa(got.Limit), strconv.Itoa(got.Offset)) != tt.in {
			t.Errorf("PagePathOf does not write %q as PageKey.Path does", tt.in)
		}
	}
	if got := (PageKey{Dir: Dir, Index: true}).Path(); got != IndexPath {
		t.Errorf("the main listing's index page is %q, want %q", got, IndexPath)
	}
}

// FuzzParsePageKey checks that a page path has one key and a key one
// path: whatever ParsePageKey accepts, Path writes back byte for byte,
// and the path of any key it returns parses to the same key.
func FuzzParsePageKey(f *testing.F) {
	for _, s := range []string{"articles/index.json", "articles/20/40.json", "articles/tag/_47o/20/0.json", "articles/20/040.json", "articles/x/index.json"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k, ok := ParsePageKey(s)
		if !ok {
			if k != (PageKey{}) {
				t.Fatalf("ParsePageKey(%q) refused it but returned %+v", s, k)
			}
			return
		}
		if k.Path() != s {
			t.Fatalf("ParsePageKey(%q) = %+v, whose path is %q", s, k, k.Path())
		}
		if !k.Index && (k.Limit <= 0 || k.Offset < 0) {
			t.Fatalf("ParsePageKey(%q) = %+v: limit or offset out of range", s, k)
		}
		if k2, ok := ParsePageKey(k.Path()); !ok || k2 != k {
			t.Fatalf("ParsePageKey(%q) = %+v, %v; want %+v", k.Path(), k2, ok, k)
		}
	})
}

func TestPaginationKeys(t *testing.T) {
	var got []string
	p := Pagination{DefaultLimit: 2, MaxLimit: 3, Limits: []int{2, 3}, Offsets: OffsetsAligned}
	for k := range p.Keys(Dir, 5, true) {
		got = append(got, k.Path())
	}
	want := []string{"articles/index.json", "articles/2/0.json", "articles/2/2.json", "articles/2/4.json", "articles/3/0.json", "articles/3/3.json"}
	if !slices.Equal(got, want) {
		t.Errorf("aligned keys = %q, want %q", got, want)
	}
	got = nil
	p.Offsets = OffsetsAll
	for k := range p.Keys("articles/tag/go", 0, false) {
		got = append(got, k.Path())
	}
	want = []string{"articles/tag/go/2/0.json", "articles/tag/go/3/0.json"}
	if !slices.Equal(got, want) {
		t.Errorf("keys of an empty collection = %q, want %q", got, want)
	}
	n := 0
	for range p.Keys(Dir, math.MaxInt, false) {
		if n++; n == 3 {
			break // stops when asked, also with a count no build has
		}
	}
	got = nil
	p = Pagination{Limits: []int{math.MaxInt}, Offsets: OffsetsAligned}
	for k := range p.Keys(Dir, math.MaxInt, false) {
		got = append(got, k.Path())
	}
	if len(got) != 1 {
		t.Errorf("a limit of MaxInt over MaxInt articles: %q, want one page", got)
	}
}

// TestPaginationPages checks Pages against the keys Keys lists.
func TestPaginationPages(t *testing.T) {
	for _, offsets := range []string{OffsetsAll, OffsetsAligned} {
		p := Pagination{Limits: []int{1, 2, 3, 7}, Offsets: offsets}
		for count := range 20 {
			n := map[int]int{}
			for k := range p.Keys(Dir, count, false) {
				n[k.Limit]++
			}
			for _, l := range p.Limits {
				if got := p.Pages(count, l); got != n[l] {
					t.Errorf("%s, %d articles, limit %d: Pages = %d, Keys lists %d", offsets, count, l, got, n[l])
				}
			}
		}
	}
	p := Pagination{Offsets: OffsetsAligned}
	if got := p.Pages(math.MaxInt, math.MaxInt); got != 1 {
		t.Errorf("Pages(MaxInt, MaxInt) = %d, want 1", got)
	}
}
