package importer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/diag"
)

var refuseNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func withURL(u string) func(a *content.Article) {
	return func(a *content.Article) { a.URL = u }
}

// TestRefusals checks each thing import refuses because it cannot keep it
// exact: reported with the article's id or the page's URL, nothing
// imported; and with KeepGoing, left out while the rest is imported.
func TestRefusals(t *testing.T) {
	const site = "https://www.example.com"
	tests := []struct {
		name     string
		arts     func(t *testing.T) [][]byte
		timezone string
		want     []string // parts of one line of the report
	}{
		{"url without its final slash", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/article-2")), art(3))
		}, "", []string{"article 2: ", "does not fit {site_url}/{section}/{section_slug}/{slug}/"}},
		{"url in another category", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/economy/article-2/")), art(3))
		}, "", []string{"article 2: ", "does not fit"}},
		{"url deeper than a slug", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/2025/article-2/")), art(3))
		}, "", []string{"article 2: ", "does not fit"}},
		{"another site", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) {
				a.CategoryURL = "https://other.example.com/news/politics/"
				a.URL = a.CategoryURL + "article-2/"
			}), art(3))
		}, "", []string{"article 2: ", "not under site_url https://www.example.com"}},
		{"two articles on one path", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/article-1/")), art(3))
		}, "", []string{"article 1: ", "on the path of article 2, content/news/politics/article-1.md"}},
		{"paths that differ in case", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/Article-1/")), art(3))
		}, "", []string{"article 1: ", "on the path of article 2", "differ only in case"}},
		{"folders that differ in case", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) {
				a.CategoryURL = site + "/News/politics/"
				a.URL = a.CategoryURL + "article-2/"
			}), art(3))
		}, "", []string{"article 2: ", "content/News differs only in case from content/news"}},
		{"slug ignored by feedgen", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/_draft/")), art(3))
		}, "", []string{"article 2: ", `slug "_draft"`, "unsafe as a file name", "start with _ or ."}},
		{"percent-encoded slug", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/%D1%91%D0%B6/")), art(3))
		}, "", []string{"article 2: ", "unsafe as a file name", "percent-encoded"}},
		{"device name slug", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/con/")), art(3))
		}, "", []string{"article 2: ", "device name"}},
		{"slug with a colon", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, withURL(site+"/news/politics/a:b/")), art(3))
		}, "", []string{"article 2: ", "unsafe as a file name", "':'"}},
		{"section config.yaml refuses", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) {
				a.CategoryURL = site + "/-news/politics/"
				a.URL = a.CategoryURL + "article-2/"
			}), art(3))
		}, "", []string{"article 2: ", `section "-news"`, "cannot be a folder name"}},
		{"published in a daylight saving gap", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.Published = time.Date(2025, 3, 30, 2, 30, 0, 0, time.UTC) }), art(3))
		}, "Europe/Berlin", []string{"article 2: ", `published "2025-03-30T02:30:00"`, "daylight saving", "Europe/Berlin"}},
		{"published later than now", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.Published = time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC) }), art(3))
		}, "", []string{"article 2: ", "later than now in time zone UTC", "--timezone"}},
		{"published with a zone", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `"2025-01-01T02:00:00"`, `"2025-01-01T02:00:00+03:00"`)
			return arts
		}, "", []string{"article 2: ", "not a date and time written YYYY-MM-DDTHH:MM:SS"}},
		{"relative image", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.ImgBig = "/img/x.png" }), art(3))
		}, "", []string{"article 2: ", `img_big "/img/x.png"`, "media_url"}},
		{"relative author URL", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.AuthorURL = "authors/x/" }), art(3))
		}, "", []string{"article 2: ", `author_url "authors/x/"`}},
		{"blank title", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.Title = " \t" }), art(3))
		}, "", []string{"article 2: ", "title", "empty"}},
		{"id 0", func(*testing.T) [][]byte {
			return listingOf(art(1), art(0, withURL(site+"/news/politics/zero/")), art(3))
		}, "", []string{"article 0: ", "not a positive whole number"}},
		{"negative counter", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.Pageviews = -1 }), art(3))
		}, "", []string{"article 2: ", "pageviews -1 is negative"}},
		{"two names of a category", func(*testing.T) [][]byte {
			return listingOf(art(1), art(2, func(a *content.Article) { a.Category = "Politik" }), art(3))
		}, "", []string{"article 2: ", `category "Politik" differs from "Politics", the name of news/politics on 2 other articles`}},
		{"escaped non-ASCII", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `"Article 2"`, `"Articl\u00e9 2"`)
			return arts
		}, "", []string{"article 2: ", `title would be "Articlé 2", the service wrote "Articl\u00e9 2"`}},
		{"escaped slash", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `"img_small":"https://media.example.com/avatar.png"`, `"img_small":"https:\/\/media.example.com\/avatar.png"`)
			return arts
		}, "", []string{"article 2: ", "img_small would be"}},
		{"null image", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `"img_big":""`, `"img_big":null`)
			return arts
		}, "", []string{"/articles/?limit=1000000000: article 2: ", `no "img_big" (or null)`}},
		{"unknown key", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `{"id":2,`, `{"id":2,"slug":"x",`)
			return arts
		}, "", []string{"article 2: ", `unknown field "slug"`}},
		{"fractional counter", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `"pageviews":0`, `"pageviews":0.5`)
			return arts
		}, "", []string{"article 2: ", "pageviews"}},
		{"spaces in the JSON", func(t *testing.T) [][]byte {
			arts := listingOf(art(1), art(2), art(3))
			arts[1] = replace(t, arts[1], `{"id":2,`, `{"id": 2,`)
			return arts
		}, "", []string{"article 2: ", "the service writes its JSON otherwise than feedgen"}},
		{"ties ordered otherwise", func(*testing.T) [][]byte {
			same := func(a *content.Article) { a.Published = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC) }
			arts := listingOf(art(1, same), art(2, same), art(3))
			arts[1], arts[2] = arts[2], arts[1]
			return arts
		}, "", []string{"/articles/?limit=1000000000: ", "at offset 1 the service lists article 1, feedgen would list article 2"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := &dynamic{def: 20, max: 100, articles: fixed(tt.arts(t)...)}
			url := d.start(t)
			opt := Options{URL: url, Now: func() time.Time { return refuseNow }, Timezone: tt.timezone, Log: testLog{t}}
			_, err := Import(context.Background(), opt)
			var dl diag.List
			if !errors.As(err, &dl) {
				t.Fatalf("got error %v, want a report of what is refused", err)
			}
			if !hasLine(err.Error(), tt.want...) {
				t.Fatalf("got report\n%v\nwant a line with %q", err, tt.want)
			}

			opt.KeepGoing = true
			s, err := Import(context.Background(), opt)
			if err != nil {
				t.Fatalf("keep going: %v", err)
			}
			if !hasLine(s.Refused.Error(), tt.want...) {
				t.Errorf("keep going: got refused\n%v\nwant a line with %q", s.Refused, tt.want)
			}
			if len(s.Refused) == 1 && s.Articles != s.Count-1 && !strings.Contains(tt.name, "ordered") {
				t.Errorf("keep going: got %d articles of %d, want all but the one refused", s.Articles, s.Count)
			}
			if s.Pages != 0 && !strings.Contains(tt.name, "ordered") {
				t.Errorf("keep going: %d pages compared, want none of a site that misses articles", s.Pages)
			}
		})
	}
}

