package server

import (
	"net/http"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/syndication"
)

// The reader feeds of a build (SPEC §13): ListPath + a format's file
// (feed.rss, feed.atom, feed.json), the collection selected by the filter
// parameters of the query, parsed as the listing parses them (limit and
// offset ignored). A collection without a feed (not one of the build, or
// without articles) is not found: no empty feeds.

// feedPath returns the index in syndication.Formats of the feed at path,
// and whether path is one.
func feedPath(path string) (int, bool) {
	file, ok := strings.CutPrefix(path, ListPath)
	if !ok {
		return 0, false
	}
	for i, f := range syndication.Formats() {
		if f.File == file {
			return i, true
		}
	}
	return 0, false
}

// feedTypes returns the Content-Type header value of each format.
func feedTypes() [][]string {
	var ts [][]string
	for _, f := range syndication.Formats() {
		ts = append(ts, []string{f.ContentType})
	}
	return ts
}

// feedPage is one feed of a collection, ready to send: its page, and its
// Last-Modified (the newest item's date, as Django sends it).
type feedPage struct {
	pg       page
	modified []string
	lastMod  time.Time
}

// decideFeed answers a request for the feed in format f (an index in
// syndication.Formats) of the collection rawQuery selects, from hb: the
// methods as the listing's path answers them, with the feed's own
// Content-Type, ETag and Last-Modified.
func (s *Server) decideFeed(hb *heldBuild, method string, f int, rawQuery string, cond *conditions) reply {
	if r, answered := s.methodReply(method); answered {
		return r
	}
	q := listing.ParseQuery(rawQuery, hb.paging, hb.filters)
	c := hb.collection(q.Params)
	if c == nil || f >= len(c.feeds) || c.feeds[f] == nil {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
	}
	fp := c.feeds[f]
	if fp.pg.unavailable() {
		return s.unavailableReply()
	}
	r := reply{status: http.StatusOK, listing: true, contentType: s.feedTypes[f], page: &fp.pg, modified: fp.modified}
	if cond != nil && notModified(cond, fp.pg.etag[0], fp.lastMod) {
		r.status = http.StatusNotModified
	}
	if fp.pg.remote != nil && r.status == http.StatusOK && method != http.MethodHead {
		var err error
		if r.page, err = hb.remote.page(&fp.pg); err != nil {
			return s.remoteFailed(hb, err, func(next *heldBuild) reply {
				return s.decideFeed(next, method, f, rawQuery, cond)
			})
		}
	}
	return r
}
