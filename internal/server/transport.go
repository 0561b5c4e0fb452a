package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/server/socket"
)

// Run serves the builds of opt.Source on opt.Addr until ctx is done, then
// shuts down gracefully. It listens first, writing "loading DIR:
// listening on http://ADDR/articles/ ..." to opt.Log, with the actual
// address (port 0 picks a free port); the requests that come while the
// build loads wait for it, and after holdWhileLoading are answered 503
// (see answerWhileLoading). Once the build is loaded, it writes "serving
// DIR on http://ADDR/articles/". Stopped while the build loads, it
// returns nil, as a stop while serving does.
func Run(ctx context.Context, opt Options) error {
	addr := opt.Addr
	if addr == "" {
		addr = DefaultAddr
	}
	logw := &syncWriter{w: io.Discard} // written from the loading answers too
	if opt.Log != nil {
		logw.w = opt.Log
	}
	opt.Log = logw
	if err := checkFolder(opt.Source); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	fmt.Fprintf(logw, "loading %s: listening on http://%s%s, answering once it is loaded (503 after %s)\n", opt.Source, ln.Addr(), ListPath, holdWhileLoading)
	type loaded struct {
		s   *Server
		err error
	}
	done := make(chan loaded, 1)
	go func() {
		s, err := New(ctx, opt)
		done <- loaded{s, err}
	}()
	var l loaded
	finishLoading := func(context.Context) {}
	hold := time.NewTimer(holdWhileLoading)
	select {
	case l = <-done:
		hold.Stop()
	case <-hold.C:
		stopAnswering := answerWhileLoading(ln, logw, opt.withDefaults())
		l = <-done
		finishLoading = stopAnswering()
	}
	defer func() {
		// Run has served meanwhile: the 503s of the loading phase
		// still unanswered get loadingStopTimeout more.
		ctx, cancel := context.WithTimeout(context.Background(), loadingStopTimeout)
		defer cancel()
		finishLoading(ctx)
	}()
	s, err := l.s, l.err
	if err != nil {
		ln.Close()
		if ctx.Err() != nil {
			fmt.Fprintf(logw, "stopped before the build of %s was loaded\n", opt.Source)
			return nil
		}
		return err
	}
	fmt.Fprintf(s.log, "serving %s on http://%s%s\n", s.opt.Source, ln.Addr(), ListPath)
	return s.Serve(ctx, ln)
}

// Handler returns the server's handler for net/http: the server itself,
// behind the access log when there is one.
func (s *Server) Handler() http.Handler {
	if s.accessLog == nil {
		return s
	}
	return s.accessLog
}

// serving is the state of one Serve: the connections of the fast path,
// and the way to net/http.
type serving struct {
	handoff *handoffListener
	closing atomic.Bool  // shutting down: answer what is in flight, then close
	pipes   socket.Pipes // for splicing page bodies

	mu    sync.Mutex
	conns map[*fastConn]struct{}
	done  sync.WaitGroup
}

// track adds a connection; false once the server is shutting down.
func (sv *serving) track(c *fastConn) bool {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	if sv.closing.Load() {
		return false
	}
	sv.conns[c] = struct{}{}
	sv.done.Add(1)
	return true
}

func (sv *serving) untrack(c *fastConn) {
	sv.mu.Lock()
	delete(sv.conns, c)
	sv.mu.Unlock()
	sv.done.Done()
}

// close starts a shutdown: idle connections are woken up to be closed,
// active ones close after their answer. force closes them all at once.
func (sv *serving) close(force bool) {
	sv.mu.Lock()
	defer sv.mu.Unlock()
	sv.closing.Store(true)
	for c := range sv.conns {
		if force {
			c.conn.Close()
		} else if c.state.Load() == connIdle {
			c.conn.SetReadDeadline(time.Now())
		}
	}
}

