// Package server answers /articles/?limit=&offset= from the files of a
// build, exactly as the original dynamic service answered: statuses,
// headers and bodies (SPEC sections 1 and 5).
//
// The request never becomes a file path. The server holds the pages of
// one build in memory, read from the files its manifest lists and checked
// against their sizes and SHA-256 sums; a query is parsed into a limit and
// an offset, which select a page. When a new build is written into the
// folder, the server loads it fully and then switches to it at once: no
// answer ever mixes two builds.
package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// Defaults of Options.
const (
	DefaultAddr              = "127.0.0.1:8080"
	DefaultReadHeaderTimeout = 5 * time.Second
	DefaultReadTimeout       = 10 * time.Second
	DefaultWriteTimeout      = 30 * time.Second
	DefaultIdleTimeout       = 75 * time.Second
	DefaultShutdownTimeout   = 10 * time.Second
	DefaultMaxHeaderBytes    = 8 << 10
	DefaultPollInterval      = 2 * time.Second
	DefaultRetryInterval     = 100 * time.Millisecond
	DefaultStartTimeout      = 10 * time.Second
)

// Options configure a server. Zero values take the defaults above.
type Options struct {
	Dir  string // the output folder of a build
	Addr string // host:port to listen on (Run); port 0 picks a free one

	// FS, when set, holds the build instead of Dir (an archive, say): it
	// is loaded once and never watched; Dir then only names it in messages.
	FS fs.FS

	// ExternalBuilds says that the caller hands each build over with
	// Install (the live preview): New loads none, the folder (if any) is
	// only read for pages not handed over, it is not watched, and
	// switches are not logged, the caller reports its builds. Install a
	// build before Serve.
	ExternalBuilds bool

	// Log receives the listening address, one line per switch to a new
	// build, and problems; nil discards them.
	Log io.Writer
	// AccessLog receives one line per request in the combined log format;
	// nil turns the access log off.
	AccessLog io.Writer
	// Now is the clock of the access log and the Date header; nil is
	// time.Now.
	Now func() time.Time

	// Limits of the HTTP server (see http.Server). MaxHeaderBytes also
	// caps the request line.
	ReadHeaderTimeout time.Duration
	ReadTimeout       time.Duration
	WriteTimeout      time.Duration
	IdleTimeout       time.Duration
	MaxHeaderBytes    int
	// ShutdownTimeout is how long a shutdown waits for requests in flight.
	ShutdownTimeout time.Duration

	// PollInterval is how often the manifest is checked for a change that
	// no file system event reported.
	PollInterval time.Duration
	// RetryInterval is the first wait before loading again a build whose
	// files did not match its manifest (it was being written); it doubles
	// on each failure, up to PollInterval.
	RetryInterval time.Duration
	// StartTimeout is how long New waits for a build that is being written.
	StartTimeout time.Duration
}

