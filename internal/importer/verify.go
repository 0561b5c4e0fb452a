package importer

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/listing"
)

// verify reads the site back as feedgen's build reads it and compares each
// article's JSON with the service's; an article that does not read back as
// it was written is refused and its file dropped. Then, when no article
// and no page was left out, it renders every page read and compares it
// with the service's answer, byte for byte. It returns the number of pages
// compared.
func (c *converter) verify(ctx context.Context, s *Site, byPath map[string]*article) (int, error) {
	cfg, err := config.Parse(configName, "", s.Files[configName])
	if err != nil {
		return 0, fmt.Errorf("the config.yaml written does not read back: %w", err)
	}
	site, err := c.load(ctx, cfg, s, byPath)
	if err != nil {
		return 0, err
	}
	byID := make(map[int64]*content.Article, len(site.Articles))
	for _, a := range site.Articles {
		byID[a.ID] = a
	}
	for _, a := range c.kept() {
		got := byID[a.ID]
		if got == nil {
			c.refuse(a, "reads back as a draft or a scheduled article: a build would leave it out")
			delete(s.Files, a.path)
			continue
		}
		if enc := feed.AppendArticle(nil, got); !bytes.Equal(enc, a.raw) {
			c.refuse(a, "%s", articleDiff(a.raw, enc))
			delete(s.Files, a.path)
		}
	}
	// The articles' JSON is checked: the pages' bytes are all that is
	// compared from here, and the import holds one copy less.
	for _, a := range c.r.articles {
		a.raw = nil
	}
	for _, p := range c.r.pages {
		p.results = nil
	}
	if len(c.problems) > 0 || len(c.r.problems) > 0 {
		return 0, nil // pages that miss articles cannot be the service's
	}
	l := feed.New(cfg.BaseURL, cfg.Pagination, nil, site.Articles)
	for _, p := range c.r.pages {
		if got := renderPage(l, p.limit, p.off); !bytes.Equal(got, p.raw) {
			c.problems.Add(p.url, 0, pageDiff(p, got))
		}
	}
	return len(c.r.pages), nil
}

// load reads the site's articles back with feedgen's loader. A file the
// loader finds errors in is refused and dropped, and the rest read again.
func (c *converter) load(ctx context.Context, cfg *config.Config, s *Site, byPath map[string]*article) (*content.Site, error) {
	for {
		files := make(map[string][]byte, len(s.Files))
		for p, data := range s.Files {
			if rel, ok := strings.CutPrefix(p, "content/"); ok {
				files[rel] = data
			}
		}
		site, err := content.NewLoader(cfg).Load(ctx, newMemFS(files), content.Options{Now: c.now, Root: "content"})
		var dl diag.List
		if !errors.As(err, &dl) {
			return site, err
		}
		for _, d := range dl {
			a := byPath[d.Path]
			if a == nil || s.Files[d.Path] == nil {
				return nil, fmt.Errorf("the site written does not read back: %s", d)
			}
			c.refuse(a, "does not read back: %s", d)
			delete(s.Files, d.Path)
		}
	}
}

// renderPage returns the page (limit, offset) of the main listing of l.
func renderPage(l *feed.Listing, limit, offset int) []byte {
	main := l.Main()
	if offset >= main.Count() {
		return listing.AppendEmptyPage(nil, l.BaseURL, nil, main.Count(), limit, strconv.Itoa(offset))
	}
	page, _ := l.AppendPage(nil, feed.Page{Coll: main, Limit: limit, Offset: offset}) // in memory: no error
	return page
}

// articleDiff says how the JSON of an article read back (got) differs from
// the service's (want): the first key whose value differs.
func articleDiff(want, got []byte) string {
	var w, g map[string]json.RawMessage
	if json.Unmarshal(want, &w) == nil && json.Unmarshal(got, &g) == nil {
		for _, k := range articleKeys {
			if !bytes.Equal(w[k], g[k]) {
				return fmt.Sprintf("%s would be %s, the service wrote %s", k, short(g[k]), short(w[k]))
			}
		}
	}
	return "the service writes its JSON otherwise than feedgen (key order, spacing): " + short(want)
}

// pageDiff says how a page rendered from the site (got) differs from the
// service's answer.
func pageDiff(p *page, got []byte) string {
	g, err := parsePage(p.url, got)
	if err != nil {
		return "differs from the page feedgen would write"
	}
	off := p.off
	if p, err = parsePage(p.url, p.raw); err != nil { // its results were dropped
		return "differs from the page feedgen would write"
	}
	p.off = off
	switch {
	case g.count != p.count:
		return fmt.Sprintf("count would be %d, the service says %d", g.count, p.count)
	case g.next != p.next:
		return fmt.Sprintf("next would be %q, the service wrote %q", g.next, p.next)
	case g.previous != p.previous:
		return fmt.Sprintf("previous would be %q, the service wrote %q", g.previous, p.previous)
	}
	for i := range min(len(g.results), len(p.results)) {
		if !bytes.Equal(g.results[i], p.results[i]) {
			return fmt.Sprintf("at offset %d the service lists %s, feedgen would list %s: feedgen lists the newest first, by published, then by id",
				p.off+i, articleName(p.results[i], p.off+i), articleName(g.results[i], p.off+i))
		}
	}
	return "the service writes the page otherwise than feedgen (key order, spacing)"
}

// short returns b for a message, cut after 80 bytes.
func short(b []byte) string {
	if len(b) <= 80 {
		return string(b)
	}
	cut := 80
	for cut > 0 && !utf8.RuneStart(b[cut]) {
		cut--
	}
	return string(b[:cut]) + "..."
}
