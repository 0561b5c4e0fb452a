// Package feed turns articles into the pages of the paginated listing:
// their order and their exact JSON bytes. The listing's contract (links,
// paths, query) is package listing's.
package feed

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// Listing is every pre-rendered page of a site.
type Listing struct {
	BaseURL    string // no trailing slash
	Pagination listing.Pagination
	// Filters are the config's filters (names of listing.Filters),
	// whose collections follow the main listing in Collections, sorted by
	// folder.
	Filters     []string
	Collections []*Collection // the main listing first

	// cuts are Chunks and each chunk's ChunkInput, worked out once
	// (ChunkInputs): a build sizes its output, then plans its files.
	cutOnce sync.Once
	cuts    [][]Chunk
	inputs  [][][sha256.Size]byte
}

// Collection is one ordered list of articles with its own pages: the main
// listing, or a filtered one named by its query parameters.
type Collection struct {
	// Params are the filter parameters, sorted by key; none for the main listing.
	Params []listing.Param
	// Dir is the folder of its pages inside the output, e.g. "articles".
	Dir      string
	Articles []*content.Article
	count    int

	// A filtered collection holds the articles of main at the indexes idx
	// (ascending, so in listing order) and takes their JSON from main: an
	// article is encoded once for every collection. cum[i] is the length
	// of the JSON of its articles before i.
	main *Collection
	idx  []int
	cum  []int

	// chunks hold the encoded articles separated by commas (a chunk after
	// the first starts with one), so that the results of a page are one
	// slice of a chunk, or a few when they cross a chunk's end. Chunk k
	// holds the articles from lo[k]; start[i] and end[i] are offsets of
	// article i in its chunk.
	chunks [][]byte
	lo     []int
	start  []int
	end    []int
	// file, when set, holds the encoded articles instead of chunks (see
	// Spill): start and end are offsets in it.
	file *os.File
	// stream, when set, is file as it is written (see stream): the
	// articles are read from it.
	stream *stream
	// sums[i] is the SHA-256 of article i's JSON (PageInput).
	sums [][sha256.Size]byte
	// direct, when set, says where each article's JSON is instead of
	// file (see Spill.PreferDirect): start and end are where they would
	// be in a file in listing order.
	direct *directSrc
}

// Count is the number of articles in the collection.
func (c *Collection) Count() int { return c.count }

// New sorts articles newest first, encodes each of them once, and makes
// the main listing and a collection for each value of each filter (see
// listing.Filters) that an article has. articles is not modified.
func New(baseURL string, p listing.Pagination, filters []string, articles []*content.Article) *Listing {
	return Update(nil, baseURL, p, filters, articles)
}

// Update is New for a listing that follows prev (a rebuild): articles that
// are the same values as in prev (same pointers) keep their encoded bytes.
// prev may be nil.
func Update(prev *Listing, baseURL string, p listing.Pagination, filters []string, articles []*content.Article) *Listing {
	sorted := slices.Clone(articles)
	content.Sort(sorted)
	main := &Collection{Dir: listing.Dir, Articles: sorted, count: len(sorted)}
	var known map[*content.Article]int
	var pm *Collection
	if prev != nil {
		pm = prev.Main()
		known = make(map[*content.Article]int, pm.Count())
		for i, a := range pm.Articles {
			known[a] = i
		}
	}
	main.encode(pm, known)
	l := &Listing{BaseURL: baseURL, Pagination: p, Filters: filters, Collections: []*Collection{main}}
	l.Collections = append(l.Collections, main.filtered(filters, prevMembers(prev, filters, known))...)
	return l
}

// members says which collections of a listing each article of its main
// listing is in: those of article j are colls[from[j]:from[j+1]],
// indexes in the listing's Collections.
type members struct {
	l     *Listing
	known map[*content.Article]int // the index of an article in l's main listing
	from  []int32
	colls []int32
}

// prevMembers returns the collections of prev that each of its articles
// is in, for a listing of the same filters that follows it (known gives
// the index in prev's main listing of the articles of the new one that
// prev has): nil when there is no prev or its filters differ.
func prevMembers(prev *Listing, filters []string, known map[*content.Article]int) *members {
	if prev == nil || known == nil || !slices.Equal(prev.Filters, filters) {
		return nil
	}
	m := &members{l: prev, known: known, from: make([]int32, prev.Main().Count()+1)}
	for _, c := range prev.Collections[1:] {
		for _, j := range c.idx {
			m.from[j+1]++
		}
	}
	for j := 1; j < len(m.from); j++ {
		m.from[j] += m.from[j-1]
	}
	m.colls = make([]int32, m.from[len(m.from)-1])
	next := slices.Clone(m.from[:len(m.from)-1])
	for k, c := range prev.Collections[1:] {
		for _, j := range c.idx {
			m.colls[next[j]] = int32(k + 1)
			next[j]++
		}
	}
	return m
}

