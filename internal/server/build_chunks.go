package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/pool"
)

// A build of the chunks layout (docs/contract.md §12) has no page files:
// each collection's articles are in chunks, which loadChunks holds
// (mapped from their files, or in stores) and checks against the
// collection's index, and every answer is put together from them
// (assemble): any limit 1..max_limit at any offset.

// assembly is where the articles of one collection are: chunk k holds
// the articles from first[k], article i ends at ends[i] in its chunk.
type assembly struct {
	first  []int
	ends   []uint32
	bodies [][]byte // nil: the chunk did not match the manifest (partial)
	sums   [][sha256.Size]byte
	// sentAt is when a page that starts in each chunk was last sent (see
	// page.sentAt): pages sent that often are spliced.
	sentAt []uint32
	// fetch, in a build of a bucket, names each chunk in the bucket, read
	// when a page needs it (bodies are then nil); remote reads it.
	fetch  []remoteRef
	remote *remote
}

// recentlySent is page.recentlySent for the pages that start in chunk k.
func (a *assembly) recentlySent(k int, now time.Time) bool {
	if a.fetch != nil {
		return false // in Go memory: never spliced
	}
	ms := max(uint32(now.UnixMilli()), 1) // 0 is never
	last := atomic.LoadUint32(&a.sentAt[k])
	if last != ms {
		atomic.StoreUint32(&a.sentAt[k], ms)
	}
	return last != 0 && ms-last < hotPage
}

// chunkOf returns the chunk that holds article i.
func (a *assembly) chunkOf(i int) int {
	k, found := slices.BinarySearch(a.first, i)
	if !found {
		k--
	}
	return k
}

// chunkBody is the bytes of a chunk and what keeps them: a store, or the
// mapping of its file (pf).
type chunkBody struct {
	data   []byte
	pf     *pageFile
	remote bool // neither: in the bucket (see build_remote.go)
}

// loadChunks is the loader of the chunks layout (see layoutServers):
// each chunk and index comes from src.fresh, else from src.prev (the
// same SHA-256 is the same bytes), else from its file, checked against
// the manifest: with src.dir, mapped (see pageDir.readPage); else read
// from src.fsys into a store. Each index is read, parsed and checked
// against its chunks' bytes. A file that differs gives a notReadyError;
// with src.partial, the pages that need it answer 503 instead.
func loadChunks(ctx context.Context, hb *heldBuild, m *manifest.Manifest, src loadSource) error {
	hb.bySum = map[[sha256.Size]byte]stored{}
	hb.chunks = map[[sha256.Size]byte]chunkBody{}
	colls, _ := hb.makeCollections(m.Collections, m.Filters)
	indexes := map[string]indexFile{} // each index file, by path
	toRead, err := hb.holdKnown(ctx, m.Files, src, indexes)
	if err != nil {
		return err
	}
	var failed []string
	if len(toRead) > 0 {
		if failed, err = hb.readChunked(ctx, src.fsys, src.dir, toRead, indexes, src.partial); err != nil {
			return err
		}
	}
	hb.read = len(toRead) - len(failed)
	hb.unavailable = failed
	if err := hb.compact(src.slack); err != nil {
		return err
	}
	hb.retake(m.Files, indexes)
	for i, c := range colls {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := hb.assembleFrom(c, indexes, src.prev, src.partial); err != nil {
			return err
		}
	}
	return nil
}

// holdKnown holds the bytes of every file of files that src.fresh or
// src.prev holds already, and returns the others, to read.
func (hb *heldBuild) holdKnown(ctx context.Context, files []manifest.File, src loadSource, indexes map[string]indexFile) (toRead []manifest.File, err error) {
	for i, f := range files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if layout.Classify(f.Path) == layout.Feed {
			continue // see loadFeeds
		}
		hb.pages++
		hb.bytes += f.Size
		sum := f.Sum()
		if at, ok := src.fresh.lookup(sum); ok && at.size == f.Size {
			hb.keep(f, sum, chunkBody{data: at.st.bytes(at.off, at.size)}, at, indexes)
			continue
		}
		if prev := src.prev; prev != nil {
			if at, ok := prev.bySum[sum]; ok && at.size == f.Size {
				hb.keep(f, sum, chunkBody{data: at.st.bytes(at.off, at.size)}, at, indexes)
				continue
			}
			if b, ok := prev.chunks[sum]; ok && b.pf != nil && int64(len(b.data)) == f.Size {
				hb.chunks[sum] = b
				continue
			}
		}
		if src.remote != nil && !layout.Classify(f.Path).Names() {
			hb.chunks[sum] = chunkBody{remote: true} // read when a page needs it
			continue
		}
		if src.fsys == nil && src.dir == nil {
			return nil, fmt.Errorf("%s is neither in memory nor in a folder", f.Path)
		}
		toRead = append(toRead, f)
	}
	return toRead, nil
}

