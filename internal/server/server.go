package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/outdir"
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
	DefaultSwitchTimeout     = 5 * time.Second
)

// maxOpenFiles is the most page files a server keeps open: see
// openFileLimit.
const maxOpenFiles = 1024

// Options configure a server. Zero values take the defaults above.
type Options struct {
	// Source is where the builds come from: Folder, Archive, Pushed or
	// Bucket.
	Source Source
	Addr   string // host:port to listen on (Run); port 0 picks a free one

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
	// SwitchTimeout is how long the requests for pages whose files a
	// newer build has replaced wait, from the first, for the server to
	// switch to that build (see FollowBuilds) before they are answered
	// 503: an answer never sends a newer build's bytes under the headers
	// of the build being served.
	SwitchTimeout time.Duration
	// FetchTimeout is how long a request waits for a body read from a
	// bucket (Bucket) before it is answered 503, and a check of the
	// bucket's manifest for its answer.
	FetchTimeout time.Duration

	// noMapping, in tests, sends every page file from a descriptor, none
	// mapped.
	noMapping bool
	// Events, for tests to wait on instead of sleeping: onWatching when
	// FollowBuilds watches the folder (a build written after it is
	// seen), onAttempt after each load of a build New or FollowBuilds
	// tried, with its error, and onPoll after each check of the manifest
	// on FollowBuilds' timer.
	onWatching func()
	onAttempt  func(err error)
	onPoll     func()
	// onStale, for tests, is called when a request starts waiting for a
	// switch because its page file was replaced (see waitSwitch).
	onStale func()
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
	set(&o.SwitchTimeout, DefaultSwitchTimeout)
	set(&o.FetchTimeout, DefaultFetchTimeout)
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
	cur atomic.Pointer[heldBuild]

	loadMu sync.Mutex // one load at a time
	dates  atomic.Pointer[dateValue]

	accessLog    *accessLog    // nil when off
	files        *fileCache    // the open page files; nil when pages are held in memory
	remote       *remote       // the bucket and its cache of bodies (Bucket); else nil
	mapLimit     int64         // the most page files mapped at once, by all servers (see mapLimit)
	openErrorAt  atomic.Int64  // the second of the last page file that could not be opened (see logOpenError)
	nudge        chan struct{} // a request found a page file replaced: FollowBuilds loads the folder again
	compactSlack int64         // see loadSource
	realClock    bool          // opt.Now is time.Now

	// Header values and bodies shared by every answer: never modified.
	allow, vary, json, html, zero []string
	feedTypes                     [][]string // the Content-Type of each of syndication.Formats
	notFoundLength, optionsLength []string
	notFound, options             []byte
	unavailable                   []byte // the body of a 503
	unavailableLength, retryAfter []string
}

// htmlContentType is the Content-Type of the redirect from the listing's
// path without its slash.
const htmlContentType = "text/html; charset=utf-8"

// The answer to a page whose file did not match the manifest (see
// heldBuild.unavailable): 503, to be asked again in retryAfter seconds.
const (
	unavailableBody = listing.UnavailableBody
	retryAfter      = listing.RetryAfter
)

// New returns a server for the build of opt.Source, loaded (none for
// Pushed: the caller installs the first). A build that is
// being written is waited for, up to opt.StartTimeout. After that, or at
// once when no build is running (one died mid-write, leaving the last
// complete build's manifest and some pages of its own), the build of the
// manifest is served in part: the pages that match it, and 503 for the
// others until the next build (see FollowBuilds).
func New(ctx context.Context, opt Options) (*Server, error) {
	realClock := opt.Now == nil
	opt = opt.withDefaults()
	s := &Server{
		opt:            opt,
		realClock:      realClock,
		compactSlack:   compactSlack,
		nudge:          make(chan struct{}, 1),
		log:            &syncWriter{w: opt.Log},
		allow:          []string{listing.Allow},
		vary:           []string{listing.Vary},
		json:           []string{listing.ContentType},
		html:           []string{htmlContentType},
		feedTypes:      feedTypes(),
		zero:           []string{"0"},
		notFoundLength: []string{strconv.Itoa(len(listing.NotFoundBody))},
		optionsLength:  []string{strconv.Itoa(len(listing.OptionsBody))},
		notFound:       []byte(listing.NotFoundBody),
		options:        []byte(listing.OptionsBody),

		unavailable:       []byte(unavailableBody),
		unavailableLength: []string{strconv.Itoa(len(unavailableBody))},
		retryAfter:        []string{retryAfter},
	}
	if opt.AccessLog != nil {
		s.accessLog = &accessLog{next: s, w: opt.AccessLog, now: opt.Now}
	}
	if opt.Source.kind == fromPushes {
		return s, nil // the caller installs the first build
	}
	if opt.Source.kind == fromBucket {
		s.remote = newRemote(opt.Source.bucket, opt.Source.cacheSize, opt.FetchTimeout, s.log)
	}
	if filePages && opt.Source.kind == fromFolder {
		s.files = newFileCache(openFileLimit())
		if !opt.noMapping {
			s.mapLimit = mapLimit()
		}
	}
	pages := opt.Source.pages
	s.opt.Source.pages = nil // used once
	if err := pages.seal(); err != nil {
		pages.Discard()
		return nil, err
	}
	deadline := time.Now().Add(opt.StartTimeout)
	wait := opt.RetryInterval
	for {
		s.loadMu.Lock()
		_, err := s.load(ctx, nil, nil, pages, false)
		s.loadMu.Unlock()
		pages = nil // load discards a batch it fails with
		if opt.onAttempt != nil {
			opt.onAttempt(err)
		}
		if err == nil {
			return s, nil
		}
		var nr notReadyError
		late := time.Now().After(deadline)
		if errors.As(err, &nr) && opt.Source.kind == fromFolder && (late || !outdir.Busy(opt.Source.dir)) {
			if _, err = s.reload(ctx, true); err == nil {
				return s, nil
			}
		}
		if !errors.As(err, &nr) || late {
			return nil, fmt.Errorf("%s: %w", opt.Source, err)
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

// openFileLimit is how many page files a server keeps open: a quarter of
// the descriptors the process may have, and no more than maxOpenFiles.
func openFileLimit() int {
	n := nofileLimit() / 4
	if n <= 0 {
		n = 64
	}
	return min(n, maxOpenFiles)
}

// Build describes the build a server answers from.
type Build struct {
	Time     time.Time // the build time its manifest records
	Articles int       // articles in the main listing
	Pages    int       // page files of the manifest
	Bytes    int64     // size of the pages
	// Unavailable counts the pages answered 503: their files did not
	// match the manifest when the build was loaded (see New).
	Unavailable int
}

// Current describes the build being served.
func (s *Server) Current() Build {
	hb := s.cur.Load()
	return Build{Time: hb.buildTime, Articles: hb.main.count, Pages: hb.pages, Bytes: hb.bytes, Unavailable: len(hb.unavailable)}
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
