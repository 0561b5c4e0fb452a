package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/pool"
)

// notReadyError says that the files on disk do not match the manifest: a
// build is being written. Loading again a little later will do. held is
// set when the build is the one being served already, in part (see
// heldBuild.unavailable): there is nothing new to say about it.
type notReadyError struct {
	err  error
	held bool
}

func (e notReadyError) Error() string { return e.err.Error() }
func (e notReadyError) Unwrap() error { return e.err }

// fileRef is one page file of the manifest and where its body is.
type fileRef struct {
	file   manifest.File
	sum    [sha256.Size]byte
	at     stored      // in memory
	pf     *pageFile   // or in a file (dir)
	c      *collection // the collection of the page
	li, ix int         // limitPages index and page index; li < 0 for index.json
	feed   *feedPage   // or the feed it is (see loadFeeds): li and ix unused
	remote *remoteRef  // or in the bucket, read when a request needs it
}

// loadPages is the loader of the pages layout (see layoutServers): each
// page body comes from src.fresh, else from src.prev, else from its file,
// read and checked against its size and SHA-256: with src.dir (the
// output folder, open), the file's identity is recorded and its bytes
// dropped, to be sent from the file (see pageFile); else, from src.fsys,
// the bytes are kept in a store.
func loadPages(ctx context.Context, hb *heldBuild, m *manifest.Manifest, src loadSource) error {
	inMemory := len(m.Files) // pages held in memory, at most
	if src.dir != nil {
		inMemory = 0 // but those handed over
	}
	hb.bySum = make(map[[sha256.Size]byte]stored, inMemory)
	colls, byDir := hb.makeCollections(m.Collections, m.Filters)
	pl := &pageLoad{hb: hb, src: src}
	err := pl.plan(ctx, m.Files, byDir)
	if err == nil {
		err = pl.checkComplete(ctx, colls)
	}
	if err == nil {
		err = pl.read(ctx)
	}
	if err != nil {
		if pl.disk != nil {
			pl.disk.discard()
		}
		return err
	}
	hb.read = len(pl.toRead) - len(pl.failed)
	if err := hb.compact(src.slack); err != nil {
		return err
	}
	pl.hold()
	return nil
}

// pageLoad is the state of one loadPages.
type pageLoad struct {
	hb  *heldBuild
	src loadSource
	// refs are the pages of the manifest that hb answers, and where
	// each one's body comes from; seen, their paths.
	refs []fileRef
	seen map[string]bool
	// toRead are the indexes in refs of the files to read; failed, of
	// those that did not match the manifest (partial).
	toRead, failed []int
	// disk is the store the bodies read from src.fsys go into; nil
	// until one is.
	disk *store
	// prevFiles are the page files of src.prev, by identity, when both
	// builds are served from the folder.
	prevFiles map[fileID]*pageFile
}

// plan finds where each page of files comes from (see source), in the
// order of files.
func (pl *pageLoad) plan(ctx context.Context, files []manifest.File, byDir map[string]*collection) error {
	hb, src := pl.hb, pl.src
	if src.dir != nil && src.prev != nil && src.prev.dir != nil {
		pl.prevFiles = src.prev.files()
	}
	pl.refs = make([]fileRef, 0, len(files))
	pl.seen = make(map[string]bool, len(files))
	for i, f := range files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		k, ok := listing.ParsePageKey(f.Path)
		if !ok {
			continue // not a page: the manifest's check refuses it
		}
		c, li, ix, ok := hb.place(byDir, k)
		if !ok {
			continue // not a page of a collection this server answers from
		}
		pl.seen[f.Path] = true
		hb.bytes += f.Size
		if err := pl.add(fileRef{file: f, sum: f.Sum(), c: c, li: li, ix: ix}); err != nil {
			return err
		}
	}
	return nil
}

// add takes r into the load: where its body comes from (source), and
// whether its file is to be read.
func (pl *pageLoad) add(r fileRef) error {
	read, err := pl.source(&r)
	if err != nil {
		return err
	}
	if read {
		pl.toRead = append(pl.toRead, len(pl.refs))
	}
	pl.refs = append(pl.refs, r)
	return nil
}

