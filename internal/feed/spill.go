package feed

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"slices"
	"sort"
	"sync"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// A Spill keeps the JSON of a site's articles in temporary files rather
// than in memory, for a build of a site too large to hold it (a million
// articles are over a gigabyte of JSON). Add encodes each article as soon
// as it is parsed, after which the values only its JSON needs may be
// dropped (content.Article.Slim); the pages of the listing are assembled
// from the JSON in listing order, not from the build's memory.
//
// It is an external merge sort. Add gathers articles in memory until
// they are spillRun bytes of JSON, sorts them in listing order and writes
// them as one run. Listing starts merging the runs, each read in order,
// into a file in listing order, and returns: the pages read the articles
// from the merge as it goes, in memory while it holds them (see stream),
// else from the file. The runs and the file are written, and the runs
// read, past the page cache where the system allows (see spillFile): at
// a million articles, neither the page cache nor the build's memory
// holds more than a window of them.
//
// Add may be called from several goroutines at once; Listing once, after
// the last Add. Close removes the files; where the system allows, they
// have no name from the start, so that a build that dies leaves nothing
// behind.
type Spill struct {
	dir      string
	run      int       // bytes of JSON a run gathers: spillRun, less in tests
	chunk    int64     // bytes of a stream's chunk: spillWrite, less in tests
	window   int64     // bytes a stream holds ahead; 0: see window
	noDirect bool      // the sorted file goes through the page cache: for tests
	pool     sync.Pool // *[]byte to encode into
	batches  sync.Pool // *batch, emptied
	writes   sync.WaitGroup

	mu    sync.Mutex
	raw   *spillFile // the runs, each blockSize-aligned
	batch *batch     // articles added and not yet in a run
	size  int64      // bytes of raw taken by runs
	runs  []int64    // where each run starts in raw, in order
	refs  []spilled  // by content.Article.Index
	err   error      // of the first write to raw

	sorted  *spillFile // the articles in listing order, made by Listing
	stream  *stream    // sorted as it is made
	merging sync.WaitGroup

	// store holds the JSON of the articles added with AddStored, whose
	// lengths add up to storedBytes (see UseStore); preferDirect is set
	// by PreferDirect.
	store        *Store
	storedBytes  int64
	preferDirect bool
}

// spilled is where a run put an article in raw; n is 0 for an index no
// article was added at.
type spilled struct {
	off    int64
	n      int
	id     int64 // the article's, to catch an index given to two
	sum    [sha256.Size]byte
	stored bool // in the store at off (AddStored), not in raw
}

// A batch is the articles of a run to be: their JSON in the order added.
type batch struct {
	buf   []byte
	items []batchItem
	out   []byte // the run, aligned (see alignedBuf)
}

type batchItem struct {
	a   *content.Article
	off int // in buf
	n   int
	sum [sha256.Size]byte
}

const (
	// spillRun is how many bytes of articles a Spill gathers before it
	// sorts them and writes them as a run: at a million articles (1.3 GB
	// of JSON), about 80 runs, merged with two readerSize buffers each.
	spillRun = 16 << 20
	// spillWrite is how many bytes of articles in listing order Listing
	// gathers before it writes them.
	spillWrite = 1 << 20
	// spillWindow is how many bytes of articles in listing order the
	// stream holds at most, for pages that take the main listing in order.
	spillWindow = 64 << 20
)

// NewSpill returns a Spill whose files are in the folder dir, best on the
// disk the output goes to, or the system's temporary folder when dir is
// "" or cannot be written.
func NewSpill(dir string) (*Spill, error) {
	raw, err := newSpillFile(dir, true)
	if err != nil {
		return nil, err
	}
	return &Spill{dir: dir, run: spillRun, chunk: spillWrite, raw: raw}, nil
}

// Add encodes a and keeps its JSON. a is identified by its Index, which
// must be unique among the articles added (content.Load makes it so):
// Listing takes the articles that were added.
func (s *Spill) Add(a *content.Article) {
	bp, _ := s.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := AppendArticle((*bp)[:0], a)
	it := batchItem{a: a, n: len(b), sum: sha256.Sum256(b)}
	s.mu.Lock()
	if s.batch == nil {
		s.batch = s.newBatch()
	}
	bt := s.batch
	it.off = len(bt.buf)
	bt.items = append(bt.items, it)
	bt.buf = append(bt.buf, b...)
	var at int64
	if len(bt.buf) < s.run {
		bt = nil
	} else {
		at = s.take()
	}
	s.mu.Unlock()
	*bp = b
	s.pool.Put(bp)
	if bt != nil {
		s.writeRun(bt, at)
	}
}

// newBatch returns an empty batch.
func (s *Spill) newBatch() *batch {
	if bt, ok := s.batches.Get().(*batch); ok {
		return bt
	}
	return &batch{buf: make([]byte, 0, s.run+64<<10)}
}

