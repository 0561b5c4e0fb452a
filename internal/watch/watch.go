// Package watch calls a function after changes under a set of folders:
// fsnotify events, recursive (folders that appear are watched too),
// filtered of editor noise, and debounced so that a burst of changes (a
// git checkout, an editor's save dance) gives one call.
package watch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
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
	// Paths are folders, watched with everything below them, or single files.
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
	// Files are watched through their folder, for their name only: the
	// folder may hold other things (the output folder, say) that must not
	// be watched.
	files := map[string]bool{}
	fileDirs := map[string]bool{}
	var trees []string
	for _, p := range opt.Paths {
		p = filepath.Clean(p)
		info, err := os.Stat(p)
		if err != nil {
			return fmt.Errorf("watching %s: %w", p, err)
		}
		if !info.IsDir() {
			files[p] = true
			fileDirs[filepath.Dir(p)] = true
			if err := w.Add(filepath.Dir(p)); err != nil {
				return fmt.Errorf("watching %s: %w", p, err)
			}
			continue
		}
		trees = append(trees, p)
		if err := addTree(w, p); err != nil {
			return fmt.Errorf("watching %s: %w", p, err)
		}
	}
	inTree := func(name string) bool {
		for _, t := range trees {
			if name == t || strings.HasPrefix(name, t+string(filepath.Separator)) {
				return true
			}
		}
		return false
	}
	if opt.Ready != nil {
		opt.Ready()
	}
	if opt.Initial {
		opt.Func(ctx, nil)
	}

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
			// Names are cleaned as the paths were: a folder watched as "."
			// names its files "./config.yaml".
			name := filepath.Clean(ev.Name)
			if ignored(name) || (fileDirs[filepath.Dir(name)] && !files[name] && !inTree(name)) {
				continue
			}
			if ev.Has(fsnotify.Create) {
				// A new folder, maybe with files already in it (moved in,
				// or created by mkdir -p and filled at once).
				if info, err := os.Stat(name); err == nil && info.IsDir() {
					if err := addTree(w, name); err != nil {
						fmt.Fprintf(opt.Log, "watch: %v\n", err)
					}
				}
			}
			if ev.Op == fsnotify.Chmod {
				continue // permissions and timestamps do not change content
			}
			if len(pending) == 0 && !lost {
				first = time.Now()
			}
			pending[name] = true
			arm()
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			fmt.Fprintf(opt.Log, "watch: %v\n", err)
			if errors.Is(err, fsnotify.ErrEventOverflow) {
				// Events were lost: rebuild from what is on disk.
				if len(pending) == 0 && !lost {
					first = time.Now()
				}
				lost = true
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

// addTree watches dir and every folder below it that is not ignored (one
// whose name starts with '.' or '_', say).
func addTree(w *fsnotify.Watcher, root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if p != root && ignored(p) {
			return fs.SkipDir
		}
		if err := w.Add(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return nil
	})
}

// ignored reports changes that cannot affect a build: the files and
// folders a site leaves out (content.Ignored: hidden and '_' names, which
// covers vim swap files .x.swp and emacs locks .#x), and editors' other
// leavings, backups ending in '~' and vim's write test file 4913.
func ignored(path string) bool {
	name := filepath.Base(path)
	return content.Ignored(name) || strings.HasSuffix(name, "~") || name == "4913"
}