// filtered returns the collections of each value of each filter (named
// in listing.Filters) that an article of main has, sorted by folder.
// With prev, an article of prev's is in the collections of the same
// parameters as there: they are not worked out from its fields again
// (an article the same value has the same fields).
func (main *Collection) filtered(filters []string, prev *members) []*Collection {
	if len(filters) == 0 {
		return nil
	}
	byKey := map[string]*Collection{}
	var key []byte
	keyOf := func(params []listing.Param) []byte {
		key = key[:0]
		for _, p := range params {
			key = append(key, p.Key...)
			key = append(key, 0)
			key = append(key, p.Value...)
			key = append(key, 0)
		}
		return key
	}
	collectionOf := func(params []listing.Param) *Collection {
		k := keyOf(params)
		c := byKey[string(k)]
		if c == nil {
			c = &Collection{Params: params, Dir: listing.CollectionDir(params), main: main}
			byKey[string(k)] = c
		}
		return c
	}
	addTo := func(c *Collection, i int) {
		if n := len(c.idx); n == 0 || c.idx[n-1] != i { // a tag given twice counts once
			c.idx = append(c.idx, i)
		}
	}
	kinds := make([]listing.Filter, 0, len(filters))
	for _, name := range filters {
		if f, ok := listing.FilterNamed(name); ok {
			kinds = append(kinds, f)
		}
	}
	var same []*Collection // by index in prev's Collections: the collection of the same parameters
	if prev != nil {
		same = make([]*Collection, len(prev.l.Collections))
	}
	var at int // the index of the article whose collections add adds
	addAt := func(params ...listing.Param) { addTo(collectionOf(params), at) }
	for i, a := range main.Articles {
		if j, ok := prev.index(a); ok {
			for _, k := range prev.colls[prev.from[j]:prev.from[j+1]] {
				if same[k] == nil {
					same[k] = collectionOf(prev.l.Collections[k].Params)
				}
				addTo(same[k], i)
			}
			continue
		}
		at = i
		fields := a.Fields()
		for _, f := range kinds {
			f.Values(&fields, addAt)
		}
	}
	colls := make([]*Collection, 0, len(byKey))
	for _, c := range byKey {
		c.count = len(c.idx)
		c.Articles = make([]*content.Article, c.count)
		c.cum = make([]int, c.count+1)
		for j, i := range c.idx {
			c.Articles[j] = main.Articles[i]
			c.cum[j+1] = c.cum[j] + main.end[i] - main.start[i]
		}
		colls = append(colls, c)
	}
	slices.SortFunc(colls, func(a, b *Collection) int { return strings.Compare(a.Dir, b.Dir) })
	return colls
}

// index returns the index of article a in the main listing of m's
// listing, if it is there; a nil m has none.
func (m *members) index(a *content.Article) (int, bool) {
	if m == nil {
		return 0, false
	}
	j, ok := m.known[a]
	return j, ok
}

// Changes compares the articles of c, index by index, with those of prev
// and returns a prefix count: the articles at indexes [i, j) are the same
// bytes as prev's at the same indexes exactly when n[j]-n[i] == 0. It
// compares their SHA-256s, not their bytes (which may be in a file).
func (c *Collection) Changes(prev *Collection) []int {
	n := make([]int, c.Count()+1)
	for i := range c.Count() {
		d := 1
		if prev != nil && i < prev.Count() && *c.sum(i) == *prev.sum(i) {
			d = 0
		}
		n[i+1] = n[i] + d
	}
	return n
}

// Main returns the unfiltered listing.
func (l *Listing) Main() *Collection { return l.Collections[0] }

// ByDir returns the collections of l by folder.
func (l *Listing) ByDir() map[string]*Collection {
	m := make(map[string]*Collection, len(l.Collections))
	for _, c := range l.Collections {
		m[c.Dir] = c
	}
	return m
}