// retake takes again every slice of a store that hb.chunks and indexes
// hold: compact may have moved what is in stores to a new one, and the
// old ones go once unreachable.
func (hb *heldBuild) retake(files []manifest.File, indexes map[string]indexFile) {
	for sum, b := range hb.chunks {
		if b.pf == nil {
			if at, ok := hb.bySum[sum]; ok {
				hb.chunks[sum] = chunkBody{data: at.st.bytes(at.off, at.size)}
			}
		}
	}
	for _, f := range files {
		if ix, ok := indexes[f.Path]; ok {
			if at, ok := hb.bySum[ix.sum]; ok {
				indexes[f.Path] = indexFile{data: at.st.bytes(at.off, at.size), sum: ix.sum}
			}
		}
	}
}

// keep records the bytes of file f, held in memory at at: an index's
// (a file that names others: layout.Kind.Names) in indexes, to be
// parsed; a chunk's in hb.chunks.
func (hb *heldBuild) keep(f manifest.File, sum [sha256.Size]byte, b chunkBody, at stored, indexes map[string]indexFile) {
	hb.bySum[sum] = at
	if layout.Classify(f.Path).Names() {
		indexes[f.Path] = indexFile{data: b.data, sum: sum}
	} else {
		hb.chunks[sum] = b
	}
}

// readChunked reads the files todo, on several cores, and checks them
// against the manifest: with dir, chunks are mapped (or copied into a
// store, past the bound on mappings); indexes, and every file of fsys, are
// read into a store. A file that differs gives a notReadyError; with partial, its
// path is returned in failed instead. It stops when ctx is done.
func (hb *heldBuild) readChunked(ctx context.Context, fsys fs.FS, dir *pageDir, todo []manifest.File, indexes map[string]indexFile, partial bool) (failed []string, err error) {
	// A chunk of the folder is mapped; one that cannot be (past the bound
	// on mappings) is copied into the store with the rest, outside the Go
	// heap, as a page is: its bytes may be spliced into sockets (see
	// socket.Sender.SendVec). An index is read into the store, to be
	// parsed.
	st, err := newStore()
	if err != nil {
		return nil, fmt.Errorf("allocating memory for the chunks: %w", err)
	}
	at := make([]stored, len(todo))
	mapping := make([]bool, len(todo)) // a chunk of the folder, mapped if it can be
	for i, f := range todo {
		if mapping[i] = dir != nil && !layout.Classify(f.Path).Names(); !mapping[i] {
			at[i] = stored{st: st, off: st.reserve(f.Size), size: f.Size}
		}
	}
	mapped := make([]bool, len(todo))
	got := make([]chunkBody, len(todo))
	var mu sync.Mutex // guards failed
	err = pool.Run(ctx, len(todo), pool.Size(2), func() func(context.Context, int) error {
		var buf []byte
		return func(_ context.Context, i int) error {
			f := todo[i]
			var data []byte
			var err error
			if mapping[i] {
				var pf *pageFile
				if pf, data, err = dir.readPage(f, buf); err == nil {
					if mem := pf.mapped(); mem != nil {
						got[i], mapped[i] = chunkBody{data: mem, pf: pf}, true
					} else {
						at[i] = stored{st: st, off: st.reserve(f.Size), size: f.Size}
					}
				}
			} else {
				data, err = manifest.ReadPage(fsys, f, buf)
			}
			if err == nil && !mapped[i] {
				buf = data[:0]
				if err = at[i].st.writeAt(data, at[i].off); err != nil {
					err = fmt.Errorf("storing %s: %w", f.Path, err)
				}
			}
			var mm *manifest.Mismatch
			switch {
			case errors.As(err, &mm) && partial:
				mu.Lock()
				failed = append(failed, f.Path)
				mu.Unlock()
				at[i] = stored{}
				return nil
			case errors.As(err, &mm):
				return notReadyError{err: err}
			}
			return err
		}
	})
	if err != nil {
		st.discard()
		return nil, err
	}
	if err := st.seal(); err != nil {
		st.discard()
		return nil, fmt.Errorf("mapping the chunks: %w", err)
	}
	for i, f := range todo {
		sum := f.Sum()
		switch {
		case mapped[i]:
			hb.chunks[sum] = got[i]
		case at[i].st != nil:
			hb.keep(f, sum, chunkBody{data: at[i].st.bytes(at[i].off, at[i].size)}, at[i], indexes)
		}
	}
	slices.Sort(failed)
	return failed, nil
}

