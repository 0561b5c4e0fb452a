package server

import (
	"context"
	"errors"
	"io"
	"log"
	"net"
	"net/http"
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

// loadingStopTimeout bounds how long the 503s of the loading phase may
// take to finish once the build is loaded (or the server stops): each
// closes its connection after one answer.
const loadingStopTimeout = 500 * time.Millisecond

// answerWhileLoading answers every connection of ln 503 until stop is
// called, which returns once ln is free for Serve (not closed). ln must be
// a TCP listener; for another, no request is answered meanwhile (they
// wait in the listener's queue).
func answerWhileLoading(ln net.Listener, logw io.Writer) (stop func()) {
	tl, ok := ln.(*net.TCPListener)
	if !ok {
		return func() {}
	}
	hand := newHandoffListener(ln.Addr())
	srv := &http.Server{
		Handler:           http.HandlerFunc(answerLoading),
		ReadHeaderTimeout: time.Second,
		ErrorLog:          log.New(logw, "feedgen serve: ", 0),
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
	return func() {
		tl.SetDeadline(time.Now()) // wakes Accept
		<-accepted
		tl.SetDeadline(time.Time{})
		ctx, cancel := context.WithTimeout(context.Background(), loadingStopTimeout)
		defer cancel()
		if srv.Shutdown(ctx) != nil {
			srv.Close()
		}
		<-served
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
