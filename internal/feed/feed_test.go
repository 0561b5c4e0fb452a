package feed

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

const base = "https://api.example.com"

// articles returns n articles, newest first by construction: article i
// is published i hours before the first and has id 1000+n-i.
func articles(n int) []*content.Article {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	out := make([]*content.Article, n)
	for i := range out {
		out[i] = &content.Article{ID: int64(1000 + n - i), Shown: &content.Shown{Title: fmt.Sprintf("t%d", i)}, Published: t0.Add(-time.Duration(i) * time.Hour), Index: i}
	}
	return out
}

func paging(limits ...int) listing.Pagination {
	return listing.Pagination{DefaultLimit: limits[0], MaxLimit: limits[len(limits)-1], Limits: limits, Offsets: listing.OffsetsAll}
}

type envelope struct {
	Count    int               `json:"count"`
	Next     *string           `json:"next"`
	Previous *string           `json:"previous"`
	Results  []json.RawMessage `json:"results"`
}

func decode(t *testing.T, b []byte) envelope {
	t.Helper()
	var e envelope
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("page is not JSON: %v\n%s", err, b)
	}
	return e
}

func str(p *string) string {
	if p == nil {
		return "null"
	}
	return *p
}

func TestLinks(t *testing.T) {
	tests := []struct {
		name                  string
		count, limit, offset  int
		wantNext, wantPrev    string
		wantResults, wantFrom int
	}{
		{"offset 0", 45, 20, 0, base + "/articles/?limit=20&offset=20", "null", 20, 0},
		{"offset below limit drops offset in previous", 45, 20, 7, base + "/articles/?limit=20&offset=27", base + "/articles/?limit=20", 20, 7},
		{"offset equal to limit", 45, 20, 20, base + "/articles/?limit=20&offset=40", base + "/articles/?limit=20", 20, 20},
		{"middle", 100, 20, 40, base + "/articles/?limit=20&offset=60", base + "/articles/?limit=20&offset=20", 20, 40},
		{"last page", 45, 20, 40, "null", base + "/articles/?limit=20&offset=20", 5, 40},
		{"last page, offset not aligned", 45, 20, 44, "null", base + "/articles/?limit=20&offset=24", 1, 44},
		{"count exact multiple of limit", 40, 20, 20, "null", base + "/articles/?limit=20", 20, 20},
		{"single page", 5, 20, 0, "null", "null", 5, 0},
		{"count zero", 0, 20, 0, "null", "null", 0, 0},
		{"limit 1", 3, 1, 1, base + "/articles/?limit=1&offset=2", base + "/articles/?limit=1", 1, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := New(base, paging(tt.limit), nil, articles(tt.count))
			got := decode(t, mustPage(t, l, Page{Coll: l.Main(), Limit: tt.limit, Offset: tt.offset}))
			if got.Count != tt.count {
				t.Errorf("count = %d, want %d", got.Count, tt.count)
			}
			if str(got.Next) != tt.wantNext {
				t.Errorf("next = %s, want %s", str(got.Next), tt.wantNext)
			}
			if str(got.Previous) != tt.wantPrev {
				t.Errorf("previous = %s, want %s", str(got.Previous), tt.wantPrev)
			}
			if len(got.Results) != tt.wantResults {
				t.Fatalf("%d results, want %d", len(got.Results), tt.wantResults)
			}
			if tt.wantResults > 0 {
				want := string(l.Main().ArticleJSON(tt.wantFrom))
				if string(got.Results[0]) != want {
					t.Errorf("first result = %s, want %s", got.Results[0], want)
				}
			}
		})
	}
}

func TestOrderTies(t *testing.T) {
	t0 := time.Date(2025, 3, 14, 12, 0, 0, 0, time.UTC)
	in := []*content.Article{
		{ID: 5, Shown: &content.Shown{}, Published: t0},
		{ID: 900, Shown: &content.Shown{}, Published: t0.Add(-time.Hour)},
		{ID: 7, Shown: &content.Shown{}, Published: t0},
		{ID: 6, Shown: &content.Shown{}, Published: t0.Add(time.Second)},
		{ID: 1200, Shown: &content.Shown{}, Published: t0},
	}
	l := New(base, paging(20), nil, in)
	var got []int64
	for _, a := range l.Main().Articles {
		got = append(got, a.ID)
	}
	want := []int64{6, 1200, 7, 5, 900}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("order = %v, want %v", got, want)
	}
	if in[0].ID != 5 {
		t.Errorf("New reordered its input")
	}
}