// encode writes every article's JSON and its SHA-256, taking both as
// they are for articles of prev (known gives their index there): in
// place where it can (see reuse), else on all cores, each core into its
// own chunk.
func (c *Collection) encode(prev *Collection, known map[*content.Article]int) {
	if prev != nil && c.reuse(prev, known) {
		return
	}
	n := len(c.Articles)
	c.start = make([]int, n)
	c.end = make([]int, n)
	c.sums = make([][sha256.Size]byte, n)
	workers := min(runtime.GOMAXPROCS(0), max(1, n/256))
	c.chunks = make([][]byte, workers)
	c.lo = make([]int, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*n/workers, (w+1)*n/workers
		c.lo[w] = lo
		wg.Add(1)
		go func() {
			defer wg.Done()
			size := 0
			for i := lo; i < hi; i++ {
				if j, ok := known[c.Articles[i]]; ok {
					size += len(prev.ArticleJSON(j)) + 1
				}
			}
			if size < (hi-lo)*64 {
				size = (hi - lo) * 1536
			}
			buf := make([]byte, 0, size)
			for i := lo; i < hi; i++ {
				if i > 0 {
					buf = append(buf, ',')
				}
				c.start[i] = len(buf)
				if j, ok := known[c.Articles[i]]; ok {
					buf = append(buf, prev.ArticleJSON(j)...)
					c.sums[i] = prev.sums[j]
				} else {
					buf = AppendArticle(buf, c.Articles[i])
					c.sums[i] = sha256.Sum256(buf[c.start[i]:])
				}
				c.end[i] = len(buf)
			}
			c.chunks[w] = buf
		}()
	}
	wg.Wait()
}

// Bounds of reuse: a run of prev's articles shorter than reuseRun is
// copied, and a listing of more than reuseChunks chunks (beyond those a
// listing written anew has, one a core) is written anew: its chunks
// whole again, prev's let go.
const (
	reuseRun    = 32
	reuseChunks = 64
)

// reuse makes c's chunks of prev's where its articles are prev's, in
// prev's order: a run of them that one of prev's chunks holds is that
// part of the chunk, not a copy; the other articles are written into
// chunks of their own. A rebuild after an edit or a new article so
// copies a few articles' bytes, not the listing's. It reports false, and
// leaves c to be written anew (on all cores), when prev's articles are
// not in memory, or half of c's are to be copied, or c would have more
// than reuseChunks chunks.
func (c *Collection) reuse(prev *Collection, known map[*content.Article]int) bool {
	n := len(c.Articles)
	if n == 0 || prev.chunks == nil || prev.file != nil || prev.stream != nil || prev.direct != nil {
		return false
	}
	most := reuseChunks + runtime.GOMAXPROCS(0)
	copied := 0 // articles written into chunks of their own
	start, end, sums := make([]int, n), make([]int, n), make([][sha256.Size]byte, n)
	var (
		chunks [][]byte
		lo     []int
		fresh  = -1 // the chunk being written, in chunks; -1: none
	)
	for i := 0; i < n; {
		j, ok := known[c.Articles[i]]
		r := 0 // the run of prev's articles from j, in prev's order and one chunk
		if ok {
			kp := prev.chunk(j)
			last := prev.count
			if kp+1 < len(prev.lo) {
				last = prev.lo[kp+1]
			}
			for r = 1; i+r < n && j+r < last; r++ {
				if jr, ok := known[c.Articles[i+r]]; !ok || jr != j+r {
					break
				}
			}
			// A chunk after the first starts with a comma: the one
			// before the run's first article, which the first of
			// prev's articles does not have.
			if r >= reuseRun && (i == 0 || j > 0) {
				from := prev.start[j]
				if i > 0 {
					from--
				}
				chunks = append(chunks, prev.chunks[kp][from:prev.end[j+r-1]:prev.end[j+r-1]])
				lo = append(lo, i)
				for t := range r {
					start[i+t], end[i+t], sums[i+t] = prev.start[j+t]-from, prev.end[j+t]-from, prev.sums[j+t]
				}
				i += r
				fresh = -1
				if len(chunks) > most {
					return false
				}
				continue
			}
		}
		// Half of them copied, or the first few hundred with none
		// taken: most are new (a new config, every file touched).
		if copied++; copied > n/2 || copied == i+1 && copied > 8*reuseRun {
			return false
		}
		if fresh < 0 {
			chunks = append(chunks, nil)
			lo = append(lo, i)
			fresh = len(chunks) - 1
			if len(chunks) > most {
				return false
			}
		}
		buf := chunks[fresh]
		if i > 0 {
			buf = append(buf, ',')
		}
		start[i] = len(buf)
		if ok {
			buf = append(buf, prev.ArticleJSON(j)...)
			sums[i] = prev.sums[j]
		} else {
			buf = AppendArticle(buf, c.Articles[i])
			sums[i] = sha256.Sum256(buf[start[i]:])
		}
		end[i] = len(buf)
		chunks[fresh] = buf
		i++
	}
	c.start, c.end, c.sums, c.chunks, c.lo = start, end, sums, chunks, lo
	return true
}

