// Package preview is the live preview of a site: it builds the site in
// memory, serves it, and rebuilds on every change to its content or config.
package preview

import (
	"context"
	"crypto/sha256"
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
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/server"
	"github.com/feedgen/feedgen/internal/watch"
)

// Options configure a live preview.
type Options struct {
	// Build says what to build. With an empty OutDir the pages stay in
	// memory, written to no folder; BaseURL is set to the preview's own
	// address.
	Build build.Options
	// ConfigPath is the config file on disk, watched with the content.
	ConfigPath string
	// Server configures the server; its Source is the builds of Build.
	Server server.Options
	// Quiet is the debounce delay; 0 for the default.
	Quiet time.Duration
	// Out receives one line per rebuild, and the errors of failed ones.
	Out io.Writer
	// Ready, if set, is called with the address once the first good build
	// is served.
	Ready func(addr string)
}

// Run builds the site, serves it, and rebuilds on every change to the
// content or the config, until ctx is done. Broken content never breaks
// the preview: the server keeps the last good build, and the errors are
// printed once per failed rebuild.
//
// Each build hands the pages it renders to the server in memory (see
// server.Batch), so the server switches to it without reading anything
// back; pages whose inputs did not change are neither rendered nor
// copied. Without an output folder no file is written at all: a site of
// 10,000 articles with every offset is 270 MB, rewritten whole when an
// article is added, which on disk costs more than the build itself.
func Run(ctx context.Context, opt Options) error {
	out := opt.Out
	if out == nil {
		out = io.Discard
	}
	if opt.Build.Now == nil {
		opt.Build.Now = time.Now
	}
	opt.Build.Memory = opt.Build.OutDir == ""
	opt.Server.Source = server.Pushed(opt.Build.OutDir)
	ln, err := net.Listen("tcp", opt.Server.Addr)
	if err != nil {
		return fmt.Errorf("listening: %w", err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	opt.Build.BaseURL = "http://" + addr
	srv, err := server.New(ctx, opt.Server)
	if err != nil {
		return err
	}
	var batch *server.Batch // of the build running
	opt.Build.OnPage = func(_ string, data []byte, sum [sha256.Size]byte) { batch.Add(data, sum) }
	b := build.New(opt.Build)
	// The content folder to watch is the config's: a config that does not
	// load stops the preview at once, as it stops a build.
	cfg, err := b.Config()
	if err != nil {
		return err
	}

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		wg       sync.WaitGroup
		serving  bool
		serveErr = make(chan error, 1)
		broken   bool
	)
	// The watcher never runs rebuild twice at once; the timer of the next
	// scheduled article takes this lock too.
	var (
		mu        sync.Mutex
		scheduled *time.Timer
	)
	var rebuild func(ctx context.Context, changed []string)
	rebuild = func(ctx context.Context, changed []string) {
		mu.Lock()
		defer mu.Unlock()
		start := time.Now()
		var res *build.Result
		var err error
		for try := 0; try < 2; try++ {
			batch = srv.NewBatch()
			res, err = b.Rebuild(ctx, changed)
			pages := batch
			batch = nil
			if err != nil {
				pages.Discard()
				break
			}
			if _, err = srv.Install(server.Handover{Manifest: res.Manifest, Data: res.ManifestData, Pages: pages}); err == nil {
				break
			}
			// The server is not on the build the Builder knows as its
			// last: build again, every page rendered and handed over.
			b.Forget()
			changed = nil
			err = fmt.Errorf("switching to the new build: %w", err)
		}
		if err != nil {
			var dl diag.List
			switch {
			case !errors.As(err, &dl):
				fmt.Fprintf(out, "build failed: %v\n", err)
			case serving:
				dl.Print(out, "%s: the preview keeps the last good build")
			default:
				dl.Print(out, "%s: the preview starts with the first good build")
			}
			broken = true
			return
		}
		what := "built"
		if changed != nil {
			what = "rebuilt after " + describe(changed)
		}
		line := fmt.Sprintf("%s in %s: %s, %d pages written, %d deleted",
			what, time.Since(start).Round(time.Millisecond), human.Plural(res.Articles, "article"), res.Written, res.Deleted)
		if res.Drafts > 0 {
			line += fmt.Sprintf(", %s left out (-D shows drafts)", human.Plural(res.Drafts, "draft"))
		}
		if scheduled != nil {
			scheduled.Stop()
			scheduled = nil
		}
		if res.Scheduled > 0 && !res.NextScheduled.IsZero() {
			line += fmt.Sprintf(", %d scheduled left out (next at %s)", res.Scheduled, res.NextScheduled.In(cfg.Location).Format(time.RFC3339))
			// Build again when the next one is due, so that it appears
			// without another change (not at once: a fixed clock,
			// SOURCE_DATE_EPOCH, would never reach it).
			if wait := res.NextScheduled.Sub(opt.Build.Now()); wait > 0 {
				scheduled = time.AfterFunc(wait+10*time.Millisecond, func() {
					if ctx.Err() == nil {
						rebuild(ctx, nil)
					}
				})
			}
		}
		fmt.Fprintln(out, line)
		if broken {
			fmt.Fprintln(out, "the site is good again")
			broken = false
		}
		if !serving {
			serving = true
			wg.Go(func() { serveErr <- srv.Serve(ctx, ln) })
			fmt.Fprintf(out, "previewing on http://%s/articles/: edit files under %s, Ctrl-C stops\n", addr, cfg.ContentDir)
			if opt.Ready != nil {
				opt.Ready(addr)
			}
		}
	}
	defer func() {
		mu.Lock()
		if scheduled != nil {
			scheduled.Stop()
		}
		mu.Unlock()
	}()
	err = watch.Run(ctx, watch.Options{
		Paths: []string{opt.ConfigPath, cfg.ContentDir}, Quiet: opt.Quiet, Func: rebuild, Log: out,
		Initial: true,
	})
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

// describe names the changed files for the rebuild line: the articles,
// the config and whatever still exists, not an editor's temporary files
// that came and went (all of them when that leaves none).
func describe(changed []string) string {
	shown := make([]string, 0, len(changed))
	for _, c := range changed {
		if _, err := os.Lstat(c); err == nil || strings.HasSuffix(c, ".md") || strings.HasSuffix(c, ".yaml") {
			shown = append(shown, filepath.ToSlash(c))
		}
	}
	if len(shown) == 0 {
		for _, c := range changed {
			shown = append(shown, filepath.ToSlash(c))
		}
	}
	if len(shown) > 3 {
		shown = append(shown[:3], fmt.Sprintf("%d more", len(shown)-3))
	}
	return strings.Join(shown, ", ")
}
