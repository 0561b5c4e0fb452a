package server

import (
	"fmt"
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
	modified, lastMod := fp.modified, fp.lastMod
	var deadline time.Time
	if hb.remote != nil {
		deadline = hb.remote.deadline()
	}
	if modified == nil && hb.remote != nil {
		lm, err := c.bucketFeedsModified(hb.remote, deadline)
		if err != nil {
			return s.remoteFailed(hb, err, method, ListPath+syndication.Formats()[f].File, rawQuery, cond, nil)
		}
		modified, lastMod = lm.modified, lm.t
	}
	r := reply{status: http.StatusOK, listing: true, contentType: s.feedTypes[f], page: &fp.pg, modified: modified}
	if cond != nil && notModified(cond, fp.pg.etag[0], lastMod) {
		r.status = http.StatusNotModified
	}
	if fp.pg.remote != nil && r.status == http.StatusOK && method != http.MethodHead {
		var err error
		if r.page, err = hb.remote.page(&fp.pg, deadline); err != nil {
			return s.remoteFailed(hb, err, method, ListPath+syndication.Formats()[f].File, rawQuery, cond, nil)
		}
	}
	return r
}

// bucketFeedsModified returns the Last-Modified of the feeds of c, a
// collection of a build of a bucket, read when a request first needs it
// (not when the build is loaded: see feedsModified) from the first of
// them, as feedsModified reads it, through the cache of r, by the
// deadline; then kept. A read that fails is tried again by the next
// request.
func (c *collection) bucketFeedsModified(r *remote, deadline time.Time) (*lastModified, error) {
	if lm := c.feedsMod.Load(); lm != nil {
		return lm, nil
	}
	formats := syndication.Formats()
	for k, fp := range c.feeds {
		if fp == nil || fp.pg.unavailable() || fp.pg.remote == nil {
			continue
		}
		body, e, err := r.get(*fp.pg.remote, nil, deadline)
		if err != nil {
			return nil, err
		}
		t, err := syndication.Modified(formats[k], body)
		e.release()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", fp.pg.remote.path, err)
		}
		lm := &lastModified{t, []string{t.UTC().Format(http.TimeFormat)}}
		c.feedsMod.Store(lm)
		return lm, nil
	}
	return nil, errUnavailable
}
