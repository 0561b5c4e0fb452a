package server

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/fsnotify/fsnotify"
	"gocloud.dev/gcerrors"
)

// Reload loads the build in the folder, unless its manifest is the one of
// the build being served in full, and switches to it. It reports whether it
// switched. On an error the server keeps answering from the build it had.
func (s *Server) Reload() (bool, error) { return s.reload(context.Background(), false) }

// reload is Reload, which stops when ctx is done; with partial, the build
// is loaded without the pages whose files do not match the manifest (see
// loadBuild).
func (s *Server) reload(ctx context.Context, partial bool) (bool, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	return s.load(ctx, nil, nil, nil, partial)
}

// load switches to a build: the one of manifest m (data, its bytes) with
// page bodies from batch, or with m nil, the one whose manifest is in the
// folder, in part with partial (see loadBuild). A build being served in
// part is loaded again from the same manifest, for the pages it lacks.
// It stops when ctx is done: a build of 200,000 files, or a million
// collections, takes seconds to load. The caller holds loadMu.
func (s *Server) load(ctx context.Context, data []byte, m *manifest.Manifest, batch *Batch, partial bool) (_ bool, err error) {
	fsys := s.opt.Source.fsys
	var dir *pageDir
	if folder := s.opt.Source.folder(); folder != "" {
		root, err := openFolder(folder)
		if err != nil {
			batch.Discard()
			return false, err
		}
		defer root.Close()
		fsys = outfile.RootFS(root, folder)
		if s.files != nil {
			if dir, err = openPageDir(folder, s.mapLimit); err != nil {
				batch.Discard()
				return false, err
			}
		}
	}
	var tag string // the ETag of a bucket's manifest, asked before it is read
	if s.remote != nil {
		fsys = newRemoteFS(ctx, s.remote)
		if m == nil {
			tag = s.remote.manifestTag(ctx)
		}
		defer func() {
			if err == nil {
				s.remote.loadedTag.Store(&tag)
			}
		}()
	}
	if m == nil {
		if fsys == nil {
			return false, errors.New("no build to load: no folder, and none installed")
		}
		r, err := manifest.ReadContext(ctx, fsys)
		if s.remote != nil && errors.Is(err, manifest.ErrNoBuild) {
			err = errNoPublished
		}
		if err == nil {
			err = validate(r.Manifest)
		}
		if err == nil && !partial {
			// An index that does not match: a build is being written. One
			// that does, but of another format (an older feedgen's build),
			// is refused: no wait makes it readable.
			var mm *manifest.Mismatch
			if err = r.Complete(); errors.As(err, &mm) {
				err = notReadyError{err: err}
			}
		}
		if err != nil {
			batch.Discard()
			return false, err
		}
		data, m = r.Data, r.Manifest
	}
	cur := s.cur.Load()
	held := cur.sameManifest(data)
	if held && len(cur.unavailable) == 0 && dir == nil {
		batch.Discard()
		return false, nil
	}
	hb, err := loadBuild(ctx, data, m, loadSource{fsys: fsys, dir: dir, remote: s.remote, prev: cur, fresh: batch, slack: s.compactSlack, partial: partial})
	if err != nil {
		batch.Discard()
		if nr := (notReadyError{}); held && errors.As(err, &nr) {
			return false, notReadyError{err: nr.err, held: true}
		}
		return false, err
	}
	if held && len(cur.unavailable) == 0 && hb.read == 0 && len(hb.unavailable) == 0 && dir.same(cur.dir) {
		// The build being served, its files the same: a build of the same
		// output wrote nothing. (One that rewrote the files, say into a
		// folder made anew, is switched to: the files recorded are gone.)
		return false, nil
	}
	s.cur.Store(hb)
	if cur != nil {
		close(cur.replaced) // the requests waiting for a newer build
	}
	if s.files != nil {
		s.files.dropDeleted()
	}
	if s.opt.Source.kind != fromPushes {
		verb := "switched to"
		if cur == nil {
			verb = "loaded"
		}
		fmt.Fprintf(s.log, "%s the %s from %s\n", verb, hb.describe(), s.opt.Source)
		if len(hb.unavailable) > 0 {
			fmt.Fprintln(s.log, hb.unavailableLine())
		}
	}
	// The pages no build uses any more are outside the heap (stores,
	// mappings), freed by cleanups once a collection finds them
	// unreachable: on an idle server none may run for minutes. A server of
	// a folder also gives back to the system what loading took of the heap
	// (the manifest, parsed; buffers), rather than keep it for a next load.
	switch {
	case s.files != nil:
		debug.FreeOSMemory()
	case cur != nil:
		runtime.GC()
	}
	return true, nil
}

// errNoPublished is the error of loading from a bucket without a
// manifest.
var errNoPublished = fmt.Errorf("no build here (no %s): publish one with feedgen publish first: %w", manifest.Name, fs.ErrNotExist)