// take makes the batch being gathered a run and returns where in raw it
// goes; s.mu is held, and writeRun must follow.
func (s *Spill) take() int64 {
	at := s.size
	s.runs = append(s.runs, at)
	s.size += roundUp(int64(len(s.batch.buf)))
	s.batch = nil
	s.writes.Add(1)
	return at
}

// writeRun sorts the articles of bt in listing order and writes their
// JSON to raw at at.
func (s *Spill) writeRun(bt *batch, at int64) {
	defer s.writes.Done()
	slices.SortFunc(bt.items, func(x, y batchItem) int {
		switch {
		case content.Before(x.a, y.a):
			return -1
		case content.Before(y.a, x.a):
			return 1
		}
		return 0
	})
	size := int(roundUp(int64(len(bt.buf))))
	if cap(bt.out) < size {
		bt.out = alignedBuf(size)
	}
	out := bt.out[:0]
	for _, it := range bt.items {
		out = append(out, bt.buf[it.off:it.off+it.n]...)
	}
	clear(out[len(out):size])
	err := s.raw.writeAt(out[:size], at)
	s.mu.Lock()
	off := at
	for _, it := range bt.items {
		s.ref(it.a.Index, spilled{off: off, n: it.n, id: it.a.ID, sum: it.sum}, it.a.Path)
		off += int64(it.n)
	}
	if err != nil && s.err == nil {
		s.err = fmt.Errorf("writing the encoded articles to a temporary file: %w", err)
	}
	s.mu.Unlock()
	clear(bt.items) // let the articles go
	bt.buf, bt.items = bt.buf[:0], bt.items[:0]
	s.batches.Put(bt)
}

// ref records where the JSON of the article of index i (whose file is
// path) is; s.mu is held.
func (s *Spill) ref(i int, r spilled, path string) {
	if i < 0 {
		if s.err == nil {
			s.err = fmt.Errorf("spilling %s: negative index %d", path, i)
		}
		return
	}
	if i >= len(s.refs) {
		// Grown by half at least, the new ones zero: s.refs only grows.
		s.refs = slices.Grow(s.refs, i+1-len(s.refs))[:i+1]
	}
	if s.refs[i].n != 0 && s.err == nil {
		s.err = fmt.Errorf("spilling %s: another article was added with its index %d", path, i)
	}
	s.refs[i] = r
}

// Listing is New for articles that were all added to s: it sorts them and
// writes their JSON in listing order into a new file, from which the pages
// of the listing it returns read it. The listing is valid until s is
// closed.
func (s *Spill) Listing(baseURL string, p listing.Pagination, filters []string, articles []*content.Article) (*Listing, error) {
	s.mu.Lock()
	var bt *batch
	var at int64
	if s.batch != nil && len(s.batch.items) > 0 {
		bt = s.batch
		at = s.take()
	}
	s.mu.Unlock()
	if bt != nil {
		s.writeRun(bt, at)
	}
	s.writes.Wait()
	s.batches = sync.Pool{}
	if s.err != nil {
		return nil, s.err
	}
	sorted := slices.Clone(articles)
	content.Sort(sorted)
	n := len(sorted)
	main := &Collection{Dir: listing.Dir, Articles: sorted, count: n}
	main.start, main.end, main.sums = make([]int, n), make([]int, n), make([][sha256.Size]byte, n)
	from := make([]int64, n)
	var stored []bool // of from; nil when none is
	if s.store != nil {
		stored = make([]bool, n)
	}
	pos := 0
	for i, a := range sorted {
		var r spilled
		if a.Index >= 0 && a.Index < len(s.refs) {
			r = s.refs[a.Index]
		}
		if r.n == 0 || r.id != a.ID {
			return nil, fmt.Errorf("listing spilled articles: %s was not added", a.Path)
		}
		if i > 0 {
			pos++ // the comma
		}
		main.start[i], from[i], main.sums[i] = pos, r.off, r.sum
		if r.stored {
			stored[i] = true
		}
		pos += r.n
		main.end[i] = pos
	}
	s.refs = nil
	l := &Listing{BaseURL: baseURL, Pagination: p, Filters: filters, Collections: []*Collection{main}}
	if s.direct() {
		// Where they are: start and end are where they would be in a
		// file in listing order.
		main.direct = &directSrc{at: from, stored: stored, store: s.store.file.buffered, raw: s.raw.buffered}
		l.Collections = append(l.Collections, main.filtered(filters, nil)...)
		return l, nil
	}
	var err error
	if s.sorted, err = newSpillFile(s.dir, !s.noDirect); err != nil {
		return nil, err
	}
	win := s.window
	if win == 0 {
		win = window(p, main, s.chunk)
	}
	st := newStream(s.sorted, s.chunk, win)
	s.stream = st
	s.merging.Add(1)
	go s.merge(st, main, from, stored)
	main.file, main.stream = s.sorted.buffered, st
	l.Collections = append(l.Collections, main.filtered(filters, nil)...)
	return l, nil
}