// assembleFrom sets the assembly of collection c from its index: its
// root and the leaves it names, by path in indexes, their bytes checked
// against the manifest already (a leaf's size and SHA-256 are those its
// root gives it: see manifest.Expand). Each chunk a leaf names must be
// one the build holds, with its articles where the leaf says. With
// partial, what did not match the manifest is left out, its pages
// answered 503: the index (c has no assembly), a leaf (the articles it
// holds), a chunk (its articles); the other pages are answered. Without
// partial, it was refused when read.
func (hb *heldBuild) assembleFrom(c *collection, indexes map[string]indexFile, prev *heldBuild, partial bool) error {
	name := chunk.IndexPath(c.dir)
	data := indexes[name].data
	if data == nil {
		if partial {
			return nil
		}
		return notReadyError{err: fmt.Errorf("%s: chunk index %s is missing", manifest.Name, name)}
	}
	root, err := chunk.ParseRoot(data)
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	ix := &chunk.Index{Count: root.Count}
	// The SHA-256 each chunk's path names, and whether it is a chunk's
	// (not a leaf's left out).
	var sums [][sha256.Size]byte
	var isChunk []bool
	for i := range root.Leaves {
		lr := &root.Leaves[i]
		lf := indexes[lr.Path]
		if lf.data == nil {
			if !slices.Contains(hb.unavailable, lr.Path) {
				return fmt.Errorf("%s: leaf %s is not in %s", name, lr.Path, manifest.Name)
			}
			// Its articles are there, where is not known: one chunk
			// without a body, as many articles as the root says.
			ix.Chunks = append(ix.Chunks, chunk.Ref{Path: lr.Path, Ends: make([]int, lr.Count)})
			sums = append(sums, [sha256.Size]byte{})
			isChunk = append(isChunk, false)
			continue
		}
		l, checked := hb.leaves[lf.sum], true
		if l == nil && prev != nil {
			l = prev.leaves[lf.sum]
		}
		if l == nil {
			pl, err := chunk.ParseLeaf(lf.data)
			if err != nil {
				return fmt.Errorf("%s: %s: %w", name, lr.Path, err)
			}
			l, checked = &parsedLeaf{Leaf: pl, sums: make([][sha256.Size]byte, len(pl.Chunks)), isChunk: make([]bool, len(pl.Chunks))}, false
			for k := range pl.Chunks {
				l.sums[k], l.isChunk[k] = chunk.ParseChunkPath(pl.Chunks[k].Path)
			}
		}
		if l.Count != lr.Count {
			return fmt.Errorf("%s: leaf %s holds %d articles, the index says %d", name, lr.Path, l.Count, lr.Count)
		}
		if err := hb.checkLeaf(name, l, lf.sum, checked); err != nil {
			return err
		}
		ix.Chunks = append(ix.Chunks, l.Chunks...)
		sums = append(sums, l.sums...)
		isChunk = append(isChunk, l.isChunk...)
	}
	if ix.Count != c.count {
		return notReadyError{err: fmt.Errorf("%s counts %d articles, %s %d: a build is being written", name, ix.Count, manifest.Name, c.count)}
	}
	a := &assembly{
		first:  make([]int, len(ix.Chunks)),
		ends:   make([]uint32, 0, ix.Count),
		bodies: make([][]byte, len(ix.Chunks)),
		sums:   make([][sha256.Size]byte, len(ix.Chunks)),
		sentAt: make([]uint32, len(ix.Chunks)),
	}
	if hb.remote != nil {
		a.fetch, a.remote = make([]remoteRef, len(ix.Chunks)), hb.remote
	}
	for k := range ix.Chunks {
		r, sum := &ix.Chunks[k], sums[k]
		b, ok := hb.chunks[sum]
		if !ok && !slices.Contains(hb.unavailable, r.Path) {
			return fmt.Errorf("%s: chunk %s is not in %s", name, r.Path, manifest.Name)
		}
		if ok && isChunk[k] {
			a.bodies[k] = b.data
			if b.remote {
				a.fetch[k] = remoteRef{path: r.Path, size: int64(r.Size), sum: sum}
			}
		}
		a.first[k], a.sums[k] = len(a.ends), sum
		for _, e := range r.Ends {
			if e > 1<<32-1 {
				return fmt.Errorf("%s: chunk %s is larger than 4 GiB", name, r.Path)
			}
			a.ends = append(a.ends, uint32(e))
		}
	}
	c.asm = a
	return nil
}

