package watch

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/fsnotify/fsnotify"
)

// maxHops bounds a chain of symbolic links, as the kernel does (ELOOP).
const maxHops = 40

// watcher keeps the fsnotify watches in step with the trees and links it
// watches. Every folder is watched under its real path (absolute, with no
// symbolic link in it), so that a folder has one name in the events
// whichever way it is reached; the paths reported are those given to Run,
// and those of the entries and links found below them.
type watcher struct {
	fsw   *fsnotify.Watcher
	log   io.Writer
	roots []*link            // the paths given to watch
	links map[string]*link   // the symbolic links found in the trees, by path as reported
	dirs  map[string]*folder // every folder watched, by real path
}

// folder says why a folder is watched.
type folder struct {
	// tree is the folder's path as reported when it is a folder of a tree
	// (every change in it is reported); "" when it is not.
	tree string
	// names are the names watched in it for the links whose chain goes
	// through them: a change of one is reported as a change of the links.
	names map[string]map[*link]bool
}

// link is a path given to watch, or a symbolic link found in a tree, with
// the chain of links it starts.
type link struct {
	path string // as reported
	abs  string // absolute, for a path given to watch; "" for a link in a tree
	hops []hop  // the chain: the first is the path itself
}

// hop is a name in a folder (a real path) that a chain of links goes
// through.
type hop struct{ dir, name string }

// reset watches a path given to watch afresh: the chain of links that
// leads to it and, when that ends at a folder, the tree below it.
func (x *watcher) reset(r *link) error {
	x.dropTree(r.path)
	x.unlink(r)
	dir, err := filepath.EvalSymlinks(filepath.Dir(r.abs))
	if err != nil {
		// The folder it is in is gone: wait for it to be made again.
		return x.missing(r, filepath.Dir(r.abs))
	}
	end, isDir, err := x.follow(r, dir, filepath.Base(r.abs))
	if err != nil || !isDir {
		return err
	}
	return x.addTree(end, r.path)
}

// addTree watches the folder dir (a real path), reported as path, and
// every folder below it that a build reads, and follows the links in them.
func (x *watcher) addTree(dir, path string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed while we walked
			}
			return err
		}
		if p != dir && ignored(p) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		switch {
		case d.IsDir():
			f, err := x.folder(p)
			if errors.Is(err, fs.ErrNotExist) {
				return fs.SkipDir
			}
			if err != nil {
				return err
			}
			f.tree = below(path, dir, p)
		case d.Type()&fs.ModeSymlink != 0:
			// A link that leads where nothing can be watched (a folder
			// that cannot be read, say) is the loader's to report.
			rel := below(path, dir, p)
			x.logf(x.relink(rel, filepath.Dir(p), d.Name()), rel)
		}
		return nil
	})
}

// below returns the path reported for p, a path below the folder dir
// that is reported as path.
func below(path, dir, p string) string {
	rel, err := filepath.Rel(dir, p)
	if err != nil {
		return p // cannot happen: p is dir or below it
	}
	return filepath.Join(path, rel)
}

// relink watches the symbolic link name in the tree folder dir (a real
// path), reported as path, and the chain of links it starts.
func (x *watcher) relink(path, dir, name string) error {
	if l := x.links[path]; l != nil {
		x.unlink(l)
	}
	l := &link{path: path}
	x.links[path] = l
	_, _, err := x.follow(l, dir, name)
	return err
}

// follow watches, for l, the chain of symbolic links that starts at name
// in the folder dir (a real path): each folder it goes through, for the
// name it takes there. It returns the real path the chain ends at and
// whether that is a folder; "" when the chain is broken or a loop. Where
// it breaks, the missing name is watched, so that its coming is seen.
func (x *watcher) follow(l *link, dir, name string) (end string, isDir bool, err error) {
	for range maxHops {
		h := hop{dir, name}
		if slices.Contains(l.hops, h) {
			return "", false, nil // a loop
		}
		if err := x.watchName(l, h); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				err = x.missing(l, dir) // deleted since it was resolved
			}
			return "", false, err
		}
		p := filepath.Join(dir, name)
		info, err := os.Lstat(p)
		if err != nil {
			return "", false, nil
		}
		if info.Mode()&fs.ModeSymlink == 0 {
			return p, info.IsDir(), nil
		}
		target, err := os.Readlink(p)
		if err != nil {
			return "", false, nil
		}
		if !filepath.IsAbs(target) {
			target = filepath.Join(dir, target)
		}
		target = filepath.Clean(target)
		if dir, err = filepath.EvalSymlinks(filepath.Dir(target)); err != nil {
			return "", false, x.missing(l, filepath.Dir(target))
		}
		name = filepath.Base(target)
	}
	return "", false, nil
}

// watchName watches, for l, the name h.name in the folder h.dir (a real
// path).
func (x *watcher) watchName(l *link, h hop) error {
	f, err := x.folder(h.dir)
	if err != nil {
		return err
	}
	if f.names == nil {
		f.names = map[string]map[*link]bool{}
	}
	if f.names[h.name] == nil {
		f.names[h.name] = map[*link]bool{}
	}
	f.names[h.name][l] = true
	l.hops = append(l.hops, h)
	return nil
}

