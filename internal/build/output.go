package build

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/folder"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
)

// output is where a build puts its pages: an output folder (disk), or
// nowhere but OnPage and the Result (memory, Options.Memory). Builder.output
// chooses one when a build starts; nothing after asks which.
type output interface {
	// dir is the output folder as given: "" in memory. fsDir is its real
	// path, through which every file is reached.
	dir() string
	fsDir() string
	// early returns the output folder's manifest as read while the content
	// loads; nil when it is not read: in memory, or when this Builder
	// wrote the folder last and knows its manifest.
	early() func() (*manifest.Snapshot, error)
	// open readies the output for the files that paths returns, given
	// the manifest of the last build there (nil when there is none), and
	// returns that manifest and the function that releases the output
	// when the build is done with it.
	open(ctx context.Context, paths func(prev *manifest.Manifest) ([]string, error)) (prev *manifest.Manifest, release func(), err error)
	// byInput reports whether a page may be kept, not rendered, because
	// the last build's manifest records the same input for it.
	byInput() bool
	// intact reports whether the output holds what the last build's
	// manifest says, as far as can be known without reading it: false
	// after a build that did not finish, whose pages may be anywhere.
	intact() bool
	// has reports whether the page f.Path (a path in the folder, with
	// slashes) is still as the last build left it: f.Size bytes and, when
	// the output is not intact, when the file changed since the last
	// manifest was written, or with Options.Clean, f.SHA256 (see
	// disk.has).
	has(f manifest.File) bool
	// create puts a page the last build did not have; rewrite one whose
	// bytes changed.
	create(p string, data []byte) error
	rewrite(p string, data []byte) error
	// removeStale deletes the pages of the last build (prev) that are not
	// in keep, and returns how many there were; it stops when ctx is done.
	removeStale(ctx context.Context, prev *manifest.Manifest, keep map[string]bool) (int, error)
	// writeManifest stores the manifest of the build, as data, even when
	// the folder holds these bytes if again is set (files were repaired:
	// a server that follows the folder loads the build again); finish
	// then says that the output is what it describes.
	writeManifest(data []byte, again bool) error
	finish() error
}

// output returns where this build goes: memory when Options.Memory is set,
// else the output folder (Options.OutDir, or the config's), whose manifest
// it starts reading unless this Builder knows it.
func (b *Builder) output(ctx context.Context, cfg *config.Config) output {
	if b.opt.Memory {
		return memory{b}
	}
	d := &disk{b: b, path: cfg.OutputDir}
	if b.opt.OutDir != "" {
		d.path = b.opt.OutDir
	}
	// Every file is reached from the folder's real path: "x/../y" with a
	// link x is where the kernel takes it, not where its text says.
	d.fs = d.path
	if real, err := folder.Real(d.path); err == nil {
		d.fs = real
	}
	if b.lean() {
		d.behind = newWriteBehind(b.writeBehindAfter)
	}
	// The last build's manifest, needed to write, is read and parsed while
	// the content loads.
	if b.prev == nil || b.prevDir != d.path {
		d.read = sync.OnceValues(func() (*manifest.Snapshot, error) { return readManifest(ctx, d.fs) })
		go d.read()
	}
	return d
}

// writeBehindAfter is how many bytes of new pages a build that bounds its
// memory writes before it writes the rest behind (see writeBehind): a
// site of 100,000 articles writes 400 MB.
const writeBehindAfter = 256 << 20

// disk is an output folder: pages are written to it atomically, with the
// folder's lock held.
type disk struct {
	b    *Builder
	path string                             // as given: for messages and the Result
	fs   string                             // its real path (see folder.Real): for every file
	read func() (*manifest.Snapshot, error) // see output.early
	// wroteLast is set by open when this Builder wrote the folder last.
	wroteLast bool
	// unfinished is set by open when a build of the folder did not finish:
	// its marker (see outdir.Mark) is there.
	unfinished bool
	// mark creates the marker, once, before the first change to the folder.
	mark func() error
	// since is the stat of the last build's manifest (nil: none), set
	// by open: a page changed after it was not written by a build.
	since fs.FileInfo
	// rechecked are the pages read because their times were not earlier
	// than since's, and found intact (see has).
	rechecked rechecked
	// wrote is set once a page is written.
	wrote atomic.Bool
	// unmatched are the indexes that do not match the last build's
	// manifest (manifest.Snapshot.Unmatched), set by open.
	unmatched []string
	// found is what open found under articles/ when this Builder did not
	// write the folder last: what may be deleted (see owned). cleaned
	// counts the strays it deleted (Options.Clean).
	found   *owned
	cleaned int
	// behind, set for a build that bounds its memory, writes new pages
	// behind once there are many of them.
	behind *writeBehind
}

