package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
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
}

// loadBuild makes the heldBuild of the build that the manifest (data, m)
// describes. Each page body comes from fresh (pages the build handed over
// in memory; nil when there are none), else from prev (the build being
// served: a page with the same SHA-256 is the same bytes; with dir, a
// file with the same identity is the same file), else from its file,
// read and checked against its size and SHA-256: with dir (the output
// folder, open), the file's identity is recorded and its bytes dropped,
// to be sent from the file (see pageFile); else, from fsys, the bytes are
// kept in a store. A file that differs gives a notReadyError; with
// partial, its page is left out instead, answered 503 (see
// heldBuild.unavailable).
//
// The manifest has been validated (see validate) unless it was handed
// over by the build that made it, in this process.
//
// When the stores the pages are in hold more than twice their bytes plus
// slack, the pages are copied to a new store (see compact).
//
// It stops when ctx is done, checked between files.
func loadBuild(ctx context.Context, fsys fs.FS, dir *pageDir, data []byte, m *manifest.Manifest, prev *heldBuild, fresh *Batch, slack int64, partial bool) (*heldBuild, error) {
	p := m.Pagination
	if layout.Of(p).Assembled {
		return loadChunked(ctx, fsys, dir, data, m, prev, fresh, slack, partial)
	}
	inMemory := len(m.Files) // pages held in memory, at most
	if dir != nil {
		inMemory = 0 // but those handed over
	}
	hb := &heldBuild{
		manifestSum:  sha256.Sum256(data),
		buildTime:    m.BuildTime,
		baseURL:      m.BaseURL,
		paging:       p,
		aligned:      p.Offsets == listing.OffsetsAligned,
		lastModified: []string{m.BuildTime.UTC().Format(http.TimeFormat)},
		bySum:        make(map[[sha256.Size]byte]stored, inMemory),
		dir:          dir,
		replaced:     make(chan struct{}),
	}
	colls, byDir := hb.makeCollections(m.Collections, m.Filters)
	var prevFiles map[fileID]*pageFile // the files of prev, by identity
	if dir != nil && prev != nil && prev.dir != nil {
		prevFiles = prev.files()
	}

	// Where each page's body comes from.
	refs := make([]fileRef, 0, len(m.Files))
	var toRead []int // indexes in refs of the files to read
	var disk *store
	seen := make(map[string]bool, len(m.Files))
	for i, f := range m.Files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				if disk != nil {
					disk.discard()
				}
				return nil, err
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
		seen[f.Path] = true
		r := fileRef{file: f, sum: f.Sum(), c: c, li: li, ix: ix}
		hb.bytes += f.Size
		at, known := hb.bySum[r.sum]
		if !known {
			at, known = fresh.lookup(r.sum)
		}
		if !known && prev != nil {
			at, known = prev.bySum[r.sum]
		}
		if known && at.size == f.Size {
			hb.bySum[r.sum] = at
			r.at = at
			refs = append(refs, r)
			continue
		}
		if dir != nil {
			if li < 0 {
				// index.json is answered as the page it repeats (the
				// default limit, offset 0): its file is never sent.
				refs = append(refs, r)
				continue
			}
			if pf := prevFiles[dir.stat(f.Path)]; pf != nil && pf.sum == r.sum {
				r.pf = pf
				refs = append(refs, r)
				continue
			}
		}
		if partial && fsys != nil && !sizeMatches(fsys, f) {
			// Neither read nor given room by the manifest's size.
			refs = append(refs, r)
			continue
		}
		if dir == nil {
			if disk == nil {
				var err error
				if disk, err = newStore(); err != nil {
					return nil, fmt.Errorf("allocating memory for the pages: %w", err)
				}
			}
			at = stored{st: disk, off: disk.reserve(f.Size), size: f.Size}
			hb.bySum[r.sum] = at
			r.at = at
		}
		toRead = append(toRead, len(refs))
		refs = append(refs, r)
	}
	discard := func() {
		if disk != nil {
			disk.discard()
		}
	}
	for _, c := range colls {
		if err := ctx.Err(); err != nil {
			discard()
			return nil, err
		}
		for _, lp := range c.limits {
			for i := range lp.pages {
				if p := hb.pagePath(c, lp.limit, i); !seen[p] {
					discard()
					return nil, fmt.Errorf("%s: page %s is missing", manifest.Name, p)
				}
			}
		}
	}
	var failed []int // indexes in refs of the files that did not match (partial)
	if len(toRead) > 0 {
		if fsys == nil && dir == nil {
			discard()
			return nil, fmt.Errorf("page %s is neither in memory nor in a folder", refs[toRead[0]].file.Path)
		}
		var err error
		if failed, err = readFiles(ctx, fsys, dir, refs, toRead, partial); err != nil {
			discard()
			return nil, err
		}
		for _, i := range failed {
			delete(hb.bySum, refs[i].sum)
			refs[i].pf = nil
		}
		if disk != nil {
			if err := disk.seal(); err != nil {
				disk.discard()
				return nil, fmt.Errorf("mapping the pages: %w", err)
			}
		}
	}
	hb.read = len(toRead) - len(failed)
	if err := hb.compact(slack); err != nil {
		return nil, err
	}

	lengths := map[int64][]string{}
	for _, r := range refs {
		hb.pages++
		if r.li < 0 && dir != nil {
			continue // index.json, not read: see above
		}
		at, inMemory := hb.bySum[r.sum]
		if !inMemory && r.pf == nil {
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
		if inMemory {
			pg.body, pg.st = at.st.bytes(at.off, at.size), at.st
		} else {
			pg.file, pg.body = r.pf, r.pf.mapped() // nil when not mapped
		}
		r.c.limits[r.li].pages[r.ix] = pg
	}
	return hb, nil
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
			if hb.chunked {
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
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
		mu      sync.Mutex // guards failed
	)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return
				}
				if err := ctx.Err(); err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(len(todo)))
					return
				}
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
					err = nil
				case errors.As(err, &mm):
					err = notReadyError{err: err}
				case err == nil:
					if data != nil {
						buf = data[:0]
					}
					if dir == nil {
						if err = r.at.st.writeAt(data, r.at.off); err != nil {
							err = fmt.Errorf("storing %s: %w", r.file.Path, err)
						}
					}
				}
				if err != nil {
					errOnce.Do(func() { first = err })
					next.Store(int64(len(todo)))
					return
				}
			}
		})
	}
	wg.Wait()
	return failed, first
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