// missing watches, for l, the nearest folder above the missing folder dir
// that exists, for the name of the next one down: when that is made (a
// folder moved back in place, say), l's chain is followed again.
func (x *watcher) missing(l *link, dir string) error {
	for {
		parent := filepath.Dir(dir)
		if parent == dir {
			return nil
		}
		if real, err := filepath.EvalSymlinks(parent); err == nil {
			err := x.watchName(l, hop{real, filepath.Base(dir)})
			if !errors.Is(err, fs.ErrNotExist) {
				return err
			}
			// Deleted meanwhile: one more up.
		}
		dir = parent
	}
}

// folder watches the folder dir (a real path) and returns its entry.
func (x *watcher) folder(dir string) (*folder, error) {
	// Added even when known: the kernel drops the watch of a folder moved
	// or deleted, at times before the event that says so is read, and a
	// folder made again under the same name needs a new watch.
	if err := x.fsw.Add(dir); err != nil {
		return nil, err
	}
	f := x.dirs[dir]
	if f == nil {
		f = &folder{}
		x.dirs[dir] = f
	}
	return f, nil
}

// unlink stops watching the chain of l.
func (x *watcher) unlink(l *link) {
	for _, h := range l.hops {
		f := x.dirs[h.dir]
		if f == nil {
			continue
		}
		delete(f.names[h.name], l)
		if len(f.names[h.name]) == 0 {
			delete(f.names, h.name)
		}
		x.release(h.dir, f)
	}
	l.hops = nil
}

// release stops watching the folder dir when nothing needs it anymore.
func (x *watcher) release(dir string, f *folder) {
	if f.tree != "" || len(f.names) > 0 {
		return
	}
	delete(x.dirs, dir)
	// An error says that the kernel dropped the watch already: the folder
	// was deleted or moved.
	_ = x.fsw.Remove(dir)
}

// dropTree stops watching the folders of the trees at or below path (as
// reported) and the links found in them.
func (x *watcher) dropTree(path string) {
	for dir, f := range x.dirs {
		if f.tree != "" && within(f.tree, path) {
			f.tree = ""
			x.release(dir, f)
		}
	}
	for p, l := range x.links {
		if within(p, path) {
			x.unlink(l)
			delete(x.links, p)
		}
	}
}

// within reports whether the path p is root or below it.
func within(p, root string) bool {
	const sep = string(filepath.Separator)
	if root == "." {
		return !filepath.IsAbs(p) && p != ".." && !strings.HasPrefix(p, ".."+sep)
	}
	return p == root || strings.HasPrefix(p, strings.TrimSuffix(root, sep)+sep)
}

// event brings the watches in step with an fsnotify event, and adds the
// paths it changes, as reported, to changed. It reports whether it
// changed any.
func (x *watcher) event(ev fsnotify.Event, changed map[string]bool) bool {
	if ev.Op == fsnotify.Chmod {
		return false // permissions and timestamps do not change content
	}
	// Names are the real paths of the folders watched, and a name in them.
	name := filepath.Clean(ev.Name)
	moved := ev.Has(fsnotify.Create) || ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	gone := ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)
	found := false
	entry := "" // the tree entry that changed, as reported
	var chains []*link
	if f := x.dirs[filepath.Dir(name)]; f != nil {
		base := filepath.Base(name)
		if f.tree != "" && !ignored(base) {
			entry = filepath.Join(f.tree, base)
			changed[entry] = true
			found = true
		}
		for l := range f.names[base] {
			changed[l.path] = true
			found = true
			if moved {
				chains = append(chains, l)
			}
		}
	}
	if f := x.dirs[name]; f != nil && gone {
		// A folder that chains go through moved or was deleted itself.
		for _, links := range f.names {
			for l := range links {
				changed[l.path] = true
				found = true
				chains = append(chains, l)
			}
		}
	}
	if entry != "" && moved {
		x.refresh(name, entry, gone)
	}
	done := map[*link]bool{}
	for _, l := range chains {
		if !done[l] {
			done[l] = true
			x.logf(x.retrace(l), l.path)
		}
	}
	return found
}

// refresh brings the watches of a tree's entry, real (a real path) and
// reported as path, in step after it was made, or deleted or renamed
// (gone).
func (x *watcher) refresh(real, path string, gone bool) {
	if gone {
		if f := x.dirs[real]; f != nil && f.tree != "" {
			x.dropTree(path)
		}
	}
	info, err := os.Lstat(real)
	switch {
	case err != nil || (info.Mode()&fs.ModeSymlink == 0 && !info.IsDir()):
		if l := x.links[path]; l != nil {
			x.unlink(l)
			delete(x.links, path)
		}
	case info.IsDir():
		// A new folder, maybe with files already in it (moved in, or made
		// by mkdir -p and filled at once).
		x.logf(x.addTree(real, path), path)
	default:
		x.logf(x.relink(path, filepath.Dir(real), filepath.Base(real)), path)
	}
}

// retrace watches the chain of l afresh, after a change along it.
func (x *watcher) retrace(l *link) error {
	if l.abs != "" {
		return x.reset(l)
	}
	if x.links[l.path] != l || len(l.hops) == 0 {
		return nil // no longer a link: its tree's entry said so
	}
	first := l.hops[0]
	x.unlink(l)
	_, _, err := x.follow(l, first.dir, first.name)
	return err
}

// logf logs err, about path, unless it is nil.
func (x *watcher) logf(err error, path string) {
	if err != nil {
		fmt.Fprintf(x.log, "watch: %s: %v\n", path, err)
	}
}
