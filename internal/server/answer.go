package server

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
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
		return s.unavailableReply()
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
	sendBody := r.Method != http.MethodHead && rep.hasBody()
	var f *openFile
	var mapped []byte
	switch {
	case !sendBody || rep.page == nil || rep.page.file == nil:
	case rep.page.body != nil:
		mapped = rep.page.body
	default:
		hb, rep, mapped, f = s.openBody(hb, rep, r.Method, r.URL.Path, r.URL.RawQuery, &cond)
		sendBody = rep.hasBody()
	}
	s.writeHeader(w, &rep, s.date())
	switch {
	case !sendBody:
	case mapped != nil:
		writeMapped(w, mapped)
	case f != nil:
		copyFile(w, f.fd, int64(rep.page.size()))
		s.files.release(f)
	case rep.page != nil:
		w.Write(rep.page.body)
	default:
		w.Write(rep.body)
	}
	// The body lives in one of hb's stores, or in a mapping of one of its
	// page files, freed when hb is unreachable: keep hb alive until the
	// body is written.
	runtime.KeepAlive(hb)
}

// copyBufs are the buffers of copyFile.
var copyBufs = sync.Pool{New: func() any { return new([32 << 10]byte) }}

// copyFile writes n bytes of the open file fd, from its start, to w.
func copyFile(w io.Writer, fd int, n int64) {
	buf := copyBufs.Get().(*[32 << 10]byte)
	defer copyBufs.Put(buf)
	for off := int64(0); off < n; {
		k, err := readAt(fd, buf[:min(n-off, int64(len(buf)))], off)
		if k > 0 {
			if _, werr := w.Write(buf[:k]); werr != nil {
				return
			}
		}
		if err != nil {
			// The file is shorter than it was (changed in place): the
			// answer cannot be completed; net/http closes the
			// connection when fewer bytes than Content-Length were written.
			return
		}
		off += int64(k)
	}
}

// writeMapped writes a mapped page file to w. Should the file have been
// cut short in place (pages are replaced by rename, never changed in
// place, but a person may copy over one), reading the mapping past its
// end faults: the fault is a panic rather than a crash, and the answer is
// aborted (net/http closes the connection).
func writeMapped(w io.Writer, mem []byte) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			panic(http.ErrAbortHandler)
		}
	}()
	w.Write(mem)
}

// openBody gets the body of the page that rep, decided from build hb,
// answers with: the page file mapped, or else open. When the file at the
// page's path is no longer the one hb recorded, a newer build replaced
// it: the request waits for the server to switch to a newer build (up to
// SwitchTimeout after the first request of hb that found a file
// replaced) and is decided again from that build, whole; past that, or
// when no descriptor can be had, it is answered 503. It returns the build
// and the answer to send, and the body: mapped, or in the open file f,
// which the caller releases (both nil when the answer has no body in a
// file).
func (s *Server) openBody(hb *heldBuild, rep reply, method, path, rawQuery string, cond *conditions) (_ *heldBuild, _ reply, mapped []byte, f *openFile) {
	for {
		if rep.page.body != nil {
			return hb, rep, rep.page.body, nil // mapped at load
		}
		pf := rep.page.file
		if m := pf.mapped(); m != nil {
			return hb, rep, m, nil
		}
		f, err := s.files.acquire(hb.dir, pf)
		if err != nil && outOfFiles(err) && s.files.shrink(16) {
			f, err = s.files.acquire(hb.dir, pf)
		}
		if err == nil {
			if m := pf.mapFrom(f.fd, hb.dir.maps); m != nil {
				s.files.release(f)
				return hb, rep, m, nil
			}
			return hb, rep, nil, f
		}
		if !errors.Is(err, errStale) {
			s.logOpenError(pf, err)
			return hb, s.unavailableReply(), nil, nil
		}
		next := s.waitSwitch(hb)
		if next == nil {
			return hb, s.unavailableReply(), nil, nil
		}
		hb = next
		rep = s.decide(hb, method, path, rawQuery, cond)
		if rep.page == nil || rep.page.file == nil || !rep.hasBody() {
			return hb, rep, nil, nil
		}
	}
}

// waitSwitch waits for the server to switch from build hb, whose page
// files a newer build is replacing, and returns the build it switched
// to; nil when SwitchTimeout has passed since a request of hb first
// found a page file replaced.
func (s *Server) waitSwitch(hb *heldBuild) *heldBuild {
	if cur := s.cur.Load(); cur != hb {
		return cur
	}
	now := time.Now()
	at := hb.staleAt.Load()
	if at == 0 {
		if hb.staleAt.CompareAndSwap(0, now.UnixNano()) {
			// The first: have FollowBuilds look at the folder now, should
			// it have missed the new build.
			select {
			case s.nudge <- struct{}{}:
			default:
			}
		}
		at = hb.staleAt.Load()
	}
	wait := time.Unix(0, at).Add(s.opt.SwitchTimeout).Sub(now)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-hb.replaced:
		return s.cur.Load()
	case <-t.C:
		return nil
	}
}

// unavailableReply is the answer 503 to a request for a page the server
// cannot send now.
func (s *Server) unavailableReply() reply {
	return reply{status: http.StatusServiceUnavailable, listing: true, body: s.unavailable}
}

// logOpenError logs, at most once a second, that a page file could not
// be opened for a reason other than a newer build.
func (s *Server) logOpenError(pf *pageFile, err error) {
	now := time.Now().Unix()
	if last := s.openErrorAt.Load(); last == now || !s.openErrorAt.CompareAndSwap(last, now) {
		return
	}
	fmt.Fprintf(s.log, "opening %s: %v; answering 503\n", displayPath(pf.path), err)
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
		return r.page.size()
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
