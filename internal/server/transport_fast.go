package server

import (
	"bytes"
	"net"
	"net/http"
	"runtime"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/server/socket"
)

// The fast path.
//
// Nearly every request a feed server gets is a GET of /articles/?... over
// a kept-alive HTTP/1.1 connection. net/http answers those at about two
// thirds of nginx's rate on the same machine: it builds a Request, a
// header map and a response writer for each. So the server reads such
// requests itself: it parses the request head in place, decides the
// answer (decide, shared with the net/http path), writes the head into a
// reused buffer and sends it and the page from memory (a page file
// mapped, or a store; socket.Sender.SendBytes): with one writev, or, for a large
// page sent often, spliced by reference (socket.Sender); or, for a page
// file not mapped, with sendfile (socket.Sender.SendFile). Its system calls
// leave the Go scheduler out (see socket.Sender). Anything it does not fully
// understand (another method, HTTP/1.0, a body, Connection: close,
// Expect, folded or oversized headers, an escaped path, bare LF line
// ends) is not answered here: the connection, with the bytes read so far,
// is handed to net/http, which serves it from then on. The fast path only
// ever answers what net/http would answer with the same bytes
// (TestFastPathMatchesNetHTTP).

// Connection states, for a graceful shutdown: an idle connection waits for
// the first byte of a request and may be closed; an active one finishes
// its request first.
const (
	connActive int32 = iota
	connIdle
)

// fastConn serves one connection.
type fastConn struct {
	s    *Server
	srv  *serving
	conn *net.TCPConn
	send *socket.Sender
	host string // the client's address, for the access log

	buf        []byte // buf[start:end] are bytes read and not yet answered
	start, end int
	limit      int // the most bytes a request head may take
	out        []byte
	req        reqHead
	asm        assembled // the page put together from chunks, used again

	state    atomic.Int32
	rdl, wdl time.Time // the read and write deadlines set on conn
	headAt   time.Time // when the pending request was first seen incomplete
	now      time.Time // the time of the last answer (reading the clock costs)
	served   bool      // a request was answered
}

// reqHead is the part of a request head the fast path uses.
type reqHead struct {
	method   string // http.MethodGet or http.MethodHead
	path     string // ListPath, its form without the slash, or "" for any other
	rawQuery string
	target   []byte // the request target as sent, in buf
	cond     conditions
	haveHost bool
	referer  []byte
	agent    []byte
}

// serveFast serves the connection c until it is closed, times out, the
// server shuts down, or a request goes to net/http.
func (s *Server) serveFast(srv *serving, c *net.TCPConn) {
	send, err := socket.NewSender(c, &srv.pipes)
	if err != nil {
		c.Close()
		return
	}
	fc := &fastConn{
		s: s, srv: srv, conn: c, send: send,
		buf:   make([]byte, 4<<10),
		limit: s.opt.MaxHeaderBytes + 4<<10, // as net/http allows
	}
	if s.opt.AccessLog != nil {
		fc.host, _, err = net.SplitHostPort(c.RemoteAddr().String())
		if err != nil {
			fc.host = c.RemoteAddr().String()
		}
	}
	if !srv.track(fc) {
		c.Close()
		return
	}
	defer srv.untrack(fc)
	if fc.serve() {
		return // handed to net/http
	}
	c.Close()
}

// serve reads and answers requests. It reports whether the connection was
// handed to net/http; otherwise the caller closes it.
func (c *fastConn) serve() bool {
	opt := &c.s.opt
	headTimeout := min(opt.ReadHeaderTimeout, opt.ReadTimeout)
	c.now = time.Now()
	c.setReadDeadline(c.now.Add(headTimeout))
	c.headAt = c.now
	for {
		if c.start < c.end {
			n, ok := c.parse(c.buf[c.start:c.end])
			if !ok {
				return c.handOff()
			}
			if n > 0 {
				if !c.answer() {
					return false
				}
				c.served = true
				c.start += n
				if c.start == c.end {
					c.start, c.end = 0, 0
				}
				c.headAt = time.Time{}
				continue
			}
			// An incomplete head: it must be complete within the
			// header timeout of when it was first seen.
			if c.headAt.IsZero() {
				c.headAt = time.Now()
			}
			if d := c.headAt.Add(headTimeout); d.Before(c.rdl) {
				c.setReadDeadline(d)
			}
		} else {
			// Idle between requests: after the first answer, the idle
			// timeout (before it, the header timeout set above). The
			// deadline is set before the connection says it is idle, and
			// closing is read after: a shutdown that finds it idle and
			// wakes it sets the last deadline; one that does not find it
			// idle stored closing before it is read here.
			if c.served && c.rdl.Before(c.now.Add(opt.IdleTimeout/2)) {
				c.setReadDeadline(time.Now().Add(opt.IdleTimeout))
			}
			c.state.Store(connIdle)
			if c.srv.closing.Load() {
				return false
			}
		}
		if c.end == len(c.buf) {
			if c.start > 0 {
				c.end = copy(c.buf, c.buf[c.start:c.end])
				c.start = 0
			} else {
				c.buf = append(c.buf, make([]byte, min(len(c.buf), c.limit))...)
			}
		}
		n, err := c.send.Read(c.buf[c.end:])
		if n > 0 {
			c.state.Store(connActive)
			c.end += n
		}
		if err != nil {
			return false
		}
	}
}