// source sets where the body of r comes from: bytes held already (by hb,
// src.fresh or src.prev), the same file as src.prev's, or none (index.json
// of a folder; a file of the wrong size, partial); else it reports that
// the file is to be read, into its place in pl.disk when not from a
// folder.
func (pl *pageLoad) source(r *fileRef) (read bool, err error) {
	hb, src, f := pl.hb, pl.src, r.file
	at, known := hb.bySum[r.sum]
	if !known {
		at, known = src.fresh.lookup(r.sum)
	}
	if !known && src.prev != nil {
		at, known = src.prev.bySum[r.sum]
	}
	if known && at.size == f.Size {
		hb.bySum[r.sum] = at
		r.at = at
		return false, nil
	}
	if src.remote != nil {
		if r.li >= 0 {
			// index.json is answered as the page it repeats (see below).
			r.remote = &remoteRef{path: f.Path, size: f.Size, sum: r.sum}
		}
		return false, nil
	}
	if src.dir != nil {
		if r.li < 0 {
			// index.json is answered as the page it repeats (the
			// default limit, offset 0): its file is never sent.
			return false, nil
		}
		if pf := pl.prevFiles[src.dir.stat(f.Path)]; pf != nil && pf.sum == r.sum {
			r.pf = pf
			return false, nil
		}
	}
	if src.partial && src.fsys != nil && !sizeMatches(src.fsys, f) {
		return false, nil // neither read nor given room by the manifest's size
	}
	if src.dir == nil {
		if pl.disk == nil {
			if pl.disk, err = newStore(); err != nil {
				return false, fmt.Errorf("allocating memory for the pages: %w", err)
			}
		}
		at = stored{st: pl.disk, off: pl.disk.reserve(f.Size), size: f.Size}
		hb.bySum[r.sum] = at
		r.at = at
	}
	return true, nil
}

// checkComplete checks that every page of every collection of colls is
// in the manifest.
func (pl *pageLoad) checkComplete(ctx context.Context, colls []*collection) error {
	for _, c := range colls {
		if err := ctx.Err(); err != nil {
			return err
		}
		for _, lp := range c.limits {
			for i := range lp.pages {
				if p := pl.hb.pagePath(c, lp.limit, i); !pl.seen[p] {
					return fmt.Errorf("%s: page %s is missing", manifest.Name, p)
				}
			}
		}
	}
	return nil
}

// read reads the files to read (see readFiles) and seals the store they
// went into; with partial, those that did not match the manifest are
// left without a body.
func (pl *pageLoad) read(ctx context.Context) error {
	if len(pl.toRead) == 0 {
		return nil
	}
	src := pl.src
	if src.fsys == nil && src.dir == nil {
		return fmt.Errorf("page %s is neither in memory nor in a folder", pl.refs[pl.toRead[0]].file.Path)
	}
	failed, err := readFiles(ctx, src.fsys, src.dir, pl.refs, pl.toRead, src.partial)
	if err != nil {
		return err
	}
	pl.failed = failed
	for _, i := range failed {
		delete(pl.hb.bySum, pl.refs[i].sum)
		pl.refs[i].pf = nil
	}
	if pl.disk != nil {
		if err := pl.disk.seal(); err != nil {
			return fmt.Errorf("mapping the pages: %w", err)
		}
	}
	return nil
}