// chunk returns the index of the chunk that holds article i.
func (c *Collection) chunk(i int) int {
	k, found := slices.BinarySearch(c.lo, i)
	if !found {
		k--
	}
	return k
}

// ArticleJSON returns the encoded JSON of article i, in listing order;
// nil when it is in a file (see Spill) that cannot be read.
func (c *Collection) ArticleJSON(i int) []byte {
	if c.main != nil {
		return c.main.ArticleJSON(c.idx[i])
	}
	if c.file != nil || c.direct != nil {
		b, err := c.appendRange(nil, i, i)
		if err != nil {
			return nil
		}
		return b
	}
	return c.chunks[c.chunk(i)][c.start[i]:c.end[i]]
}

// appendRange appends the JSON of the articles [i, j] of a collection
// whose articles are in a file, with the commas between them.
func (c *Collection) appendRange(dst []byte, i, j int) ([]byte, error) {
	if c.direct != nil {
		return c.appendDirect(dst, i, j)
	}
	from, to := c.start[i], c.end[j]
	if c.stream != nil {
		return c.stream.appendAt(dst, int64(from), int64(to))
	}
	k := len(dst)
	dst = slices.Grow(dst, to-from)[:k+to-from]
	if _, err := c.file.ReadAt(dst[k:], int64(from)); err != nil {
		return dst[:k], fmt.Errorf("reading encoded articles: %w", err)
	}
	return dst, nil
}

// sum returns the SHA-256 of ArticleJSON(i).
func (c *Collection) sum(i int) *[sha256.Size]byte {
	if c.main != nil {
		return &c.main.sums[c.idx[i]]
	}
	return &c.sums[i]
}

// Page is one pre-rendered page: what it holds (for an index page, the
// default limit at offset 0) and its file.
type Page struct {
	Coll   *Collection
	Limit  int
	Offset int
	Index  bool   // the collection's index page
	Path   string // Key().Path(): slash-separated, relative to the output folder
}

// Key returns the page's key.
func (pg Page) Key() listing.PageKey {
	if pg.Index {
		return listing.PageKey{Dir: pg.Coll.Dir, Index: true}
	}
	return listing.PageKey{Dir: pg.Coll.Dir, Limit: pg.Limit, Offset: pg.Offset}
}

// Pages lists every page to write, in a stable order: per collection, its
// index page (main listing only), then each limit's offsets ascending.
func (l *Listing) Pages() []Page {
	var pages []Page
	p := l.Pagination
	for _, c := range l.Collections {
		for k := range p.Keys(c.Dir, c.Count(), c.main == nil) {
			pg := Page{Coll: c, Limit: k.Limit, Offset: k.Offset, Index: k.Index, Path: k.Path()}
			if k.Index {
				pg.Limit, pg.Offset = p.DefaultLimit, 0
			}
			pages = append(pages, pg)
		}
	}
	return pages
}

// Order returns the indices of pages in the order that reads the articles
// of the main listing front to back, once (see Release): collection by
// collection as Pages lists them, offsets ascending, and at one offset
// limits ascending.
func (l *Listing) Order(pages []Page) []int {
	coll := make(map[*Collection]int, len(l.Collections))
	for i, c := range l.Collections {
		coll[c] = i
	}
	order := make([]int, len(pages))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		a, b := pages[i], pages[j]
		if c := cmp.Compare(coll[a.Coll], coll[b.Coll]); c != 0 {
			return c
		}
		if c := cmp.Compare(a.Offset, b.Offset); c != 0 {
			return c
		}
		return cmp.Compare(a.Limit, b.Limit)
	})
	return order
}

// Release says that the pages before next in Order are written: the
// articles of the main listing before next's are read no more. The
// articles of a Spill's listing are merged in memory only so far ahead
// of what was released (see stream); other listings ignore it.
func (l *Listing) Release(next Page) {
	main := l.Main()
	if main.stream == nil {
		return
	}
	off := int64(math.MaxInt64)
	if next.Coll == main && next.Offset < main.Count() {
		off = int64(main.start[next.Offset])
	}
	main.stream.release(off)
}

// ReleaseAll is Release after the last page.
func (l *Listing) ReleaseAll() {
	if main := l.Main(); main.stream != nil {
		main.stream.release(math.MaxInt64)
	}
}