// openFolder opens the output folder of the builds served.
func openFolder(folder string) (*os.Root, error) {
	root, err := os.OpenRoot(folder)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("opening output folder: %w: run feedgen build first", err)
	}
	if err != nil {
		return nil, fmt.Errorf("opening output folder: %w", err)
	}
	return root, nil
}

// checkFolder returns the error New would give, at once, for a source
// with no build to load: a folder that is not there, or has no manifest
// (Run says so before it listens: nothing to serve is not a matter of
// the address).
func checkFolder(src Source) error {
	if src.kind != fromFolder {
		return nil
	}
	root, err := openFolder(src.dir)
	if err == nil {
		_, err = root.Stat(manifest.Name)
		root.Close()
		if errors.Is(err, fs.ErrNotExist) {
			err = manifest.ErrNoBuild
		} else {
			err = nil // loading says what else is wrong
		}
	}
	if err != nil {
		return fmt.Errorf("%s: %w", src, err)
	}
	return nil
}

// Install switches to the build handed over, taking the page bodies from
// h.Pages, from the build being served, or, for any other, from the
// output folder (see Pushed). It reports whether it switched: not when
// the manifest is the one of the build being served.
func (s *Server) Install(h Handover) (bool, error) {
	s.loadMu.Lock()
	defer s.loadMu.Unlock()
	if err := h.Pages.seal(); err != nil {
		h.Pages.Discard()
		return false, err
	}
	return s.load(context.Background(), h.Data, h.Manifest, h.Pages, false)
}

// FollowBuilds switches the server to each new build written into its folder,
// until ctx is done. A build writes its manifest last, by a rename: the
// server hears of it from a file system event on the manifest, or, should
// events be missed or unavailable, from a check of the manifest's size,
// time and identity every PollInterval, or when a request finds a page
// file replaced. A build whose files do not match
// its manifest yet is loaded again a little later; meanwhile, and after
// any failure, the server keeps answering from the build it had. A build
// served in part (see New) is loaded again the same way, silently, until
// its pages match or the next build replaces it.
func (s *Server) FollowBuilds(ctx context.Context) {
	if s.remote != nil {
		s.followBucket(ctx)
		return
	}
	dir := s.opt.Source.folder()
	w := s.watch(dir)
	var (
		events <-chan fsnotify.Event
		errs   <-chan error
	)
	if w != nil {
		defer w.Close()
		events, errs = w.Events, w.Errors
	}
	poll := time.NewTicker(s.opt.PollInterval)
	defer poll.Stop()
	f := &follower{s: s, dir: dir, manifestPath: filepath.Join(dir, manifest.Name), w: w, wait: s.opt.RetryInterval}
	f.retry = time.NewTimer(0)
	if !f.retry.Stop() {
		<-f.retry.C
	}
	defer f.retry.Stop()
	if len(s.cur.Load().unavailable) > 0 {
		f.retry.Reset(f.wait)
	}
	f.lastManifest, _ = os.Stat(f.manifestPath)
	f.lastDir, _ = os.Stat(dir)
	if s.opt.onWatching != nil {
		s.opt.onWatching()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if filepath.Base(ev.Name) == manifest.Name && ev.Has(fsnotify.Create|fsnotify.Write) {
				f.reload(ctx)
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				f.reload(ctx)
			}
		case <-f.retry.C:
			f.reload(ctx)
		case <-s.nudge:
			f.reload(ctx)
		case <-poll.C:
			f.poll(ctx)
		}
	}
}

// watch returns a watcher of the folder dir, or nil when there can be
// none (the folder is then polled only), saying so in the log.
func (s *Server) watch(dir string) *fsnotify.Watcher {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		fmt.Fprintf(s.log, "watching %s: %v; checking for new builds every %s\n", dir, err, s.opt.PollInterval)
		return nil
	}
	if err := w.Add(dir); err != nil {
		fmt.Fprintf(s.log, "watching %s: %v; checking for new builds every %s\n", dir, err, s.opt.PollInterval)
	}
	return w
}

// follower is the state of one FollowBuilds.
type follower struct {
	s            *Server
	dir          string
	manifestPath string
	w            *fsnotify.Watcher // nil: none
	// retry fires when a build that was not ready is to be loaded again,
	// wait after the last attempt (doubling up to PollInterval); lastErr
	// is the error last logged, not logged again.
	retry   *time.Timer
	wait    time.Duration
	lastErr string
	// lastManifest and lastDir are the manifest and the folder as the
	// last poll found them.
	lastManifest, lastDir os.FileInfo
}