// checkLeaf checks each chunk that leaf l (of index name, SHA-256 sum)
// names against it, unless checked: l is one a build loaded already,
// its chunks checked then (the same SHA-256s are the same bytes), but
// for those mapped from their files, which may have been cut short in
// place since. A leaf whose chunks are all held and match is kept in
// hb.leaves, for the next build. A chunk not held (partial) is not
// checked: its articles are answered 503.
func (hb *heldBuild) checkLeaf(name string, l *parsedLeaf, sum [sha256.Size]byte, checked bool) error {
	whole := true
	for k := range l.Chunks {
		r := &l.Chunks[k]
		b, ok := hb.chunks[l.sums[k]]
		if !ok || !l.isChunk[k] || b.remote {
			// A chunk of a bucket is checked when it is read.
			whole = false
			continue
		}
		if !checked || b.pf != nil {
			if err := checkChunk(r, b.data); err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if whole {
		if hb.leaves == nil {
			hb.leaves = map[[sha256.Size]byte]*parsedLeaf{}
		}
		hb.leaves[sum] = l
	}
	return nil
}

// parsedLeaf is a leaf of an index, parsed, with the SHA-256 that the
// path of each of its chunks names and whether it is a chunk's path
// (chunk.ParseChunkPath).
type parsedLeaf struct {
	*chunk.Leaf
	sums    [][sha256.Size]byte
	isChunk []bool
}

// indexFile is the bytes of a file of an index (a root or a leaf) and
// their SHA-256.
type indexFile struct {
	data []byte
	sum  [sha256.Size]byte
}

// checkChunk is chunk.CheckChunk on bytes that may be a mapped file: one
// cut short in place since it was mapped faults, made an error.
func checkChunk(r *chunk.Ref, data []byte) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			err = fmt.Errorf("chunk %s: shorter than it was when read", r.Path)
		}
	}()
	return chunk.CheckChunk(r, data)
}

// assembled is one page put together from chunks: its head (the JSON up
// to the results' '['), the slices of chunks and the commas between
// them, and the tail; its size and entity tag. A connection keeps one,
// used again for each request: it holds no pointer into a build once the
// answer is sent (see clearParts), only what names the page.
type assembled struct {
	pg    page     // etag and length, for the headers
	head  []byte   // the JSON head
	parts [][]byte // slices of chunks, commas, and the tail "]}"
	size  int
	from  *assembly // and its chunk where the page starts, k; until sent
	k     int
	// build, dir, limit and offset name the page of head and etag:
	// asked for again, its head and tag are not made again.
	build         [sha256.Size]byte
	dir           string
	limit, offset int
	in            []byte // what the entity tag is a digest of
	etag          [1]string
	// got are the chunks of the page read from a bucket (see
	// assembly.read), from chunk k on; held holds them until the page is
	// written (clearParts).
	got  [][]byte
	held []*remoteEntry
}

var (
	comma = []byte{','}
	tail  = []byte("]}")
)

// clearParts forgets the slices of chunks once the page is sent, and lets
// go of the chunks read from a bucket it holds.
func (a *assembled) clearParts() {
	clear(a.parts)
	a.parts, a.from = a.parts[:0], nil
	for _, e := range a.held {
		e.release()
	}
	clear(a.held)
	clear(a.got)
	a.held, a.got = a.held[:0], a.got[:0]
}

