package server

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log"
	"net"
	"net/http"
	"sync"
)

// Run serves the build in opt.Dir on opt.Addr until ctx is done, then
// shuts down gracefully. Once it listens it writes
// "serving DIR on http://ADDR/articles/" to opt.Log, with the actual
// address (port 0 picks a free port).
func Run(ctx context.Context, opt Options) error {
	s, err := New(ctx, opt)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", s.opt.Addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	fmt.Fprintf(s.log, "serving %s on http://%s%s\n", s.opt.Dir, ln.Addr(), ListPath)
	return s.Serve(ctx, ln)
}

// Handler returns the server's handler: the server itself, behind the
// access log when there is one.
func (s *Server) Handler() http.Handler {
	if s.opt.AccessLog == nil {
		return s
	}
	return &accessLog{next: s, w: s.opt.AccessLog, now: s.opt.Now}
}

// Serve answers the connections of ln, and watches the folder for new
// builds, until ctx is done. Then it stops accepting connections, lets the
// requests in flight finish (for up to ShutdownTimeout) and returns nil.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	srv := &http.Server{
		Handler:                      s.Handler(),
		ReadHeaderTimeout:            s.opt.ReadHeaderTimeout,
		ReadTimeout:                  s.opt.ReadTimeout,
		WriteTimeout:                 s.opt.WriteTimeout,
		IdleTimeout:                  s.opt.IdleTimeout,
		MaxHeaderBytes:               s.opt.MaxHeaderBytes,
		DisableGeneralOptionsHandler: true,
		ConnContext:                  connContext,
		ErrorLog:                     log.New(semicolonFilter{s.log}, "feedgen serve: ", 0),
	}
	watchCtx, stopWatch := context.WithCancel(ctx)
	var wg sync.WaitGroup
	wg.Go(func() { s.Watch(watchCtx) })
	defer func() {
		stopWatch()
		wg.Wait()
	}()

	served := make(chan error, 1)
	go func() { served <- srv.Serve(corkListener{ln}) }()
	select {
	case err := <-served:
		return fmt.Errorf("serving: %w", err)
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.opt.ShutdownTimeout)
	defer cancel()
	err := srv.Shutdown(sctx)
	if err != nil {
		srv.Close()
		err = fmt.Errorf("shutting down: requests still running after %s: %w", s.opt.ShutdownTimeout, err)
	}
	if serr := <-served; !errors.Is(serr, http.ErrServerClosed) && err == nil {
		err = fmt.Errorf("serving: %w", serr)
	}
	if err == nil {
		fmt.Fprintf(s.log, "stopped serving %s\n", s.opt.Dir)
	}
	return err
}

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