// appendResults appends the page's results, without brackets.
func (pg Page) appendResults(dst []byte) ([]byte, error) {
	c := pg.Coll
	if pg.Offset >= c.Count() {
		return dst, nil
	}
	last := min(pg.Offset+pg.Limit, c.Count()) - 1
	if c.main != nil && (c.main.file != nil || c.main.direct != nil) {
		// Articles next to each other in main are read at once.
		var err error
		for i := pg.Offset; i <= last && err == nil; {
			j := i
			for j < last && c.idx[j+1] == c.idx[j]+1 {
				j++
			}
			if i > pg.Offset {
				dst = append(dst, ',')
			}
			dst, err = c.main.appendRange(dst, c.idx[i], c.idx[j])
			i = j + 1
		}
		return dst, err
	}
	if c.main != nil {
		for i := pg.Offset; i <= last; i++ {
			if i > pg.Offset {
				dst = append(dst, ',')
			}
			dst = append(dst, c.ArticleJSON(i)...)
		}
		return dst, nil
	}
	if c.file != nil || c.direct != nil {
		return c.appendRange(dst, pg.Offset, last)
	}
	k, kl := c.chunk(pg.Offset), c.chunk(last)
	if k == kl {
		return append(dst, c.chunks[k][c.start[pg.Offset]:c.end[last]]...), nil
	}
	dst = append(dst, c.chunks[k][c.start[pg.Offset]:]...)
	for k++; k < kl; k++ {
		dst = append(dst, c.chunks[k]...)
	}
	return append(dst, c.chunks[kl][:c.end[last]]...), nil
}

// resultsSize is the length of the page's results.
func (pg Page) resultsSize() int {
	c := pg.Coll
	if pg.Offset >= c.Count() {
		return 0
	}
	last := min(pg.Offset+pg.Limit, c.Count()) - 1
	if c.main != nil {
		return c.cum[last+1] - c.cum[pg.Offset] + last - pg.Offset // and the commas
	}
	if c.file != nil || c.direct != nil {
		return c.end[last] - c.start[pg.Offset]
	}
	k, kl := c.chunk(pg.Offset), c.chunk(last)
	if k == kl {
		return c.end[last] - c.start[pg.Offset]
	}
	n := len(c.chunks[k]) - c.start[pg.Offset]
	for k++; k < kl; k++ {
		n += len(c.chunks[k])
	}
	return n + c.end[last]
}

// AppendPage appends the JSON of page pg to dst. The only error is that of
// reading articles kept in a file (see Spill).
func (l *Listing) AppendPage(dst []byte, pg Page) ([]byte, error) {
	dst = l.appendHead(dst, pg.Coll, pg.Limit, strconv.Itoa(pg.Offset))
	dst, err := pg.appendResults(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, "]}"...), nil
}

// PageInput returns a digest of what page pg is made of: its head (count
// and links) and the SHA-256 of each of its articles' JSON. Pages with the
// same input are the same bytes, so a build whose manifest recorded a
// page's input need not render the page again to know it is unchanged.
// scratch is reused memory, returned for the next call.
func (l *Listing) PageInput(pg Page, scratch []byte) ([sha256.Size]byte, []byte) {
	scratch = append(scratch[:0], pageInputVersion...)
	scratch = l.appendHead(scratch, pg.Coll, pg.Limit, strconv.Itoa(pg.Offset))
	c := pg.Coll
	if pg.Offset < c.Count() {
		for i := pg.Offset; i < min(pg.Offset+pg.Limit, c.Count()); i++ {
			scratch = append(scratch, c.sum(i)[:]...)
		}
	}
	return sha256.Sum256(scratch), scratch
}

// pageInputVersion starts every page input: a change to how pages are put
// together from heads and articles must change it.
const pageInputVersion = "feedgen page 1\n"

// PageSize is the exact length of the page's JSON, computed without
// rendering it.
func (l *Listing) PageSize(pg Page, scratch []byte) (int, []byte) {
	scratch = l.appendHead(scratch[:0], pg.Coll, pg.Limit, strconv.Itoa(pg.Offset))
	return len(scratch) + pg.resultsSize() + 2, scratch
}

// appendHead writes the head of page (limit, offset) of c, up to the
// opening bracket of its results.
func (l *Listing) appendHead(dst []byte, c *Collection, limit int, offset string) []byte {
	return listing.AppendHead(dst, l.BaseURL, c.Params, c.Count(), limit, offset)
}
