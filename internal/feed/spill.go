package feed

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// A Spill keeps the JSON of a site's articles in temporary files rather
// than in memory, for a build of a site too large to hold it (a million
// articles are over a gigabyte of JSON). Add encodes each article as soon
// as it is parsed, after which the values only its JSON needs may be
// dropped (content.Article.Slim); Listing writes the JSON again in listing
// order, and the pages are assembled from that file: from the page cache,
// which the system may reclaim, not from the build's memory.
//
// Add may be called from several goroutines at once; Listing once, after
// the last Add. Close removes the files; where the system allows, they
// have no name from the start, so that a build that dies leaves nothing
// behind.
type Spill struct {
	dir  string
	pool sync.Pool // *[]byte to encode into

	mu   sync.Mutex
	raw  *os.File // the articles in the order they were added
	buf  []byte   // added and not yet written: raw's bytes from size on
	size int64    // bytes written to raw
	refs map[*content.Article]spilled
	err  error // of the first write to raw

	sorted *os.File // the articles in listing order, made by Listing
}

// spilled is where Add put an article in raw.
type spilled struct {
	off int64
	n   int
	sum [sha256.Size]byte
}

// spillWrite is how many bytes of articles a Spill gathers before it
// writes them.
const spillWrite = 1 << 20

// NewSpill returns a Spill whose files are in the folder dir, best on the
// disk the output goes to, or the system's temporary folder when dir is
// "" or cannot be written.
func NewSpill(dir string) (*Spill, error) {
	raw, err := tempFile(dir)
	if err != nil {
		return nil, err
	}
	return &Spill{dir: dir, raw: raw, refs: map[*content.Article]spilled{}}, nil
}

// tempFile creates a temporary file in dir and removes its name.
func tempFile(dir string) (*os.File, error) {
	f, err := os.CreateTemp(dir, ".feedgen-articles-*")
	if err != nil && dir != "" {
		f, err = os.CreateTemp("", ".feedgen-articles-*") // dir is read-only
	}
	if err != nil {
		return nil, fmt.Errorf("creating a temporary file for the encoded articles: %w", err)
	}
	// Open files cannot be removed on every system: Close tries again.
	os.Remove(f.Name())
	return f, nil
}

// Add encodes a and keeps its JSON. a is identified by its pointer:
// Listing takes the articles that were added.
func (s *Spill) Add(a *content.Article) {
	bp, _ := s.pool.Get().(*[]byte)
	if bp == nil {
		bp = new([]byte)
	}
	b := AppendArticle((*bp)[:0], a)
	r := spilled{n: len(b), sum: sha256.Sum256(b)}
	s.mu.Lock()
	r.off = s.size + int64(len(s.buf))
	s.refs[a] = r
	if s.buf == nil {
		s.buf = make([]byte, 0, spillWrite+4096)
	}
	s.buf = append(s.buf, b...)
	if len(s.buf) >= spillWrite {
		s.flush()
	}
	s.mu.Unlock()
	*bp = b
	s.pool.Put(bp)
}

// flush writes buf to raw; s.mu is held.
func (s *Spill) flush() {
	if s.err == nil && len(s.buf) > 0 {
		if _, err := s.raw.WriteAt(s.buf, s.size); err != nil {
			s.err = fmt.Errorf("writing the encoded articles to a temporary file: %w", err)
		}
	}
	s.size += int64(len(s.buf))
	s.buf = s.buf[:0]
}

// Listing is New for articles that were all added to s: it sorts them and
// writes their JSON in listing order into a new file, from which the pages
// of the listing it returns read it. The listing is valid until s is
// closed.
func (s *Spill) Listing(baseURL string, p config.Pagination, filters []string, articles []*content.Article) (*Listing, error) {
	s.mu.Lock()
	s.flush()
	s.buf = nil
	err := s.err
	s.mu.Unlock()
	if err != nil {
		return nil, err
	}
	sorted := slices.Clone(articles)
	content.Sort(sorted)
	n := len(sorted)
	main := &Collection{Dir: listing.Dir, Articles: sorted, count: n}
	main.start, main.end, main.sums = make([]int, n), make([]int, n), make([][sha256.Size]byte, n)
	from := make([]int64, n)
	pos := 0
	for i, a := range sorted {
		r, ok := s.refs[a]
		if !ok {
			return nil, fmt.Errorf("listing spilled articles: %s was not added", a.Path)
		}
		if i > 0 {
			pos++ // the comma
		}
		main.start[i], from[i], main.sums[i] = pos, r.off, r.sum
		pos += r.n
		main.end[i] = pos
	}
	s.refs = nil
	if s.sorted, err = tempFile(s.dir); err != nil {
		return nil, err
	}
	if err := s.copySorted(main, from); err != nil {
		return nil, err
	}
	// The articles in the order added are read no more.
	s.raw.Close()
	main.file = s.sorted
	l := &Listing{BaseURL: baseURL, Pagination: p, Filters: filters, Collections: []*Collection{main}}
	l.Collections = append(l.Collections, main.filtered(filters)...)
	return l, nil
}

// copySorted writes into s.sorted the JSON of main's articles, read from
// raw at from, separated by commas, at the offsets main.start gives; on
// all cores, each a range of articles.
func (s *Spill) copySorted(main *Collection, from []int64) error {
	n := main.Count()
	workers := min(runtime.GOMAXPROCS(0), max(1, n/1024))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		wg.Go(func() { errs[w] = s.copyRange(main, from, lo, hi) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// copyRange is copySorted for the articles [lo, hi).
func (s *Spill) copyRange(main *Collection, from []int64, lo, hi int) error {
	if lo >= hi {
		return nil
	}
	at := main.start[lo] // where buf goes
	if lo > 0 {
		at--
	}
	buf := make([]byte, 0, spillWrite+64<<10)
	write := func() error {
		if _, err := s.sorted.WriteAt(buf, int64(at)); err != nil {
			return fmt.Errorf("writing the encoded articles in listing order: %w", err)
		}
		at += len(buf)
		buf = buf[:0]
		return nil
	}
	for i := lo; i < hi; i++ {
		if i > 0 {
			buf = append(buf, ',')
		}
		n := main.end[i] - main.start[i]
		k := len(buf)
		buf = slices.Grow(buf, n)[:k+n]
		if _, err := s.raw.ReadAt(buf[k:], from[i]); err != nil {
			return fmt.Errorf("reading the encoded articles back: %w", err)
		}
		if len(buf) >= spillWrite {
			if err := write(); err != nil {
				return err
			}
		}
	}
	return write()
}

// Close removes the files of s.
func (s *Spill) Close() error {
	var errs []error
	for _, f := range []*os.File{s.raw, s.sorted} {
		if f == nil {
			continue
		}
		f.Close()
		if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, fmt.Errorf("removing a temporary file: %w", err))
		}
	}
	return errors.Join(errs...)
}