func (d *disk) dir() string                               { return d.path }
func (d *disk) fsDir() string                             { return d.fs }
func (d *disk) early() func() (*manifest.Snapshot, error) { return d.read }

// byInput is true: the folder holds the files the manifest describes,
// which has checks.
func (d *disk) byInput() bool { return true }

func (d *disk) intact() bool { return !d.unfinished }

func (d *disk) open(ctx context.Context, pathsOf func(*manifest.Manifest) ([]string, error)) (*manifest.Manifest, func(), error) {
	if err := os.MkdirAll(d.fs, 0o755); err != nil {
		return nil, nil, fmt.Errorf("creating output folder: %w", err)
	}
	unlock, err := d.b.lock(ctx, d.fs)
	if err != nil {
		return nil, nil, err
	}
	prev, err := d.openLocked(ctx, pathsOf)
	if err != nil {
		unlock()
		return nil, nil, err
	}
	release := func() {
		d.behind.close()
		unlock()
	}
	return prev, release, nil
}

// openLocked is open once the folder's lock is held: it learns what the
// last build left, checks that nothing else is where this build writes
// (or deletes it, with Options.Clean), and makes the folders of the
// build's files.
func (d *disk) openLocked(ctx context.Context, pathsOf func(*manifest.Manifest) ([]string, error)) (*manifest.Manifest, error) {
	b := d.b
	prev, why, warning, err := d.last(ctx)
	if err != nil {
		return nil, err
	}
	d.unfinished = outdir.Marked(d.fs)
	d.since, _ = os.Stat(filepath.Join(d.fs, manifest.Name))
	pending := d.pending()
	paths, err := pathsOf(prev)
	if err != nil {
		return nil, err
	}
	d.wroteLast = !d.unfinished && b.last != nil && b.prevDir == d.path && prev == b.prev
	var set map[string]bool // the paths of pages
	if !d.wroteLast {
		if set, err = d.scan(ctx, prev, pending, paths, why); err != nil {
			return nil, err
		}
	}
	if warning != "" {
		// Said once the build goes on: a refusal changes nothing.
		fmt.Fprint(b.opt.Log, warning)
	}
	d.mark = sync.OnceValue(func() error { return d.markNew(ctx, paths, prev, pending) })
	if b.opt.Clean && !d.wroteLast && len(d.found.strays) > 0 {
		// Deleted before any page is written: a link among them would
		// take the pages elsewhere.
		if err := d.mark(); err != nil {
			return nil, err
		}
		if err := d.clean(ctx, set); err != nil {
			return nil, err
		}
	}
	if err := makeDirs(ctx, d.fs, paths, func() { b.step("folder") }); err != nil {
		return nil, err
	}
	return prev, nil
}

// last returns the manifest of the last build of the folder, setting
// unmatched: the one this Builder wrote there, else the folder's. When
// the folder has none, why says so for a refusal, and warning, when it
// cannot be read, is what to say once the build goes on.
func (d *disk) last(ctx context.Context) (prev *manifest.Manifest, why, warning string, err error) {
	b := d.b
	prev = b.prev
	d.unmatched = nil
	if prev != nil && b.prevDir == d.path {
		return prev, "", "", nil
	}
	r, err := b.lastManifest(ctx, d.fs, d.read)
	if ctx.Err() != nil {
		return nil, "", "", ctx.Err()
	}
	switch {
	case r != nil:
		prev, d.unmatched = r.Manifest, r.Unmatched
	case err != nil:
		why = filepath.Join(d.path, manifest.Name) + " cannot be read"
		warning = fmt.Sprintf("warning: %s: %v; every page will be rewritten\n", filepath.Join(d.path, manifest.Name), err)
	default:
		why = d.path + " has no " + manifest.Name
	}
	return prev, why, warning, nil
}

// pending returns what a build that did not finish may have written
// besides what the last manifest lists: the files its marker lists.
func (d *disk) pending() []string {
	var pending []string
	if d.unfinished {
		pending = readPending(d.fs)
	}
	if len(d.unmatched) > 0 {
		// An index changed since its manifest was written (damaged): the
		// chunks it named are not known, and any chunk in their folder
		// may be a build's, as after a build that did not finish.
		pending = append(pending, chunk.Dir)
	}
	return pending
}