// TestRefusedPages checks what is refused of a listing's pages, with the
// page's URL.
func TestRefusedPages(t *testing.T) {
	arts := fixed(listingOf(art(1), art(2), art(3), art(4), art(5))...)
	third := func(body, contentType string, status int) func(int, http.ResponseWriter, *http.Request) bool {
		return func(_ int, w http.ResponseWriter, r *http.Request) bool {
			if r.URL.RawQuery != "limit=2&offset=2" {
				return false
			}
			w.Header().Set("Content-Type", contentType)
			w.WriteHeader(status)
			w.Write([]byte(body))
			return true
		}
	}
	tests := []struct {
		name string
		d    *dynamic
		want []string
	}{
		{"no maximum page size", &dynamic{def: 2, articles: arts}, []string{"/articles/?limit=1000000000: ", "the service has no maximum page size (it answered limit=1000000000 with 5 of its 5 articles, and links of limit=1000000000): feedgen pre-renders fixed page sizes; taking max_limit 2"}},
		{"maximum below the default", &dynamic{def: 3, max: 2, articles: arts}, []string{"/articles/?limit=1000000000: ", "maximum page size 2 is below the default 3"}},
		{"a page of HTML", &dynamic{def: 2, max: 2, articles: arts, answer: third("<html>", "text/html; charset=utf-8", 200)},
			[]string{"/articles/?limit=2&offset=2: ", `Content-Type "text/html; charset=utf-8", not the listing's JSON`}},
		{"a page of broken JSON", &dynamic{def: 2, max: 2, articles: arts, answer: third(`{"count":5,`, "application/json", 200)},
			[]string{"/articles/?limit=2&offset=2: ", "not the listing's JSON"}},
		{"a page of other JSON", &dynamic{def: 2, max: 2, articles: arts, answer: third(`{"detail":"Not found."}`, "application/json", 200)},
			[]string{"/articles/?limit=2&offset=2: ", `unknown field "detail"`}},
		{"a page not found", &dynamic{def: 2, max: 2, articles: arts, answer: third(`{"detail":"Not found."}`, "application/json", 404)},
			[]string{"/articles/?limit=2&offset=2: ", "status 404 Not Found"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(context.Background(), Options{URL: tt.d.start(t), Now: func() time.Time { return refuseNow }, Log: testLog{t}})
			var dl diag.List
			if !errors.As(err, &dl) {
				t.Fatalf("got error %v, want a report of what is refused", err)
			}
			if !hasLine(err.Error(), tt.want...) {
				t.Fatalf("got report\n%v\nwant a line with %q", err, tt.want)
			}
		})
	}
}

