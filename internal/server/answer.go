package server

import (
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// reply is the answer to one request, decided once (decide) and then sent
// either by the fast path (appendHead) or through net/http (ServeHTTP):
// both send the same bytes, which TestFastPathMatchesNetHTTP checks.
type reply struct {
	status   int
	listing  bool   // an answer from the listing's path: Allow and Vary
	html     bool   // Content-Type text/html (the redirect), else application/json
	location string // Location of a redirect
	page     *page  // the page answered (200) or not modified (304)
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
// nothing: the fast path counts on it.
func (s *Server) decide(hb *heldBuild, method, path, rawQuery string, cond *conditions) reply {
	switch path {
	case ListPath:
	case ListPath[:len(ListPath)-1]:
		loc := ListPath
		if rawQuery != "" {
			loc += "?" + escapeQuery(rawQuery)
		}
		return reply{status: http.StatusMovedPermanently, html: true, location: loc}
	default:
		return reply{status: http.StatusNotFound, body: s.notFound}
	}
	switch method {
	case http.MethodGet, http.MethodHead:
	case http.MethodOptions:
		return reply{status: http.StatusOK, listing: true, body: s.options}
	default:
		return reply{status: http.StatusMethodNotAllowed, listing: true, body: listing.AppendMethodNotAllowed(nil, method)}
	}

	q := listing.ParseQuery(rawQuery, hb.paging, hb.filters)
	c := hb.collection(q.Params)
	if c == nil && len(q.Params) > 0 {
		c = hb.emptyCollection(q.Params)
	}
	if c == nil {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
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
		return reply{status: http.StatusServiceUnavailable, listing: true, body: s.unavailable}
	}
	r := reply{status: http.StatusOK, listing: true, page: pg, modified: hb.lastModified}
	if cond != nil && notModified(cond, pg.etag[0], hb.buildTime) {
		r.status = http.StatusNotModified
	}
	return r
}

// ServeHTTP answers one request. The fast path (see fastConn) answers
// the usual requests itself; every other one comes here, through net/http.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hb := s.cur.Load()
	inm, haveINM := r.Header["If-None-Match"]
	cond := conditions{inm: inm, haveINM: haveINM}
	if ims := r.Header["If-Modified-Since"]; len(ims) > 0 {
		cond.ims = ims[0]
	}
	rep := s.decide(hb, r.Method, r.URL.Path, r.URL.RawQuery, &cond)
	s.writeHeader(w, &rep, s.date())
	if r.Method != http.MethodHead && rep.hasBody() {
		if rep.page != nil {
			w.Write(rep.page.body)
		} else {
			w.Write(rep.body)
		}
	}
	// The body lives in one of hb's stores, freed when hb is unreachable:
	// keep hb alive until the body is written.
	runtime.KeepAlive(hb)
}

// date returns the Date header's value for now, formatted once a second
// rather than by net/http for every answer.
func (s *Server) date() []string { return s.dateAt(s.opt.Now()) }

// dateAt returns the Date header's value for now.
func (s *Server) dateAt(now time.Time) []string {
	if d := s.dates.Load(); d != nil && d.sec == now.Unix() {
		return d.value
	}
	d := &dateValue{sec: now.Unix(), value: []string{now.UTC().Format(http.TimeFormat)}}
	s.dates.Store(d)
	return d.value
}

// dateValue is a Date header value and the second it is for.
type dateValue struct {
	sec   int64
	value []string
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
	if r.page != nil {
		return len(r.page.body)
	}
	return len(r.body)
}

// hasBody reports whether the reply's status allows a body.
func (r *reply) hasBody() bool {
	return r.status != http.StatusNotModified && r.status != http.StatusMovedPermanently
}

// appendHead appends the status line and header of r as net/http writes
// them (fields sorted by name; the handler always sets Date), ending with
// the blank line. close adds Connection: close, which net/http writes last.
func (r *reply) appendHead(b []byte, date string, close bool) []byte {
	switch r.status {
	case http.StatusOK:
		b = append(b, "HTTP/1.1 200 OK\r\n"...)
	default:
		b = append(b, "HTTP/1.1 "...)
		b = strconv.AppendInt(b, int64(r.status), 10)
		b = append(b, ' ')
		b = append(b, http.StatusText(r.status)...)
		b = append(b, "\r\n"...)
	}
	if r.listing {
		b = append(b, "Allow: GET, HEAD, OPTIONS\r\n"...)
	}
	if r.status != http.StatusNotModified {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(r.contentLength()), 10)
		if r.html {
			b = append(b, "\r\nContent-Type: text/html; charset=utf-8\r\n"...)
		} else {
			b = append(b, "\r\nContent-Type: application/json\r\n"...)
		}
	}
	b = append(b, "Date: "...)
	b = append(b, date...)
	b = append(b, "\r\n"...)
	if r.page != nil {
		b = append(b, "Etag: "...)
		b = append(b, r.page.etag[0]...)
		b = append(b, "\r\nLast-Modified: "...)
		b = append(b, r.modified[0]...)
		b = append(b, "\r\n"...)
	}
	if r.location != "" {
		b = append(b, "Location: "...)
		b = append(b, r.location...)
		b = append(b, "\r\n"...)
	}
	if r.status == http.StatusServiceUnavailable {
		b = append(b, "Retry-After: "...)
		b = append(b, retryAfter...)
		b = append(b, "\r\n"...)
	}
	if r.listing {
		b = append(b, "Vary: Accept\r\n"...)
	}
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}

// writeHeader sets the header of r on w and writes the status: the
// net/http way of sending what appendHead writes.
func (s *Server) writeHeader(w http.ResponseWriter, r *reply, date []string) {
	h := w.Header()
	if r.listing {
		h["Allow"], h["Vary"] = s.allow, s.vary
	}
	if r.status != http.StatusNotModified {
		if r.page != nil {
			h["Content-Length"] = r.page.length
		} else {
			h["Content-Length"] = s.length(len(r.body))
		}
		if r.html {
			h["Content-Type"] = s.html
		} else {
			h["Content-Type"] = s.json
		}
	}
	if r.page != nil {
		h["Etag"], h["Last-Modified"] = r.page.etag, r.modified
	}
	if r.location != "" {
		h["Location"] = []string{r.location}
	}
	if r.status == http.StatusServiceUnavailable {
		h["Retry-After"] = s.retryAfter
	}
	h["Date"] = date
	w.WriteHeader(r.status)
}

// length returns the header value of a Content-Length.
func (s *Server) length(n int) []string {
	switch n {
	case 0:
		return s.zero
	case len(s.notFound):
		return s.notFoundLength
	case len(s.options):
		return s.optionsLength
	case len(s.unavailable):
		return s.unavailableLength
	}
	return []string{strconv.Itoa(n)}
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
