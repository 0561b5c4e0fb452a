package server

import (
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// accessLog writes one line per request to w in the combined log format:
//
//	host - - [02/Jan/2006:15:04:05 -0700] "GET /articles/ HTTP/1.1" 200 1234 "referer" "user agent"
//
// The request line, referer and user agent are written with '"', '\\',
// control and non-ASCII bytes as \xHH, so that a line is always one line;
// a missing referer or user agent is "-".
type accessLog struct {
	next http.Handler
	now  func() time.Time

	mu  sync.Mutex
	w   io.Writer
	buf []byte
}

func (a *accessLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := a.now()
	lw := &loggedWriter{ResponseWriter: w}
	a.next.ServeHTTP(lw, r)
	if lw.status == 0 {
		lw.status = http.StatusOK
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a.log(&logEntry{
		host: host, start: start, method: r.Method, uri: r.RequestURI, proto: r.Proto,
		status: lw.status, bytes: lw.bytes, referer: r.Referer(), userAgent: r.UserAgent(),
	})
}

// logEntry is what a line of the access log says of one request.
type logEntry struct {
	host               string
	start              time.Time
	method, uri, proto string
	status             int
	bytes              int64 // of the body sent
	referer, userAgent string
}

// log writes the line of e.
func (a *accessLog) log(e *logEntry) {
	a.mu.Lock()
	defer a.mu.Unlock()
	b := a.buf[:0]
	b = appendEscaped(b, e.host)
	b = append(b, " - - ["...)
	b = e.start.AppendFormat(b, "02/Jan/2006:15:04:05 -0700")
	b = append(b, `] "`...)
	b = appendEscaped(b, e.method)
	b = append(b, ' ')
	b = appendEscaped(b, e.uri)
	b = append(b, ' ')
	b = appendEscaped(b, e.proto)
	b = append(b, `" `...)
	b = strconv.AppendInt(b, int64(e.status), 10)
	b = append(b, ' ')
	if e.bytes == 0 {
		b = append(b, '-')
	} else {
		b = strconv.AppendInt(b, e.bytes, 10)
	}
	b = append(b, ` "`...)
	b = appendField(b, e.referer)
	b = append(b, `" "`...)
	b = appendField(b, e.userAgent)
	b = append(b, "\"\n"...)
	a.w.Write(b)
	a.buf = b
}

// appendField appends a header's value escaped, or "-" when it is empty.
func appendField(b []byte, s string) []byte {
	if s == "" {
		return append(b, '-')
	}
	return appendEscaped(b, s)
}

// appendEscaped appends s with '"', '\\', control and non-ASCII bytes as
// \xHH.
func appendEscaped(b []byte, s string) []byte {
	const hex = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			b = append(b, '\\', 'x', hex[c>>4], hex[c&15])
			continue
		}
		b = append(b, c)
	}
	return b
}

// loggedWriter records the status and the size of the body of an answer.
type loggedWriter struct {
	http.ResponseWriter
	status int
	bytes  int64
}

func (w *loggedWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *loggedWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(p)
	w.bytes += int64(n)
	return n, err
}

// Flush sends what is buffered (see http.Flusher).
func (w *loggedWriter) Flush() {
	http.NewResponseController(w.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (w *loggedWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
