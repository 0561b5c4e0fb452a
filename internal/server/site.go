package server

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// site is one build held in memory: every page the manifest lists, with
// everything its answer needs computed once. A site never changes after it
// is loaded; the server swaps whole sites.
//
// The page bodies live in stores outside the Go heap (see newStore),
// freed once unreachable: a handler keeps its site alive
// (runtime.KeepAlive) until it has written the body. A site loaded after
// another shares the stores of the pages they have in common.
type site struct {
	manifestSum [sha256.Size]byte // of the manifest's bytes: the build's identity
	buildTime   time.Time
	baseURL     string // of the links, for the pages past the end
	paging      config.Pagination
	count       int
	aligned     bool
	limits      []limitPages

	lastModified []string // the Last-Modified header value
	pages        int      // page files, index.json included
	bytes        int64
	read         int // pages read from files (the rest were in memory already)

	bySum  map[[sha256.Size]byte]stored // every page body, by its SHA-256
	stores []*store                     // the stores of the bodies
}

// limitPages are the pages of one pre-rendered limit, by offset (offsets
// all) or by offset/limit (aligned).
type limitPages struct {
	limit int
	pages []page
}

// page is one answer, ready to send.
type page struct {
	body   []byte
	st     *store   // the store of body; nil when body is not in one
	off    int64    // where body is in st
	etag   []string // the quoted SHA-256 of body
	length []string // len(body) in decimal
}

// stored is where a page body is.
type stored struct {
	st        *store
	off, size int64
}

// notReadyError says that the files on disk do not match the manifest: a
// build is being written. Loading again a little later will do.
type notReadyError struct{ err error }

func (e notReadyError) Error() string { return e.err.Error() }
func (e notReadyError) Unwrap() error { return e.err }

// fileRef is one page file of the manifest and where its body is.
type fileRef struct {
	file   manifest.File
	sum    [sha256.Size]byte
	at     stored
	li, ix int // limitPages index and page index; li < 0 for index.json
}

// loadSite makes the site of the build that the manifest (data, m)
// describes. Each page body comes from fresh (pages the build handed over
// in memory; nil when there are none), else from prev (the site being
// served: a page with the same SHA-256 is the same bytes), else from its
// file in fsys, read and checked against its size and SHA-256. A file
// that differs gives a notReadyError.
//
// When the stores the pages are in hold more than twice their bytes plus
// slack, the pages are copied to a new store (see compact).
func loadSite(fsys fs.FS, data []byte, m *manifest.Manifest, prev *site, fresh *Batch, slack int64) (*site, error) {
	if ps := m.Validate(); len(ps) > 0 {
		return nil, ps
	}
	p := m.Pagination.Pagination()
	count := 0
	for _, c := range m.Collections {
		if c.Dir == listing.Dir && len(c.Params) == 0 {
			count = c.Count
		}
	}
	s := &site{
		manifestSum:  sha256.Sum256(data),
		buildTime:    m.BuildTime,
		baseURL:      m.BaseURL,
		paging:       p,
		count:        count,
		aligned:      p.Offsets == config.OffsetsAligned,
		lastModified: []string{m.BuildTime.UTC().Format(http.TimeFormat)},
		bySum:        make(map[[sha256.Size]byte]stored, len(m.Files)),
	}
	for _, l := range p.Limits {
		n := max(count, 1)
		if s.aligned {
			n = (n + l - 1) / l
		}
		s.limits = append(s.limits, limitPages{limit: l, pages: make([]page, n)})
	}

	// Where each page's body comes from.
	refs := make([]fileRef, 0, len(m.Files))
	var toRead []int // indexes in refs of the files to read
	var disk *store
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		li, ix, ok := s.place(f.Path)
		if !ok {
			continue // not a page this server answers with (a filter's, say)
		}
		seen[f.Path] = true
		r := fileRef{file: f, sum: f.Sum(), li: li, ix: ix}
		s.bytes += f.Size
		at, known := s.bySum[r.sum]
		if !known {
			at, known = fresh.lookup(r.sum)
		}
		if !known && prev != nil {
			at, known = prev.bySum[r.sum]
		}
		if !known || at.size != f.Size {
			if disk == nil {
				var err error
				if disk, err = newStore(); err != nil {
					return nil, fmt.Errorf("allocating memory for the pages: %w", err)
				}
			}
			at = stored{st: disk, off: disk.reserve(f.Size), size: f.Size}
			toRead = append(toRead, len(refs))
		}
		s.bySum[r.sum] = at
		r.at = at
		refs = append(refs, r)
	}
	for _, lp := range s.limits {
		for i := range lp.pages {
			if p := s.pagePath(lp.limit, i); !seen[p] {
				return nil, fmt.Errorf("%s: page %s is missing", manifest.Name, p)
			}
		}
	}
	if disk != nil {
		if fsys == nil {
			disk.discard()
			return nil, fmt.Errorf("page %s is neither in memory nor in a folder", refs[toRead[0]].file.Path)
		}
		if err := readFiles(fsys, refs, toRead); err != nil {
			disk.discard()
			return nil, err
		}
		if err := disk.seal(); err != nil {
			disk.discard()
			return nil, fmt.Errorf("mapping the pages: %w", err)
		}
	}
	s.read = len(toRead)
	if err := s.compact(slack); err != nil {
		return nil, err
	}

	lengths := map[int64][]string{}
	for _, r := range refs {
		s.pages++
		if r.li < 0 {
			continue // index.json: the same page as (default limit, 0)
		}
		at := s.bySum[r.sum]
		ln, ok := lengths[r.file.Size]
		if !ok {
			ln = []string{strconv.FormatInt(r.file.Size, 10)}
			lengths[r.file.Size] = ln
		}
		s.limits[r.li].pages[r.ix] = page{
			body:   at.st.bytes(at.off, at.size),
			st:     at.st,
			off:    at.off,
			etag:   []string{etag(r.sum[:])},
			length: ln,
		}
	}
	return s, nil
}

