package server

import (
	"errors"
	"io/fs"
	"net/http"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// reply is the answer to one request, decided once (decide) and then sent
// either by the fast path (appendHead) or through net/http (ServeHTTP):
// both send the same bytes, which TestFastPathMatchesNetHTTP checks.
type reply struct {
	status  int
	listing bool // an answer from the listing's path: Allow and Vary
	// contentType is the Content-Type header's value: nil for
	// listing.ContentType; the redirect's text/html, a feed's its format's.
	contentType []string
	location    string // Location of a redirect
	page        *page  // the page answered (200) or not modified (304)
	// asm, for a page put together from chunks, is its head and parts
	// (page is then &asm.pg, with no body of its own).
	asm      *assembled
	body     []byte // the body of any other answer with one
	modified []string
}

// conditions are the conditional headers of a request: the values of
// every If-None-Match field, and the first If-Modified-Since.
type conditions struct {
	inm     []string
	haveINM bool
	ims     string
}

// decide answers a request for path (decoded) and the raw query, from
// build hb. A HEAD gets the answer of a GET; the caller leaves the body
// out. For a query without filters and a pre-rendered page it allocates
// nothing: the fast path counts on it. What a build answers is its
// layout's (layout.Layout.Answers); a page of a layout whose pages are
// assembled is put together in asm, when not nil (the connection's, used
// again), else in a new one.
func (s *Server) decide(hb *heldBuild, method, path, rawQuery string, cond *conditions, asm *assembled) reply {
	switch path {
	case ListPath:
	case ListPath[:len(ListPath)-1]:
		loc := ListPath
		if rawQuery != "" {
			loc += "?" + escapeQuery(rawQuery)
		}
		return reply{status: http.StatusMovedPermanently, contentType: s.html, location: loc}
	default:
		if f, ok := feedPath(path); ok && hb.hasFeeds(f) {
			return s.decideFeed(hb, method, f, rawQuery, cond)
		}
		return reply{status: http.StatusNotFound, body: s.notFound}
	}
	if r, answered := s.methodReply(method); answered {
		return r
	}

	q := listing.ParseQuery(rawQuery, hb.paging, hb.filters)
	c := hb.collection(q.Params)
	if c == nil && len(q.Params) > 0 {
		c = hb.emptyCollection(q.Params)
	}
	if c == nil {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
	}
	if !hb.layout.Answers(hb.paging, q.Limit) {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
	}
	if hb.layout.Assembled {
		return s.decideAssembled(hb, c, q, method, rawQuery, cond, asm)
	}
	lp := c.lookup(q.Limit)
	if lp == nil {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
	}
	var pg *page
	switch off, small := canonical(q.Offset); {
	case small && off < c.count && hb.aligned:
		if off%lp.limit != 0 {
			return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
		}
		pg = &lp.pages[off/lp.limit]
	case small && (off < c.count || off == 0) && lp.pages != nil: // none in an empty collection
		pg = &lp.pages[off]
	default:
		empty := hb.emptyPage(c, q.Limit, q.Offset)
		pg = &empty
	}
	if pg.unavailable() {
		return s.unavailableReply()
	}
	r := reply{status: http.StatusOK, listing: true, page: pg, modified: hb.lastModified}
	if cond != nil && notModified(cond, pg.etag[0], hb.buildTime) {
		r.status = http.StatusNotModified
	}
	if pg.remote != nil && r.status == http.StatusOK && method != http.MethodHead {
		var err error
		if r.page, err = hb.remote.page(pg, hb.remote.deadline()); err != nil {
			return s.remoteFailed(hb, err, method, path, rawQuery, cond, asm)
		}
	}
	return r
}

// methodReply answers a request of the listing's path, or a feed's, by
// its method alone: OPTIONS, and 405 for any method but GET and HEAD;
// answered is false for GET and HEAD, which the query decides.
func (s *Server) methodReply(method string) (r reply, answered bool) {
	switch method {
	case http.MethodGet, http.MethodHead:
		return reply{}, false
	case http.MethodOptions:
		return reply{status: http.StatusOK, listing: true, body: s.options}, true
	}
	return reply{status: http.StatusMethodNotAllowed, listing: true, body: listing.AppendMethodNotAllowed(nil, method)}, true
}

// decideAssembled answers query q for collection c of a build whose pages
// are assembled from chunks (see build_chunks.go): any limit the layout
// answers at any offset.
func (s *Server) decideAssembled(hb *heldBuild, c *collection, q listing.Query, method, rawQuery string, cond *conditions, asm *assembled) reply {
	r := reply{status: http.StatusOK, listing: true, modified: hb.lastModified}
	off, small := canonical(q.Offset)
	if !small || off >= c.count {
		empty := hb.emptyPage(c, q.Limit, q.Offset)
		r.page = &empty
		if cond != nil && notModified(cond, r.page.etag[0], hb.buildTime) {
			r.status = http.StatusNotModified
		}
		return r
	}
	if asm == nil {
		asm = new(assembled)
	}
	// A build of a bucket reads the chunks only for a body to send: a
	// HEAD, or an answer 304, is made from the index alone.
	bodies := hb.remote == nil || method != http.MethodHead && (cond == nil || !cond.haveINM && cond.ims == "")
	if err := hb.assemble(asm, c, q.Limit, off, q.Offset, bodies); err != nil {
		return s.remoteFailed(hb, err, method, ListPath, rawQuery, cond, asm)
	}
	r.page, r.asm = &asm.pg, asm
	if cond != nil && notModified(cond, r.page.etag[0], hb.buildTime) {
		r.status = http.StatusNotModified
	}
	if !bodies && r.status == http.StatusOK && method != http.MethodHead {
		if err := hb.assemble(asm, c, q.Limit, off, q.Offset, true); err != nil {
			return s.remoteFailed(hb, err, method, ListPath, rawQuery, cond, asm)
		}
	}
	return r
}

// remoteFailed is the answer to a request (method, path, rawQuery, cond)
// of build hb that needed a body hb does not hold, or that could not be
// read from the bucket (err). A body the bucket no longer has as hb names
// it was replaced, or deleted, by a newer build: the request waits for the
// server to switch to it (see waitSwitch) and is decided again from it,
// whole. Past that, or for a bucket that does not answer, it is answered
// 503.
func (s *Server) remoteFailed(hb *heldBuild, err error, method, path, rawQuery string, cond *conditions, asm *assembled) reply {
	if hb.remote != nil && (errors.Is(err, errReplaced) || errors.Is(err, fs.ErrNotExist)) {
		if next := s.waitSwitch(hb); next != nil && next != hb {
			// The answer of next holds no body of next's own: a build of
			// a bucket's bodies are held by the reply (remoteEntry), not
			// by the build the transport keeps alive.
			return s.decide(next, method, path, rawQuery, cond, asm)
		}
	}
	return s.unavailableReply()
}

// unavailableReply is the answer 503 to a request for a page the server
// cannot send now.
func (s *Server) unavailableReply() reply {
	return reply{status: http.StatusServiceUnavailable, listing: true, body: s.unavailable}
}

// notModified evaluates If-None-Match (a list of entity tags compared
// weakly, or *) and, only when there is none, If-Modified-Since.
func notModified(c *conditions, etag string, modified time.Time) bool {
	if c.haveINM {
		for _, v := range c.inm {
			if etagListMatches(v, etag) {
				return true
			}
		}
		return false
	}
	if c.ims != "" {
		t, err := http.ParseTime(c.ims)
		return err == nil && !modified.After(t)
	}
	return false
}

// contentLength is the length of the body the reply has, sent or not (a
// HEAD gets the length of the GET's body).
func (r *reply) contentLength() int {
	if r.asm != nil {
		return r.asm.size
	}
	if r.page != nil {
		return r.page.size()
	}
	return len(r.body)
}

// release lets go of the body read from a bucket that the reply's page
// holds (see remoteEntry), once the answer is written; a page put
// together from chunks is let go by assembled.clearParts.
func (r *reply) release() {
	if r.page != nil && r.page.held != nil {
		r.page.held.release()
		r.page.held = nil
	}
}

// hasBody reports whether the reply's status allows a body.
func (r *reply) hasBody() bool {
	return r.status != http.StatusNotModified && r.status != http.StatusMovedPermanently
}

// escapeQuery percent-encodes the bytes of a raw query that may not
// appear in a URL as they are, leaving the rest (and every existing
// escape) as sent.
func escapeQuery(q string) string {
	const upper = "0123456789ABCDEF"
	n := 0
	for i := 0; i < len(q); i++ {
		if !queryByteOK(q[i]) {
			n++
		}
	}
	if n == 0 {
		return q
	}
	b := make([]byte, 0, len(q)+2*n)
	for i := 0; i < len(q); i++ {
		if c := q[i]; queryByteOK(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', upper[c>>4], upper[c&15])
		}
	}
	return string(b)
}

// queryByteOK reports whether c stays as it is in a redirect's query: the
// characters the original's framework left unquoted.
func queryByteOK(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '-', '.', '_', '~', '/', '#', '%', '[', ']', '=', ':', ';', '$', '&', '(', ')', '+', ',', '!', '?', '*', '@', '\'':
		return true
	}
	return false
}

// etagListMatches reports whether the If-None-Match value list names
// etag (weak comparison: a W/ prefix is ignored) or is "*". Parsing stops
// at the first malformed element.
func etagListMatches(list, etag string) bool {
	for {
		for list != "" && (list[0] == ' ' || list[0] == '\t' || list[0] == ',') {
			list = list[1:]
		}
		if list == "" {
			return false
		}
		if list[0] == '*' {
			return true
		}
		if len(list) >= 2 && list[0] == 'W' && list[1] == '/' {
			list = list[2:]
		}
		if list == "" || list[0] != '"' {
			return false
		}
		end := 1
		for end < len(list) && list[end] != '"' {
			end++
		}
		if end == len(list) {
			return false
		}
		if list[:end+1] == etag {
			return true
		}
		list = list[end+1:]
	}
}

// canonical reads a decimal with no sign and no leading zeros that fits
// in 60 bits, as ParseQuery writes offsets.
func canonical(s string) (int, bool) {
	if s == "" || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