// TestFailures checks what stops an import: a listing that cannot be read
// at all, or that changes under it.
func TestFailures(t *testing.T) {
	arts := listingOf(art(1), art(2), art(3), art(4), art(5))
	tests := []struct {
		name string
		d    *dynamic
		want string
	}{
		{"not the listing", &dynamic{def: 2, max: 2, articles: fixed(arts...), answer: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			w.Header().Set("Content-Type", "text/html")
			w.Write([]byte("<html>"))
			return true
		}}, `/articles/: answered Content-Type "text/html", not the listing's JSON`},
		{"not found", &dynamic{def: 2, max: 2, articles: fixed(arts...), answer: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
			http.NotFound(w, nil)
			return true
		}}, "/articles/: status 404 Not Found"},
		{"a count that keeps changing", &dynamic{def: 2, max: 2, articles: func(n int) [][]byte { return arts[:4+n%2] }},
			"the listing changed while it was read (count 4 on"},
		{"links of two base URLs", &dynamic{def: 2, max: 2, articles: fixed(arts...), answer: func(n int, w http.ResponseWriter, r *http.Request) bool {
			if r.URL.RawQuery != "" {
				return false
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprintf(w, `{"count":5,"next":"https://elsewhere.example.com/articles/?limit=2&offset=2","previous":null,"results":[%s,%s]}`, arts[0], arts[1])
			return true
		}}, "one base_url cannot give both"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Import(context.Background(), Options{URL: tt.d.start(t), Now: func() time.Time { return refuseNow }, Retries: -1, Log: testLog{t}})
			var dl diag.List
			if err == nil || errors.As(err, &dl) {
				t.Fatalf("got error %v, want one that stops the import", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got error %v, want %q", err, tt.want)
			}
		})
	}
}