// merge writes into s.sorted, and into st, the JSON of main's articles,
// read from raw at from, separated by commas, at the offsets main.start
// gives; then it closes raw.
func (s *Spill) merge(st *stream, main *Collection, from []int64, stored []bool) {
	defer s.merging.Done()
	err := s.mergeAll(st, main, from, stored)
	st.finish(err)
	s.raw.close()
	s.raw = nil
}

func (s *Spill) mergeAll(st *stream, main *Collection, from []int64, stored []bool) error {
	// The chunks are written to the file, then added to st, by a
	// goroutine of their own while the next are filled.
	type chunk struct {
		b []byte
		n int
	}
	full := make(chan chunk, 4)
	written := make(chan error, 1)
	go func() {
		var at int64
		var err error
		for c := range full {
			if err != nil || st.stopped() {
				continue
			}
			size := int(roundUp(int64(c.n)))
			clear(c.b[c.n:size]) // the end of the file: padded to a block
			if err = s.sorted.writeAt(c.b[:size], at); err != nil {
				err = fmt.Errorf("writing the encoded articles in listing order: %w", err)
				st.finish(err) // the pages fail now, and the merge stops
				continue
			}
			st.add(c.b, c.n)
			at += int64(c.n)
		}
		written <- err
	}()
	err := s.fill(st, main, from, stored, func(b []byte, n int) { full <- chunk{b, n} })
	close(full)
	if werr := <-written; werr != nil {
		return werr
	}
	return err
}

// fill merges the runs, and the articles in the store (those stored
// says, read in order as they mostly are, and checked), into chunks of
// st, passing each to write when it is full, and the last when the
// articles end.
func (s *Spill) fill(st *stream, main *Collection, from []int64, stored []bool, write func(b []byte, n int)) error {
	readers := make([]runReader, len(s.runs)+1) // the last: the store's
	defer func() {
		for i := range readers {
			readers[i].wait() // no read outlives the merge
		}
	}()
	out, ok := st.chunk()
	if !ok {
		return nil // closed
	}
	out = out[:0]
	put := func(b []byte) error {
		for len(b) > 0 {
			k := copy(out[len(out):cap(out)], b)
			out, b = out[:len(out)+k], b[k:]
			if len(out) < cap(out) {
				continue
			}
			write(out, len(out))
			if out, ok = st.chunk(); !ok {
				return errClosed
			}
			out = out[:0]
		}
		return nil
	}
	comma := []byte{','}
	for i := range main.Count() {
		if i > 0 {
			if err := put(comma); err != nil {
				return err
			}
		}
		var b []byte
		var err error
		if stored != nil && stored[i] {
			b, err = readers[len(s.runs)].read(s.store.file, from[i], main.end[i]-main.start[i], s.store.size)
			if err != nil || sha256.Sum256(b) != main.sums[i] {
				return &StoreError{Path: main.Articles[i].Path}
			}
		} else {
			r := sort.Search(len(s.runs), func(r int) bool { return s.runs[r] > from[i] }) - 1
			end := s.size
			if r+1 < len(s.runs) {
				end = s.runs[r+1]
			}
			if b, err = readers[r].read(s.raw, from[i], main.end[i]-main.start[i], end); err != nil {
				return err
			}
		}
		if err := put(b); err != nil {
			return err
		}
	}
	if len(out) > 0 {
		write(out[:cap(out)], len(out))
	}
	return nil
}

// errClosed is the error of a merge stopped by Close or by a failed
// write.
var errClosed = errors.New("the encoded articles were closed")

// window returns how many bytes of main's articles in listing order its
// stream holds ahead of the pages: spillWindow, or more if two pages
// of the largest limit need more.
func window(p listing.Pagination, main *Collection, chunk int64) int64 {
	n := main.Count()
	most := p.DefaultLimit
	for _, l := range p.Limits {
		most = max(most, l)
	}
	var span int
	for i := 0; i < n; i++ {
		span = max(span, main.end[min(i+most, n)-1]-main.start[i])
	}
	return max(spillWindow, 2*int64(span)+2*chunk)
}

// Close removes the files of s.
func (s *Spill) Close() error {
	s.writes.Wait()
	if s.stream != nil {
		s.stream.close()
	}
	s.merging.Wait()
	var errs []error
	for _, f := range []*spillFile{s.raw, s.sorted} {
		if f != nil {
			errs = append(errs, f.close())
		}
	}
	return errors.Join(errs...)
}
