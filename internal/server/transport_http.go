package server

import (
	"io"
	"net/http"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// ServeHTTP answers one request. The fast path (see fastConn) answers
// the usual requests itself; every other one comes here, through net/http.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hb := s.cur.Load()
	inm, haveINM := r.Header["If-None-Match"]
	cond := conditions{inm: inm, haveINM: haveINM}
	if ims := r.Header["If-Modified-Since"]; len(ims) > 0 {
		cond.ims = ims[0]
	}
	rep := s.decide(hb, r.Method, r.URL.Path, r.URL.RawQuery, &cond, nil)
	defer func() {
		// A body read from a bucket is held by the reply: let go of it
		// once written, even when writing panics (http.ErrAbortHandler).
		if rep.asm != nil {
			rep.asm.clearParts()
		}
		rep.release()
	}()
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
	case rep.asm != nil:
		writeAssembled(w, rep.asm)
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

// writeAssembled writes a page put together from chunks to w. A chunk
// file cut short in place since it was mapped faults: the answer is
// aborted, as in writeMapped.
func writeAssembled(w io.Writer, a *assembled) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			panic(http.ErrAbortHandler)
		}
	}()
	if _, err := w.Write(a.head); err != nil {
		return
	}
	for _, p := range a.parts {
		if _, err := w.Write(p); err != nil {
			return
		}
	}
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

// writeHeader sets the header of r on w and writes the status: the
// net/http way of sending what appendHead writes.
func (s *Server) writeHeader(w http.ResponseWriter, r *reply, date []string) {
	h := w.Header()
	if r.listing {
		h["Allow"], h["Vary"] = s.allow, s.vary
	}
	if r.status != http.StatusNotModified {
		if r.asm != nil {
			h["Content-Length"] = s.length(r.asm.size)
		} else if r.page != nil {
			h["Content-Length"] = r.page.length
		} else {
			h["Content-Length"] = s.length(len(r.body))
		}
		if r.contentType != nil {
			h["Content-Type"] = r.contentType
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