// scan finds what is under articles/ before anything changes (d.found):
// a build that finds files no build wrote touches none of them, and
// refuses unless told to delete them. It returns the set of paths.
func (d *disk) scan(ctx context.Context, prev *manifest.Manifest, pending, paths []string, why string) (map[string]bool, error) {
	set := make(map[string]bool, len(paths))
	for _, p := range paths {
		set[p] = true
	}
	var err error
	if d.found, err = scanOwned(ctx, d.fs, prev, pending, set); err != nil {
		return nil, err
	}
	if len(d.found.foreign) > 0 {
		return nil, &foreignError{dir: d.path, foreign: d.found.foreign}
	}
	if len(d.found.strays) > 0 && !d.b.opt.Clean {
		if why == "" {
			why = "not in " + filepath.Join(d.path, manifest.Name)
			if d.unfinished {
				why += " nor in " + outdir.Unfinished
			}
		}
		return nil, &strayError{dir: d.path, strays: d.found.strays, why: why}
	}
	return set, nil
}

// markNew creates the marker of an unfinished build (see
// outdir.Mark), listing what this build may create: its paths that
// prev does not list, pending, and prev's files that only its indexes
// name. A folder this Builder wrote last was not scanned: a file put
// since where a new file goes is refused here.
func (d *disk) markNew(ctx context.Context, paths []string, prev *manifest.Manifest, pending []string) error {
	create := newPages(paths, prev, pending)
	if prev != nil {
		// The last build's chunks are named by its indexes only (see
		// manifest.Marshal), which this build overwrites: should it
		// die, the next one finds them here.
		for _, f := range prev.Files {
			if !layout.Classify(f.Path).Listed() {
				create = append(create, f.Path)
			}
		}
	}
	if d.wroteLast && !d.b.opt.Clean {
		// Not scanned: a file put since where a page goes is not this
		// build's, and the marker must not say it may be; and no page is
		// written through a link put in place of a folder.
		var strays []string
		for _, p := range create {
			if p != chunk.Dir && exists(filepath.Join(d.fs, filepath.FromSlash(p))) { // the chunks' folder: see chunks.go
				strays = append(strays, p)
			}
		}
		links, err := linkedFolders(ctx, d.fs, paths)
		if err != nil {
			return err
		}
		strays = append(strays, links...)
		if len(strays) > 0 {
			return &strayError{dir: d.path, strays: strays, why: "put there after the last build"}
		}
	}
	return outdir.Mark(d.fs, create)
}

// has checks a page's size, and reads it to check its SHA-256 when it
// may differ at the same size: after a build that did not finish; when
// it changed after the last manifest was written (by hand, a copy over
// it, a tool: a build writes every page before its manifest), which its
// status change time says at no cost; and with Options.Clean, whatever
// its times (a failing disk changes bytes and no time): a normal build
// reads only the pages that changed since, a clean one every page. A
// page read because of its times and found intact is recorded (see
// rechecked): the manifest is then written again after it, so that the
// next build does not read it again.
func (d *disk) has(f manifest.File) bool {
	name := d.fs + "/" + f.Path
	if !d.unfinished && !d.b.opt.Clean && !slices.Contains(d.unmatched, f.Path) {
		info, err := os.Stat(name)
		if err != nil || !info.Mode().IsRegular() || info.Size() != f.Size {
			return false
		}
		if d.since == nil || !changedSince(info, d.since) {
			return true
		}
	}
	info, ok := hashed(name, f.Size, f.SHA256)
	if ok && d.since != nil && changedSince(info, d.since) {
		d.rechecked.add(name, info)
	}
	return ok
}

func (d *disk) create(p string, data []byte) error {
	if err := d.mark(); err != nil {
		return err
	}
	d.wrote.Store(true)
	if err := d.behind.error(); err != nil {
		return err
	}
	name := d.fs + "/" + p
	if createNew(name, data, d.behind) {
		return nil
	}
	if d.wroteLast && !d.b.opt.Clean && exists(name) {
		// A file put where this build's new page goes since this Builder
		// wrote the folder (which it then did not scan): not its own.
		return &strayError{dir: d.path, strays: []string{p}, why: "put there after the last build"}
	}
	return writeAtomic(name, data)
}

func (d *disk) rewrite(p string, data []byte) error {
	if err := d.mark(); err != nil {
		return err
	}
	d.wrote.Store(true)
	return writeAtomic(d.fs+"/"+p, data)
}

