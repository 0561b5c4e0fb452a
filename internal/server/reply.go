package server

import (
	"net/http"
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
// build st. A HEAD gets the answer of a GET; the caller leaves the body out.
func (s *Server) decide(st *site, method, path, rawQuery string, cond *conditions) reply {
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

	q := listing.ParseQuery(rawQuery, st.paging, nil)
	lp := st.lookup(q.Limit)
	if lp == nil {
		return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
	}
	var pg *page
	switch off, small := canonical(q.Offset); {
	case small && off < st.count && st.aligned:
		if off%lp.limit != 0 {
			return reply{status: http.StatusNotFound, listing: true, body: s.notFound}
		}
		pg = &lp.pages[off/lp.limit]
	case small && (off < st.count || off == 0):
		pg = &lp.pages[off]
	default:
		empty := st.emptyPage(q.Limit, q.Offset)
		pg = &empty
	}
	r := reply{status: http.StatusOK, listing: true, page: pg, modified: st.lastModified}
	if cond != nil && notModified(cond, pg.etag[0], st.buildTime) {
		r.status = http.StatusNotModified
	}
	return r
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
	}
	return []string{strconv.Itoa(n)}
}
