package importer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// page is one page of the listing as the service answered it.
type page struct {
	url   string // as requested
	raw   []byte // the body
	limit int    // the effective limit, as crawl knows it; 0 before
	off   int    // the offset asked
	// problem says why the page could not be read, when it could not.
	problem string

	count          int
	next, previous string // "" for null
	results        []json.RawMessage
}

// articleKeys are the keys of an article, in the listing's order.
var articleKeys = []string{"id", "title", "url", "category", "category_url", "announcement", "tags",
	"pageviews", "comments_count", "img_big", "img_big_2x", "img_small", "img_small_2x",
	"author_name", "author_url", "published"}

// wireArticle is an article as the service wrote it, every key required.
type wireArticle struct {
	ID           *int64  `json:"id"`
	Title        *string `json:"title"`
	URL          *string `json:"url"`
	Category     *string `json:"category"`
	CategoryURL  *string `json:"category_url"`
	Announcement *string `json:"announcement"`
	Tags         *string `json:"tags"`
	Pageviews    *int64  `json:"pageviews"`
	Comments     *int64  `json:"comments_count"`
	ImgBig       *string `json:"img_big"`
	ImgBig2x     *string `json:"img_big_2x"`
	ImgSmall     *string `json:"img_small"`
	ImgSmall2x   *string `json:"img_small_2x"`
	AuthorName   *string `json:"author_name"`
	AuthorURL    *string `json:"author_url"`
	Published    *string `json:"published"`
}

// article is one article of the listing: its values, and where it was read.
type article struct {
	raw  []byte // its JSON, as the service wrote it; nil once checked (verify)
	size int    // the length of raw
	page string // the URL of the page it was read from

	ID                                          int64
	Title, URL, Category, CategoryURL           string
	Announcement, Tags                          string
	Pageviews, Comments                         int64
	ImgBig, ImgBig2x, ImgSmall, ImgSmall2x      string
	AuthorName, AuthorURL, Published            string
	section, sectionSlug, slug, path, authorKey string // set by convert
	tags                                        []string
}

// parsePage reads the body of a page: the envelope, strictly (every key,
// no other), its articles left as their JSON.
func parsePage(u string, data []byte) (*page, error) {
	var env struct {
		Count    *int64             `json:"count"`
		Next     json.RawMessage    `json:"next"`
		Previous json.RawMessage    `json:"previous"`
		Results  *[]json.RawMessage `json:"results"`
	}
	if err := decodeStrict(data, &env); err != nil {
		return nil, notListing(err)
	}
	p := &page{url: u, raw: data}
	switch {
	case env.Count == nil:
		return nil, notListing(errors.New(`no "count"`))
	case env.Next == nil:
		return nil, notListing(errors.New(`no "next"`))
	case env.Previous == nil:
		return nil, notListing(errors.New(`no "previous"`))
	case env.Results == nil:
		return nil, notListing(errors.New(`no "results"`))
	case *env.Count < 0 || *env.Count > 1<<40:
		return nil, notListing(fmt.Errorf(`"count" is %d`, *env.Count))
	}
	p.count, p.results = int(*env.Count), *env.Results
	var err error
	if p.next, err = link(env.Next); err != nil {
		return nil, notListing(fmt.Errorf(`"next": %w`, err))
	}
	if p.previous, err = link(env.Previous); err != nil {
		return nil, notListing(fmt.Errorf(`"previous": %w`, err))
	}
	return p, nil
}

// notListing says that a page is not the listing's JSON.
func notListing(err error) error {
	return fmt.Errorf("not the listing's JSON: %w", err)
}

// link reads a link: a string, or null ("").
func link(raw json.RawMessage) (string, error) {
	if string(raw) == "null" {
		return "", nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errors.New("want a URL or null")
	}
	if s == "" {
		return "", errors.New("empty")
	}
	return s, nil
}

// decodeStrict decodes the one JSON value in data into v, refusing keys v
// does not have and anything after the value.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("more after the JSON value")
	}
	return nil
}

// parseArticle reads the n-th article (from 0) of page p.
func parseArticle(p *page, n int) (*article, error) {
	raw := p.results[n]
	var w wireArticle
	if err := decodeStrict(raw, &w); err != nil {
		return nil, fmt.Errorf("%s: %w", articleName(raw, p.off+n), err)
	}
	a := &article{raw: raw, size: len(raw), page: p.url}
	ints := []struct {
		key string
		v   *int64
		dst *int64
	}{{"id", w.ID, &a.ID}, {"pageviews", w.Pageviews, &a.Pageviews}, {"comments_count", w.Comments, &a.Comments}}
	for _, f := range ints {
		if f.v == nil {
			return nil, fmt.Errorf("%s: no %q (or null)", articleName(raw, p.off+n), f.key)
		}
		*f.dst = *f.v
	}
	strs := []struct {
		key string
		v   *string
		dst *string
	}{
		{"title", w.Title, &a.Title}, {"url", w.URL, &a.URL}, {"category", w.Category, &a.Category},
		{"category_url", w.CategoryURL, &a.CategoryURL}, {"announcement", w.Announcement, &a.Announcement},
		{"tags", w.Tags, &a.Tags}, {"img_big", w.ImgBig, &a.ImgBig}, {"img_big_2x", w.ImgBig2x, &a.ImgBig2x},
		{"img_small", w.ImgSmall, &a.ImgSmall}, {"img_small_2x", w.ImgSmall2x, &a.ImgSmall2x},
		{"author_name", w.AuthorName, &a.AuthorName}, {"author_url", w.AuthorURL, &a.AuthorURL},
		{"published", w.Published, &a.Published},
	}
	for _, f := range strs {
		if f.v == nil {
			return nil, fmt.Errorf("%s: no %q (or null)", articleName(raw, p.off+n), f.key)
		}
		*f.dst = *f.v
	}
	return a, nil
}

// articleName names an article in a message: by its id when it has one,
// else by its position in the listing.
func articleName(raw []byte, pos int) string {
	var v struct {
		ID json.Number `json:"id"`
	}
	if json.Unmarshal(raw, &v) == nil && v.ID != "" {
		return "article " + v.ID.String()
	}
	return "the article at offset " + strconv.Itoa(pos)
}