func TestPages(t *testing.T) {
	tests := []struct {
		name    string
		count   int
		limits  []int
		offsets string
		want    []string
	}{
		{"all", 3, []int{2}, listing.OffsetsAll, []string{"articles/index.json", "articles/2/0.json", "articles/2/1.json", "articles/2/2.json"}},
		{"aligned", 5, []int{2, 3}, listing.OffsetsAligned, []string{"articles/index.json", "articles/2/0.json", "articles/2/2.json", "articles/2/4.json", "articles/3/0.json", "articles/3/3.json"}},
		{"empty collection still has offset 0", 0, []int{2, 3}, listing.OffsetsAll, []string{"articles/index.json", "articles/2/0.json", "articles/3/0.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := paging(tt.limits...)
			p.Offsets = tt.offsets
			l := New(base, p, nil, articles(tt.count))
			var got []string
			var scratch []byte
			for _, pg := range l.Pages() {
				got = append(got, pg.Path)
				var size int
				size, scratch = l.PageSize(pg, scratch)
				if page := mustPage(t, l, pg); size != len(page) {
					t.Errorf("%s: PageSize = %d, want %d", pg.Path, size, len(page))
				}
			}
			if strings.Join(got, " ") != strings.Join(tt.want, " ") {
				t.Errorf("pages = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestArticleJSON(t *testing.T) {
	a := &content.Article{
		ID: 42, URL: "https://www.example.com/news/politics/x/", Tags: []string{"a", "b c"},
		Shown: &content.Shown{
			Title: `Say "hi" <b>&</b>`, Category: "Политика", CategoryURL: "https://www.example.com/news/politics/",
			Announcement: "line\r\nnext\u2028", Pageviews: 7, Comments: 0,
			ImgSmall: "https://media.example.com/a b.jpg?v=2&size=big", ImgSmall2x: "https://media.example.com/a b.jpg?v=2&size=big",
			AuthorName: "Иван", AuthorURL: "https://www.example.com/authors/ivan/",
		},
		Published: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
	}
	got := string(AppendArticle(nil, a))
	want := `{"id":42,"title":"Say \"hi\" <b>&</b>","url":"https://www.example.com/news/politics/x/","category":"Политика","category_url":"https://www.example.com/news/politics/","announcement":"line\r\nnext\u2028","tags":"a, b c","pageviews":7,"comments_count":0,"img_big":"","img_big_2x":"","img_small":"https://media.example.com/a b.jpg?v=2&size=big","img_small_2x":"https://media.example.com/a b.jpg?v=2&size=big","author_name":"Иван","author_url":"https://www.example.com/authors/ivan/","published":"2025-01-02T03:04:05"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
}

func TestPagesAcrossChunks(t *testing.T) {
	l := New(base, paging(7, 100), nil, articles(2000))
	c := l.Main()
	if len(c.chunks) < 2 && runtime.GOMAXPROCS(0) > 1 {
		t.Fatalf("%d chunks, want several", len(c.chunks))
	}
	for _, pg := range l.Pages() {
		page := mustPage(t, l, pg)
		got := decode(t, page)
		for j, r := range got.Results {
			if want := c.ArticleJSON(pg.Offset + j); string(r) != string(want) {
				t.Fatalf("%s: result %d = %.80s, want %.80s", pg.Path, j, r, want)
			}
		}
		if size, _ := l.PageSize(pg, nil); size != len(page) {
			t.Fatalf("%s: PageSize %d, want %d", pg.Path, size, len(page))
		}
	}
}

// mustPage renders page pg of l.
func mustPage(t *testing.T, l *Listing, pg Page) []byte {
	t.Helper()
	page, err := l.AppendPage(nil, pg)
	if err != nil {
		t.Fatalf("rendering %s: %v", pg.Path, err)
	}
	return page
}

// TestPageKeys checks that each page's file is the path of its key, and
// that the keys are those Pagination.Keys lists.
func TestPageKeys(t *testing.T) {
	p := listing.Pagination{DefaultLimit: 2, MaxLimit: 3, Limits: []int{2, 3}, Offsets: listing.OffsetsAll}
	l := New("https://api.example.com", p, []string{"tag"}, tagged("Go", "Go,b", "b"))
	pages := l.Pages()
	var want []listing.PageKey
	for _, c := range l.Collections {
		for k := range p.Keys(c.Dir, c.Count(), c == l.Main()) {
			want = append(want, k)
		}
	}
	if len(pages) != len(want) {
		t.Fatalf("%d pages, want %d", len(pages), len(want))
	}
	for i, pg := range pages {
		if k := pg.Key(); k != want[i] || pg.Path != k.Path() {
			t.Errorf("page %d: key %+v, path %q; want %+v, %q", i, k, pg.Path, want[i], want[i].Path())
		}
	}
}
