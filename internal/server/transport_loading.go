package server

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// Run listens before it loads the first build (New), so that an address
// taken is said at once, not after a load of many seconds. The requests
// that come meanwhile wait, queued by the kernel, for up to
// holdWhileLoading: a build of a few thousand pages loads well within
// it, and its first clients (a script that starts the server, then asks
// it) see no difference. A longer load is answered 503 Service
// Unavailable with Retry-After, the answer of a page that is not ready
// (listing's), with Connection: close, so that the client's next request
// comes to the server once it is. That is what a load balancer expects:
// its health check reads a 503 as "not ready" at once (and one that
// retries on 503 asks another server), where a connection held
// unanswered for the tens of seconds a large build takes to load would
// only time out, and hold the requests it sent meanwhile as long.

// holdWhileLoading is how long the requests that come while the first
// build loads wait for it, before they are answered 503.
const holdWhileLoading = time.Second

// loadingStopTimeout bounds how long Run, returning, waits for the 503s
// of the loading phase still under way (a client that connected while
// the build loaded and has not sent its request since).
const loadingStopTimeout = 500 * time.Millisecond

// answerWhileLoading answers every connection of ln 503 until stop is
// called, which returns once ln is free for Serve (not closed). The
// connections it accepted are answered all the same, in the background,
// however late their requests come (within opt's header timeout): a
// client whose connection was accepted must get an answer, not a closed
// connection, even on a machine so loaded that the answer takes a second.
// finish waits for those answers, or closes what is left of them once ctx
// is done, not waiting for them. ln must be a TCP listener; for another, no request is answered
// meanwhile (they wait in the listener's queue).
func answerWhileLoading(ln net.Listener, logw io.Writer, opt Options) (stop func() (finish func(context.Context))) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return func() func(context.Context) { return func(context.Context) {} }
	}
	hand := newHandoffListener(ln.Addr())
	// Each connection is counted from its accept to its close: net/http
	// drops a request it reads once Shutdown has begun (the client sees
	// its connection closed), so the answers are waited for this way,
	// and the server is never shut down, only closed at the end.
	var open sync.WaitGroup
	srv := &http.Server{
		Handler:           http.HandlerFunc(answerLoading),
		ReadHeaderTimeout: opt.ReadHeaderTimeout,
		WriteTimeout:      opt.WriteTimeout,
		ErrorLog:          log.New(logw, "feedgen serve: ", 0),
		ConnState: func(_ net.Conn, st http.ConnState) {
			switch st {
			case http.StateNew:
				open.Add(1)
			case http.StateClosed, http.StateHijacked:
				open.Done()
			}
		},
	}
	served := make(chan struct{})
	go func() {
		srv.Serve(hand)
		close(served)
	}()
	accepted := make(chan struct{})
	go func() {
		defer close(accepted)
		var wait time.Duration
		for {
			c, err := tl.Accept()
			var ne net.Error
			switch {
			case err == nil:
				wait = 0
				if !hand.give(c) {
					c.Close()
				}
				continue
			case errors.As(err, &ne) && ne.Timeout(), errors.Is(err, net.ErrClosed):
				return // stop's deadline, or the listener closed
			}
			// Out of file descriptors and the like, as Server.accept.
			wait = min(max(2*wait, 5*time.Millisecond), time.Second)
			time.Sleep(wait)
		}
	}()
	return func() func(context.Context) {
		tl.SetDeadline(time.Now()) // wakes Accept
		<-accepted
		tl.SetDeadline(time.Time{})
		hand.Close()
		<-served // every connection accepted is counted in open
		// Each connection closes after its one answer (Connection:
		// close), or at its header or write timeout.
		answered := make(chan struct{})
		go func() {
			open.Wait()
			close(answered)
		}()
		return func(ctx context.Context) {
			select {
			case <-answered:
			case <-ctx.Done():
				// Closed, and left behind: a request stuck (writing
				// the log, say) is not waited for, as Serve does.
			}
			srv.Close()
		}
	}
}

// answerLoading is the answer of the loading phase: 503, as a page not
// ready is answered, closing the connection.
func answerLoading(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h["Allow"] = []string{listing.Allow}
	h["Vary"] = []string{listing.Vary}
	h["Content-Type"] = []string{listing.ContentType}
	h["Retry-After"] = []string{listing.RetryAfter}
	h["Connection"] = []string{"close"}
	w.WriteHeader(http.StatusServiceUnavailable)
	if r.Method != http.MethodHead {
		io.WriteString(w, listing.UnavailableBody)
	}
}
