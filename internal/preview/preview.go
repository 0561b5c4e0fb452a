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
	"github.com/feedgen/feedgen/internal/config"
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
	p, err := start(ctx, opt)
	if err != nil {
		return err
	}
	defer p.ln.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer p.stopSchedule()
	err = watch.Run(ctx, watch.Options{
		Paths: []string{p.opt.ConfigPath, p.cfg.ContentDir}, Quiet: p.opt.Quiet, Func: p.rebuild, Log: p.out,
		Initial: true,
	})
	cancel()
	p.wg.Wait()
	if err != nil {
		return err
	}
	select {
	case err := <-p.serveErr:
		return err
	default:
		return nil
	}
}

// session is a running preview: the builder, the server its builds are
// handed to, and what the rebuilds share. The watcher never runs rebuild
// twice at once; the timer of the next scheduled article takes mu too.
type session struct {
	opt  Options
	out  io.Writer
	ln   net.Listener
	addr string
	srv  *server.Server
	b    *build.Builder
	cfg  *config.Config

	batch *server.Batch // of the build running: where OnPage puts pages

	wg       sync.WaitGroup // Serve
	serveErr chan error

	mu        sync.Mutex
	serving   bool        // the first good build is served
	broken    bool        // the last build failed
	scheduled *time.Timer // the rebuild when the next scheduled article is due
}

// start listens, makes the server and the builder, and reads the config
// (a config that does not load stops the preview at once, as it stops a
// build: the content folder to watch is the config's).
func start(ctx context.Context, opt Options) (*session, error) {
	p := &session{opt: opt, out: opt.Out, serveErr: make(chan error, 1)}
	if p.out == nil {
		p.out = io.Discard
	}
	if p.opt.Build.Now == nil {
		p.opt.Build.Now = time.Now
	}
	p.opt.Build.Memory = p.opt.Build.OutDir == ""
	p.opt.Server.Source = server.Pushed(p.opt.Build.OutDir)
	ln, err := net.Listen("tcp", p.opt.Server.Addr)
	if err != nil {
		return nil, fmt.Errorf("listening: %w", err)
	}
	p.ln, p.addr = ln, ln.Addr().String()
	p.opt.Build.BaseURL = "http://" + p.addr
	if p.srv, err = server.New(ctx, p.opt.Server); err != nil {
		ln.Close()
		return nil, err
	}
	p.opt.Build.OnPage = func(_ string, data []byte, sum [sha256.Size]byte) { p.batch.Add(data, sum) }
	p.b = build.New(p.opt.Build)
	if p.cfg, err = p.b.Config(); err != nil {
		ln.Close()
		return nil, err
	}
	return p, nil
}

// rebuild builds after the files in changed changed (nil: any), hands
// the build to the server and says so, or says what is wrong.
func (p *session) rebuild(ctx context.Context, changed []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	start := time.Now()
	res, err := p.buildAndInstall(ctx, changed)
	if err != nil {
		p.failed(err)
		return
	}
	line := p.summary(res, changed, start)
	p.schedule(ctx, res)
	if res.Scheduled > 0 && !res.NextScheduled.IsZero() {
		line += fmt.Sprintf(", %d scheduled left out (next at %s)", res.Scheduled, res.NextScheduled.In(p.cfg.Location).Format(time.RFC3339))
	}
	fmt.Fprintln(p.out, line)
	if p.broken {
		fmt.Fprintln(p.out, "the site is good again")
		p.broken = false
	}
	if !p.serving {
		p.serve(ctx)
	}
}

// buildAndInstall builds, its pages handed over as it renders them, and
// installs the build. A server that is not on the build the Builder knows
// as its last refuses it: the site is then built again, every page
// rendered and handed over.
func (p *session) buildAndInstall(ctx context.Context, changed []string) (*build.Result, error) {
	var res *build.Result
	var err error
	for try := 0; try < 2; try++ {
		p.batch = p.srv.NewBatch()
		res, err = p.b.Rebuild(ctx, changed)
		pages := p.batch
		p.batch = nil
		if err != nil {
			pages.Discard()
			return nil, err
		}
		if _, err = p.srv.Install(server.Handover{Manifest: res.Manifest, Data: res.ManifestData, Pages: pages}); err == nil {
			return res, nil
		}
		p.b.Forget()
		changed = nil
		err = fmt.Errorf("switching to the new build: %w", err)
	}
	return nil, err
}

// failed says why a build failed: content errors once each, with what the
// preview serves meanwhile.
func (p *session) failed(err error) {
	var dl diag.List
	switch {
	case !errors.As(err, &dl):
		fmt.Fprintf(p.out, "build failed: %v\n", err)
	case p.serving:
		dl.Print(p.out, "%s: the preview keeps the last good build")
	default:
		dl.Print(p.out, "%s: the preview starts with the first good build")
	}
	p.broken = true
}

// summary is the line that reports a build.
func (p *session) summary(res *build.Result, changed []string, start time.Time) string {
	what := "built"
	if changed != nil {
		what = "rebuilt after " + describe(changed)
	}
	line := fmt.Sprintf("%s in %s: %s, %s written, %d deleted",
		what, time.Since(start).Round(time.Millisecond), human.Plural(res.Articles, "article"), human.Plural(res.Written, file(res)), res.Deleted)
	if res.Drafts > 0 {
		line += fmt.Sprintf(", %s left out (-D shows drafts)", human.Plural(res.Drafts, "draft"))
	}
	return line
}

// file names what a build writes: a page, or a file of chunks and
// indexes.
func file(res *build.Result) string {
	if res.Chunked {
		return "file"
	}
	return "page"
}

// schedule builds again when the next scheduled article of res is due,
// so that it appears without another change (not at once: a fixed clock,
// SOURCE_DATE_EPOCH, would never reach it). The caller holds mu.
func (p *session) schedule(ctx context.Context, res *build.Result) {
	if p.scheduled != nil {
		p.scheduled.Stop()
		p.scheduled = nil
	}
	if res.Scheduled == 0 || res.NextScheduled.IsZero() {
		return
	}
	if wait := res.NextScheduled.Sub(p.opt.Build.Now()); wait > 0 {
		p.scheduled = time.AfterFunc(wait+10*time.Millisecond, func() {
			if ctx.Err() == nil {
				p.rebuild(ctx, nil)
			}
		})
	}
}

// stopSchedule stops the timer of the next scheduled article.
func (p *session) stopSchedule() {
	p.mu.Lock()
	if p.scheduled != nil {
		p.scheduled.Stop()
	}
	p.mu.Unlock()
}

// serve starts serving, once the first good build is installed.
func (p *session) serve(ctx context.Context) {
	p.serving = true
	p.wg.Go(func() { p.serveErr <- p.srv.Serve(ctx, p.ln) })
	fmt.Fprintf(p.out, "previewing on http://%s/articles/: edit files under %s, Ctrl-C stops\n", p.addr, p.cfg.ContentDir)
	if p.opt.Ready != nil {
		p.opt.Ready(p.addr)
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
