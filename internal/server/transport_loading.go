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
// taken is said at once, not after a load of many seconds; and until the
// build is loaded it answers every request 503 Service Unavailable with
// Retry-After, the answer of a page that is not ready (listing's), with
// Connection: close, so that the client's next request comes to the
// server once it is. A load balancer takes a 503 for "not ready, ask
// another" at once, where a connection held unanswered would only time
// out: its health checks, and the requests it sends meanwhile, learn the
// truth immediately.

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
