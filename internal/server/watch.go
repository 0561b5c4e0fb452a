package server

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/fsnotify/fsnotify"
)

// Watch switches the server to each new build written into its folder,
// until ctx is done. A build writes its manifest last, by a rename: the
// server hears of it from a file system event on the manifest, or, should
// events be missed or unavailable, from a check of the manifest's size,
// time and identity every PollInterval. A build whose files do not match
// its manifest yet is loaded again a little later; meanwhile, and after
// any failure, the server keeps answering from the build it had.
func (s *Server) Watch(ctx context.Context) {
	dir := s.opt.Dir
	manifestPath := filepath.Join(dir, manifest.Name)
	var (
		events <-chan fsnotify.Event
		errs   <-chan error
	)
	w, err := fsnotify.NewWatcher()
	if err != nil {
		fmt.Fprintf(s.log, "watching %s: %v; checking for new builds every %s\n", dir, err, s.opt.PollInterval)
	} else {
		defer w.Close()
		if err := w.Add(dir); err != nil {
			fmt.Fprintf(s.log, "watching %s: %v; checking for new builds every %s\n", dir, err, s.opt.PollInterval)
		}
		events, errs = w.Events, w.Errors
	}

	poll := time.NewTicker(s.opt.PollInterval)
	defer poll.Stop()
	retry := time.NewTimer(0)
	if !retry.Stop() {
		<-retry.C
	}
	defer retry.Stop()

	wait := s.opt.RetryInterval
	lastErr := ""
	reload := func() {
		retry.Stop()
		_, err := s.Reload()
		if err == nil {
			wait, lastErr = s.opt.RetryInterval, ""
			return
		}
		if msg := err.Error(); msg != lastErr {
			lastErr = msg
			fmt.Fprintf(s.log, "%s: not switching builds: %v; still serving the %s\n", dir, err, s.cur.Load().describe())
		}
		var nr notReadyError
		if errors.As(err, &nr) {
			retry.Reset(wait)
			wait = min(2*wait, s.opt.PollInterval)
		}
	}

	lastManifest, _ := os.Stat(manifestPath)
	lastDir, _ := os.Stat(dir)
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
				reload()
			}
		case err, ok := <-errs:
			if !ok {
				errs = nil
				continue
			}
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				reload()
			}
		case <-retry.C:
			reload()
		case <-poll.C:
			if info, _ := os.Stat(dir); w != nil && info != nil && (lastDir == nil || !os.SameFile(info, lastDir)) {
				// The folder was made anew: watch the new one.
				lastDir = info
				w.Add(dir)
			}
			info, _ := os.Stat(manifestPath)
			if !manifest.SameFile(lastManifest, info) {
				lastManifest = info
				reload()
			}
		}
	}
}