func (c *fastConn) setReadDeadline(t time.Time) {
	c.rdl = t
	c.conn.SetReadDeadline(t)
}

// answer sends the answer to the parsed request, and reports whether the
// connection stays open.
func (c *fastConn) answer() bool {
	s := c.s
	r := &c.req
	hb := s.cur.Load()
	c.now = time.Now()
	start := c.now
	if !s.realClock {
		start = s.opt.Now()
	}
	rep := s.decide(hb, r.method, r.path, r.rawQuery, &r.cond, &c.asm)
	sendBody := r.method != http.MethodHead && rep.hasBody()
	var f *openFile
	var body []byte
	if sendBody && rep.page != nil && rep.page.file != nil && rep.page.body == nil {
		hb, rep, body, f = s.openBody(hb, rep, r.method, r.path, r.rawQuery, &r.cond)
		sendBody = rep.hasBody()
	}
	closing := c.srv.closing.Load()
	head := rep.appendHead(c.out[:0], s.dateAt(start)[0], closing)
	var sent int64
	if sendBody {
		switch {
		case body != nil || f != nil:
			// mapped, or open: sent from there
		case rep.page != nil && (rep.page.st != nil || rep.page.file != nil || rep.page.held != nil):
			body = rep.page.body // in a store, mapped, or read from a bucket: sent from there
		case rep.page != nil:
			head = append(head, rep.page.body...)
		default:
			head = append(head, rep.body...)
		}
		sent = int64(rep.contentLength())
	}
	if c.wdl.Before(c.now.Add(s.opt.WriteTimeout / 2)) {
		c.wdl = c.now.Add(s.opt.WriteTimeout)
		c.conn.SetWriteDeadline(c.wdl)
	}
	var err error
	switch {
	case sendBody && rep.asm != nil:
		head = append(head, rep.asm.head...)
		err = c.send.SendVec(head, rep.asm.parts, rep.asm.from.recentlySent(rep.asm.k, c.now))
	case f != nil:
		err = c.send.SendFile(head, f.fd, 0, int64(rep.page.size()))
		s.files.release(f)
	default:
		err = c.send.SendBytes(head, body, body != nil && rep.page.held == nil && rep.page.recentlySent(c.now))
	}
	if rep.asm != nil {
		rep.asm.clearParts() // sent, or a HEAD's: nothing of hb is kept
	}
	rep.release()
	runtime.KeepAlive(hb) // the page may be in one of hb's stores, or mapped
	if cap(head) <= 64<<10 {
		c.out = head // an exceptional answer does not keep its memory
	}
	if s.opt.AccessLog != nil {
		e := logEntry{
			host: c.host, start: start, method: r.method, uri: string(r.target), proto: "HTTP/1.1",
			status: rep.status, bytes: sent, referer: string(r.referer), userAgent: string(r.agent),
		}
		if err != nil {
			e.bytes = 0
		}
		s.accessLog.log(&e)
	}
	return err == nil && !closing
}

// handOff gives the connection, with the bytes read and not answered, to
// net/http. It reports false when net/http no longer takes connections.
func (c *fastConn) handOff() bool {
	c.conn.SetReadDeadline(time.Time{})
	c.conn.SetWriteDeadline(time.Time{})
	hc := &handedConn{TCPConn: c.conn, pending: bytes.Clone(c.buf[c.start:c.end])}
	return c.srv.handoff.give(hc)
}

// handedConn is a connection handed to net/http: reads return the bytes
// the fast path read first.
type handedConn struct {
	*net.TCPConn
	pending []byte
}

func (c *handedConn) Read(p []byte) (int, error) {
	if len(c.pending) > 0 {
		n := copy(p, c.pending)
		c.pending = c.pending[n:]
		return n, nil
	}
	return c.TCPConn.Read(p)
}

// parse reads the request head at the start of b into c.req. It returns
// the length of the head when it is complete, or 0 when more bytes are
// needed; ok is false for a request the fast path leaves to net/http.
func (c *fastConn) parse(b []byte) (n int, ok bool) {
	r := &c.req
	inm := r.cond.inm[:0]
	*r = reqHead{}
	r.cond.inm = inm

	line, rest, complete := cutLine(b)
	if !complete {
		return 0, len(b) < c.limit && bytes.IndexByte(b, '\n') < 0
	}
	switch {
	case bytes.HasPrefix(line, []byte("GET ")):
		r.method, line = http.MethodGet, line[4:]
	case bytes.HasPrefix(line, []byte("HEAD ")):
		r.method, line = http.MethodHead, line[5:]
	default:
		return 0, false
	}
	sp := bytes.IndexByte(line, ' ')
	if sp <= 0 || string(line[sp+1:]) != "HTTP/1.1" || line[0] != '/' {
		return 0, false
	}
	r.target = line[:sp]
	for _, ch := range r.target {
		if ch <= ' ' || ch == 0x7f || ch == '#' {
			return 0, false
		}
	}
	path, query, _ := bytes.Cut(r.target, []byte("?"))
	if bytes.IndexByte(path, '%') >= 0 {
		return 0, false // net/http decodes the path: let it
	}
	switch string(path) {
	case ListPath:
		r.path = ListPath
	case ListPath[:len(ListPath)-1]:
		r.path = ListPath[:len(ListPath)-1]
	default:
		if _, ok := feedPath(string(path)); ok {
			r.path = string(path)
		}
	}
	if len(query) > 0 {
		r.rawQuery = string(query)
	}

	for {
		line, rest, complete = cutLine(rest)
		if !complete {
			return 0, len(b) < c.limit && bytes.IndexByte(rest, '\n') < 0
		}
		if len(line) == 0 {
			break
		}
		if !c.header(line) {
			return 0, false
		}
	}
	if !r.haveHost {
		return 0, false
	}
	if n := len(b) - len(rest); n <= c.limit {
		return n, true
	}
	return 0, false // too large: net/http answers 431
}

