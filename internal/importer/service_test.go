package importer

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/listing"
)

// dynamic stands in for the original dynamic service where feedgen's own
// server cannot: it serves articles that no feedgen site can hold (URLs
// that do not fit, unsafe slugs, values written otherwise), through the
// limit/offset paginator of the original's framework: a missing or bad
// limit is the default, a limit above the maximum the maximum (none when
// max is 0), any offset answered, links as the framework writes them.
type dynamic struct {
	base     string // base_url of its links; "" for its own address
	def, max int
	// articles returns the listing, in order, at the n-th request (from 0).
	articles func(n int) [][]byte
	// answer, when set, may answer the n-th request itself.
	answer   func(n int, w http.ResponseWriter, r *http.Request) bool
	requests atomic.Int64
}

func (d *dynamic) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(d.requests.Add(1) - 1)
	if d.answer != nil && d.answer(n, w, r) {
		return
	}
	q := r.URL.Query()
	limit, err := strconv.Atoi(q.Get("limit"))
	switch {
	case err != nil || limit <= 0:
		limit = d.def // as it is, even above the maximum
	case d.max > 0 && limit > d.max:
		limit = d.max
	}
	offset, err := strconv.Atoi(q.Get("offset"))
	if err != nil || offset < 0 {
		offset = 0
	}
	base := d.base
	if base == "" {
		base = "http://" + r.Host
	}
	arts := d.articles(n)
	body := listing.AppendHead(nil, base, nil, len(arts), limit, strconv.Itoa(offset))
	if offset < len(arts) {
		body = append(body, bytes.Join(arts[offset:min(offset+limit, len(arts))], []byte(","))...)
	}
	body = append(body, "]}"...)
	w.Header().Set("Content-Type", "application/json")
	w.Write(body)
}

// start serves d until the test ends and returns its listing's URL.
func (d *dynamic) start(t testing.TB) string {
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	return srv.URL + listing.Path
}

// fixed returns the articles function of a listing that never changes.
func fixed(arts ...[]byte) func(int) [][]byte {
	return func(int) [][]byte { return arts }
}

// art returns the JSON of article id, published hours after 2025-01-01
// (newer ids later, so that the listing is newest first with ids in
// descending order), in category news/politics, changed by edits.
func art(id int64, edits ...func(a *content.Article)) *content.Article {
	a := &content.Article{
		ID:   id,
		URL:  "https://www.example.com/news/politics/article-" + strconv.FormatInt(id, 10) + "/",
		Tags: []string{"a", "b"},
		Shown: &content.Shown{
			Title:       "Article " + strconv.FormatInt(id, 10),
			Category:    "Politics",
			CategoryURL: "https://www.example.com/news/politics/",
			ImgSmall:    "https://media.example.com/avatar.png",
			ImgSmall2x:  "https://media.example.com/avatar.png",
			AuthorName:  "Ivan",
			AuthorURL:   "https://www.example.com/authors/ivan/",
		},
		Published: time.Date(2025, 1, 1, int(id), 0, 0, 0, time.UTC),
	}
	for _, e := range edits {
		e(a)
	}
	return a
}

// listingOf returns the JSON of articles, newest first as feedgen lists them.
func listingOf(arts ...*content.Article) [][]byte {
	content.Sort(arts)
	out := make([][]byte, len(arts))
	for i, a := range arts {
		out[i] = feed.AppendArticle(nil, a)
	}
	return out
}

// replace returns data with old replaced by new, once; the test fails
// when old is not there.
func replace(t testing.TB, data []byte, old, new string) []byte {
	t.Helper()
	if !bytes.Contains(data, []byte(old)) {
		t.Fatalf("%s has no %s", data, old)
	}
	return bytes.Replace(data, []byte(old), []byte(new), 1)
}

// hasLine reports whether one line of text holds all of parts.
func hasLine(text string, parts ...string) bool {
	for line := range strings.SplitSeq(text, "\n") {
		all := true
		for _, p := range parts {
			all = all && strings.Contains(line, p)
		}
		if all {
			return true
		}
	}
	return false
}