// hold gives each page of hb its body: in a store, or in its file; a
// page left out (partial) stays zero, answered 503.
func (pl *pageLoad) hold() {
	hb, dir := pl.hb, pl.src.dir
	lengths := map[int64][]string{}
	for _, r := range pl.refs {
		if r.feed != nil {
			hb.feeds++
		} else {
			hb.pages++
		}
		if r.li < 0 && (dir != nil || pl.src.remote != nil) {
			continue // index.json, not read: see source
		}
		at, inMemory := hb.bySum[r.sum]
		if !inMemory && r.pf == nil && r.remote == nil {
			// Left out (partial), its page left zero: answered 503.
			hb.unavailable = append(hb.unavailable, r.file.Path)
			hb.bytes -= r.file.Size
			continue
		}
		if r.li < 0 {
			continue // index.json: the same page as (default limit, 0)
		}
		ln, ok := lengths[r.file.Size]
		if !ok {
			ln = []string{strconv.FormatInt(r.file.Size, 10)}
			lengths[r.file.Size] = ln
		}
		pg := page{etag: []string{etag(r.sum[:])}, length: ln}
		switch {
		case inMemory:
			pg.body, pg.st = at.st.bytes(at.off, at.size), at.st
		case r.remote != nil:
			pg.remote = r.remote
		default:
			pg.file, pg.body = r.pf, r.pf.mapped() // nil when not mapped
		}
		if r.feed != nil {
			r.feed.pg = pg
		} else {
			r.c.limits[r.li].pages[r.ix] = pg
		}
	}
}

// validate checks a manifest read from a file before anything is sized
// by its numbers: one line says why it is refused.
func validate(m *manifest.Manifest) error {
	ps := m.Validate()
	if len(ps) == 0 {
		return nil
	}
	msgs := make([]string, len(ps))
	for i, d := range ps {
		msgs[i] = d.String()
	}
	return errors.New(strings.Join(msgs, "; "))
}

// files returns the page files of a build served from its folder, by
// identity.
func (hb *heldBuild) files() map[fileID]*pageFile {
	files := make(map[fileID]*pageFile, hb.pages)
	for _, c := range hb.collections {
		for _, lp := range c.limits {
			for i := range lp.pages {
				if pf := lp.pages[i].file; pf != nil {
					files[pf.id] = pf
				}
			}
		}
		for _, fp := range c.feeds {
			if fp != nil && fp.pg.file != nil {
				files[fp.pg.file.id] = fp.pg.file
			}
		}
	}
	return files
}

// makeCollections sets hb's collections, main listing and filters from
// the manifest's collections, with room for their pages. It returns them
// in the manifest's order, and by folder. A collection listed again
// replaces the first; one without parameters in another folder than the
// main listing's can never be selected, and is left out.
func (hb *heldBuild) makeCollections(list []manifest.Collection, filters []string) ([]*collection, map[string]*collection) {
	hb.collections = make(map[string]*collection, len(list))
	hb.filters = listing.FilterKeys()
	hb.kinds = make(map[string]bool, len(filters)+1)
	for _, f := range filters {
		hb.kinds[listing.FilterKind(f)] = true
	}
	var colls []*collection
	for _, mc := range list {
		if len(mc.Params) == 0 && mc.Dir != listing.Dir {
			continue
		}
		c := &collection{dir: mc.Dir, count: mc.Count}
		if len(mc.Params) > 0 {
			c.params = slices.Clone(mc.Params)
			slices.SortFunc(c.params, func(a, b listing.Param) int { return strings.Compare(a.Key, b.Key) })
		}
		for _, l := range hb.paging.Limits {
			if !hb.layout.Has(layout.Page) {
				break // no pages: see build_chunks.go
			}
			c.limits = append(c.limits, limitPages{limit: l, pages: make([]page, hb.paging.Pages(c.count, l))})
		}
		key := collectionKey(c.params)
		if old, ok := hb.collections[key]; ok {
			colls[slices.Index(colls, old)] = c
		} else {
			colls = append(colls, c)
		}
		hb.collections[key] = c
		if len(c.params) > 0 {
			hb.kinds[listing.Kind(c.params)] = true
		}
	}
	hb.main = hb.collections[""]
	byDir := make(map[string]*collection, len(colls))
	for _, c := range colls {
		byDir[c.dir] = c
	}
	return colls, byDir
}