func (o Options) withDefaults() Options {
	set := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	if o.Addr == "" {
		o.Addr = DefaultAddr
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	set(&o.ReadHeaderTimeout, DefaultReadHeaderTimeout)
	set(&o.ReadTimeout, DefaultReadTimeout)
	set(&o.WriteTimeout, DefaultWriteTimeout)
	set(&o.IdleTimeout, DefaultIdleTimeout)
	set(&o.ShutdownTimeout, DefaultShutdownTimeout)
	set(&o.PollInterval, DefaultPollInterval)
	set(&o.RetryInterval, DefaultRetryInterval)
	set(&o.StartTimeout, DefaultStartTimeout)
	if o.MaxHeaderBytes <= 0 {
		o.MaxHeaderBytes = DefaultMaxHeaderBytes
	}
	return o
}

// ListPath is the path of the listing.
const ListPath = listing.Path

// Server answers requests from the build it holds. It is an http.Handler.
type Server struct {
	opt Options
	log *syncWriter
	cur atomic.Pointer[site]

	loadMu sync.Mutex // one load at a time
	dates  atomic.Pointer[dateValue]

	accessLog    *accessLog // nil when off
	compactSlack int64      // see loadSite
	realClock    bool       // opt.Now is time.Now

	// Header values and bodies shared by every answer: never modified.
	allow, vary, json, html, zero []string
	notFoundLength, optionsLength []string
	notFound, options             []byte
}

// New returns a server for the build in opt.Dir, loaded. A build that is
// being written is waited for, up to opt.StartTimeout.
func New(ctx context.Context, opt Options) (*Server, error) {
	realClock := opt.Now == nil
	opt = opt.withDefaults()
	s := &Server{
		opt:            opt,
		realClock:      realClock,
		compactSlack:   compactSlack,
		log:            &syncWriter{w: opt.Log},
		allow:          []string{listing.Allow},
		vary:           []string{listing.Vary},
		json:           []string{listing.ContentType},
		html:           []string{"text/html; charset=utf-8"},
		zero:           []string{"0"},
		notFoundLength: []string{strconv.Itoa(len(listing.NotFoundBody))},
		optionsLength:  []string{strconv.Itoa(len(listing.OptionsBody))},
		notFound:       []byte(listing.NotFoundBody),
		options:        []byte(listing.OptionsBody),
	}
	if opt.AccessLog != nil {
		s.accessLog = &accessLog{next: s, w: opt.AccessLog, now: opt.Now}
	}
	if opt.ExternalBuilds {
		return s, nil // the caller installs the first build
	}
	deadline := time.Now().Add(opt.StartTimeout)
	wait := opt.RetryInterval
	for {
		_, err := s.Reload()
		if err == nil {
			return s, nil
		}
		var nr notReadyError
		if !errors.As(err, &nr) || time.Now().After(deadline) {
			return nil, fmt.Errorf("%s: %w", opt.Dir, err)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, opt.PollInterval)
	}
}

// Build describes the build a server answers from.
type Build struct {
	Time     time.Time // the build time its manifest records
	Articles int       // articles in the main listing
	Pages    int       // pages held in memory
	Bytes    int64     // size of the files read
}

// Current describes the build being served.
func (s *Server) Current() Build {
	st := s.cur.Load()
	return Build{Time: st.buildTime, Articles: st.count, Pages: st.pages, Bytes: st.bytes}
}

// Reload loads the build in the folder, unless its manifest is the one of
// the build being served, and switches to it. It reports whether it
// switched. On an error the server keeps answering from the build it had.
func (s *Server) Reload() (bool, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	return s.load(nil, nil, nil)
}

// load switches to a build: the one of manifest m (data, its bytes) with
// page bodies from batch, or with m nil, the one whose manifest is in the
// folder. The caller holds loadMu.
func (s *Server) load(data []byte, m *manifest.Manifest, batch *Batch) (bool, error) {
	fsys := s.opt.FS
	if fsys == nil && s.opt.Dir != "" {
		root, err := os.OpenRoot(s.opt.Dir)
		if err != nil {
			batch.Discard()
			if errors.Is(err, fs.ErrNotExist) {
				return false, fmt.Errorf("opening output folder: %w: run feedgen build first, or pass --dir", err)
			}
			return false, fmt.Errorf("opening output folder: %w", err)
		}
		defer root.Close()
		fsys = root.FS()
	}
	if m == nil {
		if fsys == nil {
			return false, errors.New("no build to load: no folder, and none installed")
		}
		r, err := manifest.Read(fsys)
		if err != nil {
			return false, err
		}
		data, m = r.Data, r.Manifest
	}
	cur := s.cur.Load()
	if cur.sameManifest(data) {
		batch.Discard()
		return false, nil
	}
	st, err := loadSite(fsys, data, m, cur, batch, s.compactSlack)
	if err != nil {
		batch.Discard()
		return false, err
	}
	s.cur.Store(st)
	if !s.opt.ExternalBuilds {
		verb := "switched to"
		if cur == nil {
			verb = "loaded"
		}
		fmt.Fprintf(s.log, "%s the %s from %s\n", verb, st.describe(), s.opt.Dir)
	}
	if cur != nil {
		// The pages no build uses any more are outside the heap, freed by
		// cleanups once a collection finds them unreachable: on an idle
		// server none may run for minutes.
		runtime.GC()
	}
	return true, nil
}

// ServeHTTP answers one request. The fast path (see fastConn) answers
// the usual requests itself; every other one comes here, through net/http.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	st := s.cur.Load()
	inm, haveINM := r.Header["If-None-Match"]
	cond := conditions{inm: inm, haveINM: haveINM}
	if ims := r.Header["If-Modified-Since"]; len(ims) > 0 {
		cond.ims = ims[0]
	}
	rep := s.decide(st, r.Method, r.URL.Path, r.URL.RawQuery, &cond)
	s.writeHeader(w, &rep, s.date())
	if r.Method != http.MethodHead && rep.hasBody() {
		if rep.page != nil {
			w.Write(rep.page.body)
		} else {
			w.Write(rep.body)
		}
	}
	// The body lives in the site's store, freed when the site is
	// unreachable: keep the site alive until the body is written.
	runtime.KeepAlive(st)
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

// syncWriter serializes writes to w: the log is written from several
// goroutines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}