// Serve answers the connections of ln, and watches the folder for new
// builds, until ctx is done. Then it stops accepting connections, lets the
// requests in flight finish (for up to ShutdownTimeout) and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.cur.Load() == nil {
		return errors.New("serving: no build installed")
	}
	sv := &serving{handoff: newHandoffListener(ln.Addr()), conns: map[*fastConn]struct{}{}}
	srv := &http.Server{
		Handler:                      s.Handler(),
		ReadHeaderTimeout:            s.opt.ReadHeaderTimeout,
		ReadTimeout:                  s.opt.ReadTimeout,
		WriteTimeout:                 s.opt.WriteTimeout,
		IdleTimeout:                  s.opt.IdleTimeout,
		MaxHeaderBytes:               s.opt.MaxHeaderBytes,
		DisableGeneralOptionsHandler: true,
		ErrorLog:                     log.New(semicolonFilter{s.log}, "feedgen serve: ", 0),
	}
	var wg sync.WaitGroup
	followCtx, stopFollowing := context.WithCancel(ctx)
	if s.opt.Source.kind == fromFolder || s.opt.Source.kind == fromBucket {
		wg.Go(func() { s.FollowBuilds(followCtx) })
	}
	defer func() {
		stopFollowing()
		wg.Wait()
	}()
	httpDone := make(chan error, 1)
	go func() { httpDone <- srv.Serve(sv.handoff) }()
	acceptDone := make(chan error, 1)
	go func() { acceptDone <- s.accept(sv, ln) }()

	var err error
	select {
	case err = <-acceptDone:
		if err == nil {
			err = errors.New("serving: the listener was closed")
		} else {
			err = fmt.Errorf("serving: %w", err)
		}
	case <-ctx.Done():
		ln.Close()
		<-acceptDone
	}

	// Shut down: the fast path's connections first (they may still hand
	// a connection to net/http), then net/http's. Past the deadline,
	// connections are closed, and requests still running (stuck writing
	// the access log, say) are left behind, as http.Server.Close does.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.ShutdownTimeout)
	defer cancel()
	sv.close(false)
	fastDone := make(chan struct{})
	go func() { sv.done.Wait(); close(fastDone) }()
	late := false
	select {
	case <-fastDone:
	case <-sctx.Done():
		late = true
		sv.close(true)
	}
	if serr := srv.Shutdown(sctx); serr != nil {
		srv.Close()
		late = true
	}
	<-httpDone
	sv.pipes.Close()
	switch {
	case err != nil:
		return err
	case late:
		return fmt.Errorf("shutting down: requests still running after %s: %w", s.opt.ShutdownTimeout, context.DeadlineExceeded)
	}
	if s.opt.Source.kind != fromPushes {
		fmt.Fprintf(s.log, "stopped serving %s\n", s.opt.Source)
	}
	return nil
}

// accept accepts connections until ln is closed: TCP connections go to
// the fast path, any other kind to net/http.
func (s *Server) accept(sv *serving, ln net.Listener) error {
	var wait time.Duration
	for {
		c, err := ln.Accept()
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return nil
			}
			// Out of file descriptors and the like: wait and retry, as
			// net/http does.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			fmt.Fprintf(s.log, "accepting connections: %v; retrying in %s\n", err, wait)
			time.Sleep(wait)
			continue
		}
		wait = 0
		tc, ok := c.(*net.TCPConn)
		if !ok {
			if !sv.handoff.give(c) {
				c.Close()
			}
			continue
		}
		go s.serveFast(sv, tc)
	}
}

// handoffListener is the listener net/http serves: it accepts the
// connections the fast path hands over.
type handoffListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
	addr  net.Addr
}

func newHandoffListener(addr net.Addr) *handoffListener {
	return &handoffListener{conns: make(chan net.Conn), done: make(chan struct{}), addr: addr}
}

// give hands c to net/http; false once it is closed.
func (l *handoffListener) give(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *handoffListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *handoffListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *handoffListener) Addr() net.Addr { return l.addr }

// semicolonFilter drops net/http's warning about semicolons in queries:
// the server reads raw queries itself, splitting them on '&' only, as the
// original did.
type semicolonFilter struct{ w *syncWriter }

func (f semicolonFilter) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("URL query contains semicolon")) {
		return len(p), nil
	}
	return f.w.Write(p)
}