// cutLine cuts the first line, ended by CR LF, from b. complete is false
// when b holds no whole line, or a line ended by a bare LF (which the
// caller sees as an incomplete line that will never complete, and leaves
// to net/http).
func cutLine(b []byte) (line, rest []byte, complete bool) {
	i := bytes.IndexByte(b, '\n')
	if i < 0 || i == 0 || b[i-1] != '\r' {
		return nil, b, false
	}
	return b[:i-1], b[i+1:], true
}

// header reads one header field line into c.req. It returns false for a
// field the fast path leaves to net/http.
func (c *fastConn) header(line []byte) bool {
	r := &c.req
	colon := bytes.IndexByte(line, ':')
	if colon <= 0 {
		return false
	}
	name := line[:colon]
	for _, ch := range name {
		if !isTokenChar(ch) {
			return false
		}
	}
	value := bytes.Trim(line[colon+1:], " \t")
	for _, ch := range value {
		if ch < ' ' && ch != '\t' || ch == 0x7f {
			return false
		}
	}
	switch {
	case equalFold(name, "host"):
		if r.haveHost {
			return false
		}
		for _, ch := range value {
			if !isHostChar(ch) {
				return false
			}
		}
		r.haveHost = true
	case equalFold(name, "connection"):
		for tok := range bytes.SplitSeq(value, []byte(",")) {
			if t := bytes.Trim(tok, " \t"); len(t) > 0 && !equalFold(t, "keep-alive") {
				return false // close, upgrade, ...
			}
		}
	case equalFold(name, "content-length"), equalFold(name, "transfer-encoding"),
		equalFold(name, "expect"), equalFold(name, "upgrade"):
		return false
	case equalFold(name, "if-none-match"):
		r.cond.haveINM = true
		r.cond.inm = append(r.cond.inm, string(value))
	case equalFold(name, "if-modified-since"):
		if r.cond.ims == "" {
			r.cond.ims = string(value)
		}
	case equalFold(name, "referer"):
		if r.referer == nil {
			r.referer = value
		}
	case equalFold(name, "user-agent"):
		if r.agent == nil {
			r.agent = value
		}
	}
	return true
}

// equalFold reports whether b is s (lower case) in any letter case.
func equalFold(b []byte, s string) bool {
	if len(b) != len(s) {
		return false
	}
	for i := range len(b) {
		ch := b[i]
		if 'A' <= ch && ch <= 'Z' {
			ch += 'a' - 'A'
		}
		if ch != s[i] {
			return false
		}
	}
	return true
}

// isTokenChar reports whether ch may be in a header field name (RFC 9110
// token).
func isTokenChar(ch byte) bool {
	switch {
	case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		return true
	}
	switch ch {
	case '!', '#', '$', '%', '&', '\'', '*', '+', '-', '.', '^', '_', '`', '|', '~':
		return true
	}
	return false
}

// isHostChar reports whether ch may be in a Host header, as net/http
// checks it.
func isHostChar(ch byte) bool {
	switch {
	case 'a' <= ch && ch <= 'z', 'A' <= ch && ch <= 'Z', '0' <= ch && ch <= '9':
		return true
	}
	switch ch {
	case '!', '$', '%', '&', '\'', '(', ')', '*', '+', ',', '-', '.', ':', ';', '=', '[', ']', '_', '~':
		return true
	}
	return false
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
		b = append(b, "Allow: "+listing.Allow+"\r\n"...)
	}
	if r.status != http.StatusNotModified {
		b = append(b, "Content-Length: "...)
		b = strconv.AppendInt(b, int64(r.contentLength()), 10)
		if r.contentType != nil {
			b = append(b, "\r\nContent-Type: "...)
			b = append(append(b, r.contentType[0]...), "\r\n"...)
		} else {
			b = append(b, "\r\nContent-Type: "+listing.ContentType+"\r\n"...)
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
		b = append(b, "Vary: "+listing.Vary+"\r\n"...)
	}
	if close {
		b = append(b, "Connection: close\r\n"...)
	}
	return append(b, "\r\n"...)
}