// reload loads the folder's build again and switches to it, or logs why
// not; a build not ready is tried again later (retry).
func (f *follower) reload(ctx context.Context) {
	s := f.s
	f.retry.Stop()
	_, err := s.reload(ctx, false)
	if ctx.Err() != nil {
		return // stopping: a load cut short says nothing
	}
	if s.opt.onAttempt != nil {
		s.opt.onAttempt(err)
	}
	if err == nil {
		f.wait, f.lastErr = s.opt.RetryInterval, ""
		return
	}
	var nr notReadyError
	notReady := errors.As(err, &nr)
	if msg := err.Error(); msg != f.lastErr && !nr.held {
		f.lastErr = msg
		fmt.Fprintf(s.log, "%s: not switching builds: %v; still serving the %s\n", f.dir, err, s.cur.Load().describe())
	}
	if notReady {
		f.retry.Reset(f.wait)
		f.wait = min(2*f.wait, s.opt.PollInterval)
	}
}

// poll watches the folder again when it was made anew, and reloads when
// the manifest is another file than the last poll found.
func (f *follower) poll(ctx context.Context) {
	if info, _ := os.Stat(f.dir); f.w != nil && info != nil && (f.lastDir == nil || !os.SameFile(info, f.lastDir)) {
		// The folder was made anew: watch the new one.
		f.lastDir = info
		f.w.Add(f.dir)
	}
	info, _ := os.Stat(f.manifestPath)
	if !manifest.SameFile(f.lastManifest, info) {
		f.lastManifest = info
		f.reload(ctx)
	}
	if f.s.opt.onPoll != nil {
		f.s.opt.onPoll()
	}
}

// followBucket is FollowBuilds for the builds of a bucket (Bucket).
// publish uploads a build's manifest last, so a new build is there once
// the manifest changed: every PollInterval, and at once when a request
// finds a body of the build served replaced (see remoteFailed), the
// manifest's ETag is asked for (a HEAD request: an unchanged manifest is
// not read), and a new one is loaded, its indexes read and checked, and
// switched to. The build served stays served meanwhile, and after any
// failure; each failure is logged once, not again until it changes.
func (s *Server) followBucket(ctx context.Context) {
	poll := time.NewTicker(s.opt.PollInterval)
	defer poll.Stop()
	// While requests wait for a newer build (a body of the build served
	// was replaced: a publish is under way), up to SwitchTimeout, the
	// manifest is checked again RetryInterval after the last check,
	// doubling up to a second (or PollInterval), not only on the ticker.
	//
	// The ETag recorded is the one the HEAD gave before the manifest was
	// read: the services publish writes to answer a read after a write
	// with what was written, so the manifest read is that one or newer,
	// and a newer one has another ETag, seen by the next check.
	retry := time.NewTimer(time.Hour)
	retry.Stop()
	defer retry.Stop()
	wait := s.opt.RetryInterval
	var lastErr string
	etag := *s.remote.loadedTag.Load() // the build New loaded: not read again
	// failed is the manifest that last failed to load: not tried again
	// before until.
	type failedLoad struct {
		etag  string
		until time.Time
		wait  time.Duration
	}
	var failed failedLoad
	check := func() {
		actx, cancel := context.WithTimeout(ctx, s.opt.FetchTimeout)
		a, err := s.remote.bucket.Attributes(actx, manifest.Name)
		cancel()
		if ctx.Err() != nil {
			return
		}
		switch {
		case gcerrors.Code(err) == gcerrors.NotFound:
			err = errNoPublished // an answer: the bucket's manifest is gone
		case err != nil:
			s.remote.note(err)
			return
		default:
			s.remote.note(nil)
			if a.ETag == etag && etag != "" || a.ETag == failed.etag && time.Now().Before(failed.until) {
				return
			}
			_, err = s.reload(ctx, false)
			if ctx.Err() != nil {
				return
			}
			if s.opt.onAttempt != nil {
				s.opt.onAttempt(err)
			}
		}
		if err == nil {
			etag, lastErr, failed = a.ETag, "", failedLoad{}
			return
		}
		// A manifest that could not be loaded is tried again, but less
		// and less often while it stays the same: one that is not ready
		// (its indexes not all uploaded yet) soon loads; one this feedgen
		// does not read never does.
		if a != nil {
			if a.ETag != failed.etag {
				failed = failedLoad{etag: a.ETag, wait: s.opt.PollInterval}
			}
			failed.until = time.Now().Add(failed.wait)
			failed.wait = min(2*failed.wait, 5*time.Minute)
		}
		if msg := err.Error(); msg != lastErr {
			lastErr = msg
			fmt.Fprintf(s.log, "%s: not switching builds: %v; still serving the %s\n", s.opt.Source, err, s.cur.Load().describe())
		}
	}
	checkStale := func() {
		check()
		at := s.cur.Load().staleAt.Load()
		if at != 0 && time.Since(time.Unix(0, at)) < s.opt.SwitchTimeout {
			retry.Reset(wait)
			wait = min(2*wait, s.opt.PollInterval, time.Second)
		} else {
			wait = s.opt.RetryInterval
		}
	}
	if s.opt.onWatching != nil {
		s.opt.onWatching()
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-s.nudge:
			checkStale()
		case <-retry.C:
			checkStale()
		case <-poll.C:
			check()
			if s.opt.onPoll != nil {
				s.opt.onPoll()
			}
		}
	}
}