func (d *disk) removeStale(ctx context.Context, prev *manifest.Manifest, keep map[string]bool) (int, error) {
	var stale []string
	if d.wroteLast {
		// This Builder wrote the folder last: its manifest names every
		// file there is to delete.
		for _, f := range prev.Files {
			if !keep[f.Path] {
				stale = append(stale, f.Path)
			}
		}
	} else {
		for _, p := range d.found.files {
			if !keep[p] {
				stale = append(stale, p)
			}
		}
	}
	deleted := d.cleaned
	dirs := map[string]bool{}
	for i, p := range stale {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return deleted, err
			}
		}
		if !strings.HasPrefix(p, listing.Dir+"/") || !fs.ValidPath(p) || !buildName(p) {
			continue // not a page: never deleted
		}
		if err := d.mark(); err != nil {
			return deleted, err
		}
		err := os.Remove(filepath.Join(d.fs, filepath.FromSlash(p)))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return deleted, fmt.Errorf("deleting stale page: %w", err)
		}
		if err == nil {
			deleted++
		}
		dirs[path.Dir(p)] = true
	}
	if !d.wroteLast {
		for _, t := range d.found.temps {
			os.Remove(t)
			if rel, err := filepath.Rel(d.fs, filepath.Dir(t)); err == nil {
				dirs[filepath.ToSlash(rel)] = true
			}
		}
		removeManifestTemps(d.fs)
	}
	removeEmptyDirs(d.fs, dirs)
	return deleted, nil
}

// clean deletes the strays (Options.Clean), links included (not what
// they point to), naming each, and the folders that leaves empty; not
// those at the paths of this build's pages (pages), which are replaced (a
// rename replaces a link, not what it points to).
func (d *disk) clean(ctx context.Context, pages map[string]bool) error {
	dirs := map[string]bool{}
	for i, p := range d.found.strays {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if pages[p] || p != listing.Dir && !strings.HasPrefix(p, listing.Dir+"/") || !fs.ValidPath(p) {
			continue
		}
		name := filepath.Join(d.fs, filepath.FromSlash(p))
		info, err := os.Lstat(name)
		if err == nil && info.IsDir() {
			continue // a folder: its files are strays of their own
		}
		if err == nil && info.Mode()&fs.ModeSymlink == 0 && !buildName(p) {
			continue // not a name a build writes: never deleted (see scanOwned)
		}
		fmt.Fprintf(d.b.opt.Log, "deleting %s (--clean): no feedgen build wrote it\n", filepath.Join(d.path, filepath.FromSlash(p)))
		if err := os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("deleting %s (--clean): %w", name, err)
		}
		d.cleaned++
		dirs[path.Dir(p)] = true
	}
	removeEmptyDirs(d.fs, dirs)
	return nil
}

// writeManifest writes the manifest unless the folder holds these bytes
// (in a regular file: any other is replaced, never opened), again is not
// set, and no page was read because of its times (see rechecked); then,
// when pages were written or read, settles it (see settle).
func (d *disk) writeManifest(data []byte, again bool) error {
	name := filepath.Join(d.fs, manifest.Name)
	if cur, err := outfile.ReadFile(name); err == nil && bytes.Equal(cur, data) && !again && !d.rechecked.moved() {
		return nil
	}
	if err := writeAtomic(name, data); err != nil {
		return err
	}
	if d.wrote.Load() || d.rechecked.any() {
		settle(name)
	}
	return nil
}

// finish removes the marker of an unfinished build: the folder is what
// the manifest says, unless a page written behind did not reach the disk.
func (d *disk) finish() error {
	if err := d.behind.finish(); err != nil {
		return err
	}
	return finished(d.fs)
}

// writeAtomic writes data to name atomically (see atomicfile).
func writeAtomic(name string, data []byte) error {
	if err := atomicfile.WriteFile(name, data, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// memory keeps no page: the last build's pages are what this Builder
// rendered, and what changed is only counted.
type memory struct{ b *Builder }

func (memory) dir() string                               { return "" }
func (memory) fsDir() string                             { return "" }
func (memory) early() func() (*manifest.Snapshot, error) { return nil }

func (m memory) open(_ context.Context, pathsOf func(*manifest.Manifest) ([]string, error)) (*manifest.Manifest, func(), error) {
	if _, err := pathsOf(m.b.prev); err != nil {
		return nil, nil, err
	}
	return m.b.prev, func() {}, nil
}

// byInput is false: in memory every page the watcher does not vouch for
// is rendered again.
func (memory) byInput() bool { return false }

// intact and has are true: memory holds no file that could have
// changed since.
func (memory) intact() bool                     { return true }
func (memory) has(manifest.File) bool           { return true }
func (memory) create(string, []byte) error      { return nil }
func (memory) rewrite(string, []byte) error     { return nil }
func (memory) writeManifest([]byte, bool) error { return nil }
func (memory) finish() error                    { return nil }

func (memory) removeStale(_ context.Context, prev *manifest.Manifest, keep map[string]bool) (int, error) {
	deleted := 0
	if prev != nil {
		for _, f := range prev.Files {
			if !keep[f.Path] {
				deleted++
			}
		}
	}
	return deleted, nil
}
