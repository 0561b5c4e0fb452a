package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/server"
)

// PreviewOptions configure a live preview.
type PreviewOptions struct {
	// Build says what to build. An empty OutDir becomes a temporary folder,
	// removed at the end; BaseURL is set to the preview's own address.
	Build build.Options
	// ConfigPath is the config file on disk, watched with the content.
	ConfigPath string
	// Server configures the server; its Dir is the build's output folder.
	Server server.Options
	// Quiet is the debounce delay; 0 for the default.
	Quiet time.Duration
	// Out receives one line per rebuild, and the errors of failed ones.
	Out io.Writer
	// Ready, if set, is called with the address once the first good build
	// is served.
	Ready func(addr string)
}

// Preview builds the site, serves it, and rebuilds on every change to the
// content or the config, until ctx is done. Broken content never breaks
// the preview: the server keeps the last good build, and the errors are
// printed once per failed rebuild.
func Preview(ctx context.Context, opt PreviewOptions) error {
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	if opt.Build.OutDir == "" {
		dir, err := os.MkdirTemp("", "feedgen-preview-")
		if err != nil {
			return fmt.Errorf("creating preview folder: %w", err)
		}
		defer os.RemoveAll(dir)
		opt.Build.OutDir = dir
	}
	opt.Server.Dir = opt.Build.OutDir
	ln, err := net.Listen("tcp", opt.Server.Addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	opt.Build.BaseURL = "http://" + addr
	b := build.New(opt.Build)

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		srv      *server.Server
		serveErr = make(chan error, 1)
		broken   bool
	)
	rebuild := func(ctx context.Context, changed []string) {
		start := time.Now()
		res, err := b.Rebuild(ctx, changed)
		if err != nil {
			var dl diag.List
			if errors.As(err, &dl) {
				for _, d := range dl {
					fmt.Fprintln(out, d)
				}
				errs := "1 error"
				if len(dl) > 1 {
					errs = fmt.Sprintf("%d errors", len(dl))
				}
				fmt.Fprintf(out, "%s: the preview keeps the last good build\n", errs)
			} else {
				fmt.Fprintf(out, "build failed: %v\n", err)
			}
			broken = true
			return
		}
		if srv == nil {
			s, err := server.New(ctx, opt.Server)
			if err != nil {
				fmt.Fprintf(out, "starting the preview server: %v\n", err)
				return
			}
			srv = s
			wg.Add(1)
			go func() {
				defer wg.Done()
				serveErr <- srv.Serve(ctx, ln)
			}()
			if opt.Ready != nil {
				defer opt.Ready(addr)
			}
		} else if _, err := srv.Reload(); err != nil {
			fmt.Fprintf(out, "reloading the preview: %v\n", err)
			return
		}
		what := "built"
		if changed != nil {
			what = "rebuilt after " + describe(changed)
		}
		fmt.Fprintf(out, "%s in %s: %d articles, %d pages written, %d deleted\n",
			what, time.Since(start).Round(time.Millisecond), res.Articles, res.Written, res.Deleted)
		if broken {
			fmt.Fprintln(out, "the site is good again")
			broken = false
		}
	}
	rebuild(ctx, nil)
	content := "content"
	paths := []string{opt.ConfigPath}
	if cfg := b.Config(); cfg != nil {
		content = cfg.ContentDir
		paths = append(paths, cfg.ContentDir)
	}
	fmt.Fprintf(out, "previewing on http://%s/articles/: edit files under %s, Ctrl-C stops\n", addr, content)
	err = Run(ctx, Options{Paths: paths, Quiet: opt.Quiet, Func: rebuild, Log: out})
	cancel()
	wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err := <-serveErr:
		return err
	default:
		return nil
	}
}

// describe names the changed files for the rebuild line.
func describe(changed []string) string {
	names := make([]string, 0, 4)
	for i, c := range changed {
		if i == 3 {
			names = append(names, fmt.Sprintf("%d more", len(changed)-3))
			break
		}
		names = append(names, filepath.ToSlash(c))
	}
	return strings.Join(names, ", ")
}