// compactSlack is how many bytes of bodies no longer used a site's stores
// may hold beyond as many as the bodies used.
const compactSlack = 8 << 20

// compact makes the site's list of stores and, when they hold more than
// twice the bytes of the bodies used plus slack (after many rebuilds that
// each changed a few pages), copies its bodies into a new store, so that
// the old ones can be freed.
func (s *site) compact(slack int64) error {
	held := map[*store]int64{} // bytes of bodies used, by store
	for _, at := range s.bySum {
		held[at.st] += at.size
	}
	var live, total int64
	for st, n := range held {
		live += n
		total += st.size
	}
	if total <= 2*live+slack {
		for st := range held {
			s.stores = append(s.stores, st)
		}
		return nil
	}
	st, err := newStore()
	if err != nil {
		return fmt.Errorf("allocating memory for the pages: %w", err)
	}
	moved := make(map[[sha256.Size]byte]stored, len(s.bySum))
	for sum, at := range s.bySum {
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
	s.bySum, s.stores = moved, []*store{st}
	return nil
}

// pagePath is the file of page i of limit l.
func (s *site) pagePath(l, i int) string {
	if s.aligned {
		i *= l
	}
	return listing.PagePath(listing.Dir, l, i)
}

// place maps a manifest path onto the page it holds: (limit index, page
// index), or li = -1 for the index page. ok is false for a path that is
// not a page of the main listing.
func (s *site) place(p string) (li, ix int, ok bool) {
	l, off, index, ok := listing.ParsePagePath(p)
	if !ok {
		return 0, 0, false
	}
	if index {
		return -1, 0, true
	}
	for i, lp := range s.limits {
		if lp.limit != l {
			continue
		}
		ix = off
		if s.aligned {
			if off%l != 0 {
				return 0, 0, false
			}
			ix = off / l
		}
		if ix >= len(lp.pages) {
			return 0, 0, false
		}
		return i, ix, true
	}
	return 0, 0, false
}

// canonical reads a decimal with no sign and no leading zeros that fits
// in 60 bits, as ParseQuery writes offsets.
func canonical(s string) (int, bool) {
	if s == "" || len(s) > 18 || (s[0] == '0' && len(s) > 1) {
		return 0, false
	}
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}

// readFiles reads the files refs[i] for every i in todo into their
// places, on several cores, checked against their sizes and SHA-256 sums.
// A file that differs gives a notReadyError.
func readFiles(fsys fs.FS, refs []fileRef, todo []int) error {
	var (
		next    atomic.Int64
		errOnce sync.Once
		first   error
		wg      sync.WaitGroup
	)
	for range max(2, runtime.GOMAXPROCS(0)) {
		wg.Go(func() {
			var buf []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= len(todo) {
					return
				}
				r := refs[todo[i]]
				data, err := manifest.ReadPage(fsys, r.file, buf)
				var mm *manifest.Mismatch
				switch {
				case errors.As(err, &mm):
					err = notReadyError{err}
				case err == nil:
					buf = data[:0]
					if err = r.at.st.writeAt(data, r.at.off); err != nil {
						err = fmt.Errorf("storing %s: %w", r.file.Path, err)
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
	return first
}

// etag returns the strong entity tag of a body with SHA-256 sum.
func etag(sum []byte) string {
	b := make([]byte, 0, 2+hex.EncodedLen(len(sum)))
	b = append(b, '"')
	b = hex.AppendEncode(b, sum)
	return string(append(b, '"'))
}

// lookup returns the limit's pages, or nil when the limit is not
// pre-rendered.
func (s *site) lookup(limit int) *limitPages {
	for i := range s.limits {
		if s.limits[i].limit == limit {
			return &s.limits[i]
		}
	}
	return nil
}

// emptyPage renders the page past the end for (limit, offset), offset a
// canonical decimal of any size.
func (s *site) emptyPage(limit int, offset string) page {
	body := listing.AppendEmptyPage(nil, s.baseURL, nil, s.count, limit, offset)
	sum := sha256.Sum256(body)
	return page{body: body, etag: []string{etag(sum[:])}, length: []string{strconv.Itoa(len(body))}}
}

// describe is a one-line description of the build, for the log.
func (s *site) describe() string {
	return fmt.Sprintf("build of %s (%d articles, %d pages, %s)",
		s.buildTime.UTC().Format(time.RFC3339), s.count, s.pages, human.Bytes(s.bytes))
}

// sameManifest reports whether data is the manifest s was loaded from.
func (s *site) sameManifest(data []byte) bool {
	return s != nil && sha256.Sum256(data) == s.manifestSum
}