// place maps a page of the manifest onto the page it holds: its
// collection, limit index and page index, or li = -1 for the index page
// of the main listing. ok is false for a key that is not a page of a
// collection (byDir holds the collections by folder).
func (hb *heldBuild) place(byDir map[string]*collection, k listing.PageKey) (c *collection, li, ix int, ok bool) {
	if c = byDir[k.Dir]; c == nil {
		return nil, 0, 0, false
	}
	if k.Index {
		return c, -1, 0, c == hb.main
	}
	for i, lp := range c.limits {
		if lp.limit != k.Limit {
			continue
		}
		ix = k.Offset
		if hb.aligned {
			if k.Offset%k.Limit != 0 {
				return nil, 0, 0, false
			}
			ix = k.Offset / k.Limit
		}
		if ix >= len(lp.pages) {
			return nil, 0, 0, false
		}
		return c, i, ix, true
	}
	return nil, 0, 0, false
}

// compactSlack is how many bytes of bodies no longer used a build's
// stores may hold beyond as many as the bodies used.
const compactSlack = 8 << 20

// compact makes the build's list of stores and, when they hold more than
// twice the bytes of the bodies used plus slack (after many rebuilds that
// each changed a few pages), copies its bodies into a new store, so that
// the old ones can be freed.
func (hb *heldBuild) compact(slack int64) error {
	used := map[*store]int64{} // bytes of bodies used, by store
	for _, at := range hb.bySum {
		used[at.st] += at.size
	}
	var live, total int64
	for st, n := range used {
		live += n
		total += st.size
	}
	if total <= 2*live+slack {
		for st := range used {
			hb.stores = append(hb.stores, st)
		}
		return nil
	}
	st, err := newStore()
	if err != nil {
		return fmt.Errorf("allocating memory for the pages: %w", err)
	}
	moved := make(map[[sha256.Size]byte]stored, len(hb.bySum))
	for sum, at := range hb.bySum {
		to := stored{st: st, off: st.reserve(at.size), size: at.size}
		if err := st.writeAt(at.st.bytes(at.off, at.size), to.off); err != nil {
			st.discard()
			return fmt.Errorf("copying the pages: %w", err)
		}
		moved[sum] = to
	}
	if err := st.seal(); err != nil {
		st.discard()
		return fmt.Errorf("mapping the pages: %w", err)
	}
	hb.bySum, hb.stores = moved, []*store{st}
	return nil
}

// readFiles reads the files refs[i] for every i in todo, on several
// cores, and checks them against their sizes and SHA-256 sums: from dir
// when it is set, recording each file's identity in refs[i].pf; else from
// fsys, into their places in the stores. A file that differs gives a
// notReadyError; with partial, its index in refs is returned in failed
// instead (in no particular order). It stops when ctx is done.
func readFiles(ctx context.Context, fsys fs.FS, dir *pageDir, refs []fileRef, todo []int, partial bool) (failed []int, err error) {
	var mu sync.Mutex // guards failed
	err = pool.Run(ctx, len(todo), pool.Size(1), func() func(context.Context, int) error {
		var buf []byte
		return func(_ context.Context, i int) error {
			r := &refs[todo[i]]
			var data []byte
			var err error
			if dir != nil {
				r.pf, data, err = dir.readPage(r.file, buf)
			} else {
				data, err = manifest.ReadPage(fsys, r.file, buf)
			}
			var mm *manifest.Mismatch
			switch {
			case errors.As(err, &mm) && partial:
				mu.Lock()
				failed = append(failed, todo[i])
				mu.Unlock()
				return nil
			case errors.As(err, &mm):
				return notReadyError{err: err}
			case err != nil:
				return err
			}
			if data != nil {
				buf = data[:0]
			}
			if dir == nil {
				if err := r.at.st.writeAt(data, r.at.off); err != nil {
					return fmt.Errorf("storing %s: %w", r.file.Path, err)
				}
			}
			return nil
		}
	})
	return failed, err
}

// sizeMatches reports whether the file of page f has the size the
// manifest records, or may have (it cannot tell): reading it checks.
func sizeMatches(fsys fs.FS, f manifest.File) bool {
	info, err := fs.Stat(fsys, f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return false
	}
	return err != nil || info.Size() == f.Size
}
