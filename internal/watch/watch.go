// Package watch calls a function after changes under a set of folders:
// fsnotify events, recursive (folders that appear are watched too),
// filtered of editor noise, and debounced so that a burst of changes (a
// git checkout, an editor's save dance) gives one call.
//
// It watches what a build reads, which is more than the folders' trees:
// a watched folder may be replaced by another (mv new content) or be a
// symbolic link, and links to files inside it are read through. Each path
// given is watched through the folder it is in, for its name, and so is
// each link of the chain that a given path or a link in a tree starts;
// changes along a chain are reported under the path that starts it, the
// one a build knows. Where a chain is broken, the missing name is watched
// (in the nearest folder that exists), so that its return is seen.
// Links to folders inside a tree are not followed, as the content loader
// does not follow them; only the folder they lead to is watched for its
// name. Not watched: a link inside the path of a folder a chain goes
// through (/a/b/c.md with /a/b a link: a change of /a/b is not seen), and
// a folder of a chain deleted while the folder it is in is watched too
// (fsnotify then reports the deletion only as the parent's).
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/fsnotify/fsnotify"
)

// Options configure a watch.
type Options struct {
	// Paths are folders, watched with everything below them, or single
	// files, each reported under the path given. A path replaced (renamed
	// over, removed and made again, a link pointed elsewhere) is reported
	// as itself, and what it is now is watched.
	Paths []string
	// Quiet is how long the tree must stay quiet after a change before Func
	// runs; MaxWait caps the delay under a steady stream of changes.
	Quiet   time.Duration
	MaxWait time.Duration
	// Func runs after changes, never twice at once, with the changed paths
	// (sorted), or nil when events were lost and anything may have
	// changed. Changes made while it runs lead to one more call after it.
	Func func(ctx context.Context, changed []string)
	// Log receives watch errors; nil discards them.
	Log io.Writer
	// Ready, if set, is called once every path is watched.
	Ready func()
	// Initial calls Func once, with nil changed, as soon as every path is
	// watched: a first build that no change made meanwhile can miss.
	Initial bool
}

// Run watches until ctx is done. It returns an error only when watching
// cannot start.
func Run(ctx context.Context, opt Options) error {
	if opt.Quiet <= 0 {
		opt.Quiet = 20 * time.Millisecond
	}
	if opt.MaxWait <= 0 {
		opt.MaxWait = 500 * time.Millisecond
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return fmt.Errorf("starting to watch: %w", err)
	}
	defer w.Close()
	x := &watcher{fsw: w, log: opt.Log, links: map[string]*link{}, dirs: map[string]*folder{}}
	for _, p := range opt.Paths {
		if err := x.watchRoot(p); err != nil {
			return err
		}
	}
	if opt.Ready != nil {
		opt.Ready()
	}
	if opt.Initial {
		opt.Func(ctx, nil)
	}
	return x.loop(ctx, opt)
}

// watchRoot starts watching p, a path given in Options.Paths.
func (x *watcher) watchRoot(p string) error {
	p = filepath.Clean(p)
	if _, err := os.Stat(p); err != nil {
		return fmt.Errorf("watching %s: %w", p, err)
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return fmt.Errorf("watching %s: %w", p, err)
	}
	r := &link{path: p, abs: abs}
	x.roots = append(x.roots, r)
	if err := x.reset(r); err != nil {
		return fmt.Errorf("watching %s: %w", p, err)
	}
	return nil
}

// loop gathers the changes the watcher reports and calls opt.Func once
// they are quiet, until ctx is done.
func (x *watcher) loop(ctx context.Context, opt Options) error {
	w := x.fsw
	pending := map[string]bool{}
	lost := false       // events were lost: anything may have changed
	var first time.Time // when the oldest pending change arrived
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	arm := func() {
		wait := opt.Quiet
		if left := opt.MaxWait - time.Since(first); left < wait {
			wait = max(left, 0)
		}
		timer.Reset(wait)
	}
	for {
		select {
		case <-ctx.Done():
			timer.Stop()
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			idle := len(pending) == 0 && !lost
			if x.event(ev, pending) {
				if idle {
					first = time.Now()
				}
				arm()
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			fmt.Fprintf(opt.Log, "watch: %v\n", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: rebuild from what is on disk, and
				// watch it afresh (folders made meanwhile, links changed).
				if len(pending) == 0 && !lost {
					first = time.Now()
				}
				lost = true
				for _, r := range x.roots {
					x.logf(x.reset(r), r.path)
				}
				arm()
			}
		case <-timer.C:
			if len(pending) == 0 && !lost {
				continue
			}
			var changed []string
			if !lost {
				changed = make([]string, 0, len(pending))
				for p := range pending {
					changed = append(changed, p)
				}
				sort.Strings(changed)
			}
			clear(pending)
			lost = false
			opt.Func(ctx, changed)
			// Events that arrived meanwhile wait in the channel and give
			// one more call after the quiet period.
		}
	}
}

// ignored reports changes that cannot affect a build: the files and
// folders a site leaves out (content.Ignored: hidden and '_' names, which
// covers vim swap files .x.swp and emacs locks .#x), and editors' other
// leavings, backups ending in '~' and vim's write test file 4913.
func ignored(path string) bool {
	name := filepath.Base(path)
	return content.Ignored(name) || strings.HasSuffix(name, "~") || name == "4913"
}