// assemble puts together page (limit, offset) of c, offset < c.count
// (offsetText is the offset as the query gave it, canonical), into a. It
// returns an error when a chunk it needs is unavailable (partial), or
// could not be read from the bucket. In a build of a bucket, the chunks
// not in memory are read (at once, by one deadline) only with bodies:
// without, the page's head, size and tag are made, not its parts, which
// is all a HEAD, or a conditional request answered 304, needs.
//
// The entity tag is the SHA-256 of the head and, for each slice, the
// SHA-256 of its chunk and where the slice is in it: what the body is
// made of, so that it changes whenever the body does, and costs a hash of
// a few hundred bytes, not of the page. The page a connection was last
// answered (a hot one) keeps its head and tag.
func (hb *heldBuild) assemble(a *assembled, c *collection, limit, offset int, offsetText string, bodies bool) error {
	as := c.asm
	if as == nil {
		return errUnavailable
	}
	a.clearParts()
	if as.fetch != nil && bodies {
		if err := as.read(a, offset, min(offset+limit, c.count)-1); err != nil {
			a.clearParts()
			return err
		}
	}
	same := a.size > 0 && a.build == hb.manifestSum && a.dir == c.dir && a.limit == limit && a.offset == offset
	if !same {
		a.size = 0
		a.head = listing.AppendHead(a.head[:0], hb.baseURL, c.params, c.count, limit, offsetText)
		a.in = append(a.in[:0], a.head...)
	}
	a.parts = a.parts[:0]
	a.from, a.k = as, as.chunkOf(offset)
	size := len(a.head)
	last := min(offset+limit, c.count) - 1
	for i, k := offset, a.k; i <= last; k++ {
		body := as.bodies[k]
		switch {
		case body != nil:
		case as.fetch == nil || as.fetch[k].path == "":
			a.clearParts()
			return errUnavailable
		case bodies:
			body = a.got[k-a.k]
		}
		start := 1
		if i > as.first[k] {
			start = int(as.ends[i-1]) + 1
		}
		j := last
		if k+1 < len(as.first) {
			j = min(last, as.first[k+1]-1)
		}
		end := int(as.ends[j])
		if len(a.parts) > 0 {
			a.parts = append(a.parts, comma)
			size++
		}
		if body != nil {
			a.parts = append(a.parts, body[start:end])
		} else {
			a.parts = append(a.parts, nil) // in the bucket, not read: see bodies
		}
		size += end - start
		if !same {
			a.in = append(a.in, as.sums[k][:]...)
			a.in = appendUint32(a.in, uint32(start))
			a.in = appendUint32(a.in, uint32(end))
		}
		i = j + 1
	}
	a.parts = append(a.parts, tail)
	if !same {
		sum := sha256.Sum256(a.in)
		a.etag[0] = etag(sum[:])
		a.build, a.dir, a.limit, a.offset = hb.manifestSum, c.dir, limit, offset
	}
	a.size = size + len(tail)
	a.pg = page{etag: a.etag[:]}
	return nil
}

// errUnavailable is the error of assemble for a page that needs a chunk
// the build does not hold (see heldBuild.unavailable).
var errUnavailable = errors.New("a chunk of the page did not match the manifest")

// read reads from the bucket the chunks that articles first..last of a
// build of a bucket are in, into a.got from the chunk of first on (nil
// for a chunk in memory), held by a.held: from the cache, and those it
// lacks from the bucket, at the same time, each checked against the
// index, by one deadline. A hot page allocates nothing.
func (as *assembly) read(a *assembled, first, last int) error {
	k0, k1 := as.chunkOf(first), as.chunkOf(last)
	missing := false
	for k := k0; k <= k1; k++ {
		var body []byte
		if as.bodies[k] == nil && as.fetch[k].path != "" {
			var e *remoteEntry
			if body, e = as.remote.peek(as.fetch[k]); e != nil {
				a.held = append(a.held, e)
			} else {
				missing = true
			}
		}
		a.got = append(a.got, body)
	}
	if !missing {
		return nil
	}
	held := make([]*remoteEntry, k1-k0+1)
	errs := make([]error, len(held))
	deadline := as.remote.deadline()
	var wg sync.WaitGroup
	for k := k0; k <= k1; k++ {
		if a.got[k-k0] != nil || as.bodies[k] != nil || as.fetch[k].path == "" {
			continue
		}
		wg.Go(func() { a.got[k-k0], held[k-k0], errs[k-k0] = as.remote.get(as.fetch[k], as.chunkCheck(k), deadline) })
	}
	wg.Wait()
	for _, e := range held {
		if e != nil {
			a.held = append(a.held, e)
		}
	}
	return errors.Join(errs...)
}

// chunkCheck returns the check of a chunk read from the bucket against
// its articles' ends in the index (chunk k of a).
func (a *assembly) chunkCheck(k int) func([]byte) error {
	return func(data []byte) error {
		end := len(a.ends)
		if k+1 < len(a.first) {
			end = a.first[k+1]
		}
		ends := make([]int, 0, end-a.first[k])
		for _, e := range a.ends[a.first[k]:end] {
			ends = append(ends, int(e))
		}
		return chunk.CheckChunk(&chunk.Ref{Path: a.fetch[k].path, Size: int(a.fetch[k].size), Ends: ends}, data)
	}
}

func appendUint32(b []byte, v uint32) []byte {
	return append(b, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}
