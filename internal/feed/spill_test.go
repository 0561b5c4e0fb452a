package feed

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// spilled returns the listing of articles made through a Spill in dir: the
// articles added from several goroutines in shuffled order and slimmed, as
// a build that bounds its memory does.
func spilledListing(t *testing.T, dir string, p listing.Pagination, filters []string, articles []*content.Article) (*Listing, *Spill) {
	t.Helper()
	return spilledWith(t, dir, spillSizes{}, p, filters, articles)
}

// spillSizes are the sizes of a Spill's runs, chunks and window, and
// whether its files go through the page cache; 0 and false keep those
// of NewSpill.
type spillSizes struct {
	run           int
	chunk, window int64
	buffered      bool
}

// small are spillSizes that make a few hundred articles many runs, chunks
// and windows.
var small = spillSizes{run: 8 << 10, chunk: blockSize, window: 2 * blockSize}

// spilledWith is spilledListing with a Spill of the given sizes.
func spilledWith(t *testing.T, dir string, sz spillSizes, p listing.Pagination, filters []string, articles []*content.Article) (*Listing, *Spill) {
	t.Helper()
	s, err := NewSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	if sz.run != 0 {
		s.run, s.chunk, s.window = sz.run, sz.chunk, sz.window
	}
	if sz.buffered {
		s.raw.close()
		if s.raw, err = newSpillFile(dir, false); err != nil {
			t.Fatal(err)
		}
		s.noDirect = true
	}
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(articles))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := w; k < len(order); k += 4 {
				a := articles[order[k]]
				s.Add(a)
				a.Slim(listing.Reads(filters))
			}
		})
	}
	wg.Wait()
	l, err := s.Listing(base, p, filters, articles)
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// TestSpillSamePages checks that a listing whose articles are in a Spill
// has the pages of one that keeps them in memory, byte for byte, with the
// same sizes and inputs: in the main listing and in filtered collections,
// with pages that cross the Spill's writes.
func TestSpillSamePages(t *testing.T) {
	specs := func(n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("s%d c%d a%d |t%d|all|", i%3, i%2, i%5, i%7))
		}
		return out
	}
	aligned := paging(3, 20)
	aligned.Offsets = listing.OffsetsAligned
	tests := []struct {
		name    string
		n       int
		p       listing.Pagination
		filters []string
	}{
		{"empty", 0, paging(20), nil},
		{"one", 1, paging(20), nil},
		{"every offset", 300, paging(3, 20), nil},
		{"filters", 700, paging(3, 20), listing.FilterNames()},
		{"aligned filters", 700, aligned, listing.FilterNames()},
		{"past one write", 2000, aligned, []string{"tag"}}, // > spillWrite bytes
	}
	sizes := []struct {
		name string
		spillSizes
	}{
		{"", spillSizes{}},
		{"/small", small},
		{"/small buffered", spillSizes{small.run, small.chunk, small.window, true}},
	}
	for _, tt := range tests {
		for _, sz := range sizes {
			t.Run(tt.name+sz.name, func(t *testing.T) {
				samePages(t, tt.n, tt.p, tt.filters, sz.spillSizes, specs)
			})
		}
	}
}

// samePages is TestSpillSamePages for one listing and one Spill's sizes.
func samePages(t *testing.T, n int, p listing.Pagination, filters []string, sz spillSizes, specs func(int) []string) {
	t.Helper()
	mem := New(base, p, filters, tagged(specs(n)...))
	l, _ := spilledWith(t, t.TempDir(), sz, p, filters, tagged(specs(n)...))
	want, got := mem.Pages(), l.Pages()
	if len(got) != len(want) {
		t.Fatalf("got %d pages, want %d", len(got), len(want))
	}
	var scratch []byte
	for i, pg := range got {
		gp, wp := mustPage(t, l, pg), mustPage(t, mem, want[i])
		if pg.Path != want[i].Path || !bytes.Equal(gp, wp) {
			t.Fatalf("page %s:\ngot  %.300s\nwant %s %.300s", pg.Path, gp, want[i].Path, wp)
		}
		var size int
		if size, scratch = l.PageSize(pg, scratch); size != len(gp) {
			t.Errorf("page %s: PageSize %d, rendered %d bytes", pg.Path, size, len(gp))
		}
		gi, _ := l.PageInput(pg, nil)
		wi, _ := mem.PageInput(want[i], nil)
		if gi != wi {
			t.Errorf("page %s: inputs differ", pg.Path)
		}
	}
	for i := range mem.Main().Count() {
		if g, w := l.Main().ArticleJSON(i), mem.Main().ArticleJSON(i); !bytes.Equal(g, w) {
			t.Fatalf("article %d: got %s, want %s", i, g, w)
		}
	}
}

// TestSpillInOrder checks what a build of a Spill's listing relies on:
// pages done in Order by several goroutines, each releasing what the
// pages before the first not done read, as the build's writer does, get
// the bytes of a listing in memory, while the merge holds no more than
// its window at once, and a few chunks: two past it for a page that
// waits, and those on their way to the file (mergeAll). Without filters
// and with one goroutine, almost no page reads the file: the merge stays
// ahead of the pages, but not so far that it lets go of what they read,
// however late the page it woke runs (a merge that ran on while that
// page had yet to run made 575 of 1,211 pages read the file on a busy
// machine; -test.cpu 1 shows it). With several, how many do depends on
// how the goroutines are scheduled: a page that waits lets the merge
// past its window, so a page behind it may miss what it reads.
func TestSpillInOrder(t *testing.T) {
	for _, filters := range [][]string{nil, listing.FilterNames()} {
		for _, workers := range []int{4, 1} {
			t.Run(fmt.Sprint(filters, workers), func(t *testing.T) { inOrder(t, filters, workers) })
		}
	}
}

func inOrder(t *testing.T, filters []string, workers int) {
	specs := make([]string, 3000)
	for i := range specs {
		specs[i] = fmt.Sprintf("s%d c%d a%d |t%d|all|", i%3, i%2, i%5, i%7)
	}
	p := paging(3, 20, 50)
	p.Offsets = listing.OffsetsAligned
	mem := New(base, p, filters, tagged(specs...))
	sz := spillSizes{run: 64 << 10, chunk: blockSize, window: 64 << 10}
	l, s := spilledWith(t, t.TempDir(), sz, p, filters, tagged(specs...))
	pages, want := l.Pages(), mem.Pages()
	order := l.Order(pages)
	got := make([][]byte, len(pages))
	var (
		mu   sync.Mutex
		done = make([]bool, len(pages))
		low  int
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range workers {
		wg.Go(func() {
			for {
				k := int(next.Add(1) - 1)
				if k >= len(order) {
					return
				}
				b, err := l.AppendPage(nil, pages[order[k]])
				if err != nil {
					t.Error(err)
				}
				got[order[k]] = b
				mu.Lock()
				done[k] = true
				for low < len(order) && done[low] {
					low++
				}
				if low < len(order) {
					l.Release(pages[order[low]])
				} else {
					l.ReleaseAll()
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	for i, pg := range want {
		if w := mustPage(t, mem, pg); !bytes.Equal(got[i], w) {
			t.Fatalf("page %s:\ngot  %.300s\nwant %.300s", pg.Path, got[i], w)
		}
	}
	st := s.stream
	st.mu.Lock()
	most, reread := st.most, st.reread
	st.mu.Unlock()
	t.Logf("%d of %d pages read the file", reread, len(pages))
	if filters == nil && workers == 1 && reread*20 > len(pages) {
		t.Errorf("%d of %d pages read the file, want almost none", reread, len(pages))
	}
	if limit := int(sz.window/sz.chunk) + 2 + 6; most > limit {
		t.Errorf("the stream held %d chunks at once, want at most %d", most, limit)
	}
	if most < 2 {
		t.Errorf("the stream held %d chunks at once: the listing is too small to test it", most)
	}
}

// TestSpillCloseStopsMerge checks that Close stops a merge that waits for
// pages to release what it merged, and that pages then fail rather than
// wait.
func TestSpillCloseStopsMerge(t *testing.T) {
	in := articles(2000)
	l, s := spilledWith(t, t.TempDir(), small, paging(20), nil, in)
	if err := s.Close(); err != nil { // returns only once the merge stopped
		t.Fatal(err)
	}
	pages := l.Pages()
	if _, err := l.AppendPage(nil, pages[len(pages)-1]); err == nil {
		t.Error("rendering the last page of a closed Spill: got no error")
	}
}

// TestSpillSortedWriteFails checks what a build sees when the file in
// listing order cannot be written (a full disk): the pages before the
// failure have their bytes, the others fail rather than wait or read what
// was never written, and Close returns.
func TestSpillSortedWriteFails(t *testing.T) {
	for _, sz := range []spillSizes{small, {run: small.run, chunk: small.chunk, window: small.window, buffered: true}} {
		t.Run(fmt.Sprintf("buffered=%v", sz.buffered), func(t *testing.T) {
			in := articles(2000)
			mem := New(base, paging(20), nil, articles(2000))
			l, s := spilledWith(t, t.TempDir(), sz, paging(20), nil, in)
			// The merge holds a window of a few chunks until pages
			// release them: what it writes next is written to a file
			// closed under it.
			s.sorted.buffered.Close()
			if s.sorted.direct != nil {
				s.sorted.direct.Close()
			}
			pages := l.Pages()
			order := l.Order(pages)
			failed := 0
			for k, i := range order {
				got, err := l.AppendPage(nil, pages[i])
				if err != nil {
					failed++
					continue
				}
				if k == len(order)-1 {
					// Far past the window: merged after the failure,
					// it was never written.
					t.Fatalf("the last page rendered although the file could not be written")
				}
				if want := mustPage(t, mem, pages[i]); !bytes.Equal(got, want) {
					t.Fatalf("page %s:\ngot  %.300s\nwant %.300s", pages[i].Path, got, want)
				}
				l.Release(pages[i])
			}
			if failed == 0 {
				t.Fatalf("all %d pages rendered from a file that could not be written", len(pages))
			}
			closed := make(chan error, 1)
			go func() { closed <- s.Close() }()
			select {
			case <-closed:
			case <-time.After(10 * time.Second):
				t.Fatal("Close did not return after the write failed")
			}
		})
	}
}

// TestOrder checks the order in which a build does the pages: by
// collection, then offset, then limit.
func TestOrder(t *testing.T) {
	p := paging(2, 3)
	p.DefaultLimit = 2
	l := New(base, p, []string{"section"}, tagged("s0 c0 a0 ||", "s1 c0 a0 ||", "s0 c0 a0 ||", "s0 c0 a0 ||"))
	pages := l.Pages()
	var got []string
	for _, i := range l.Order(pages) {
		got = append(got, pages[i].Path)
	}
	want := []string{
		"articles/index.json", "articles/2/0.json", "articles/3/0.json", "articles/2/1.json", "articles/3/1.json",
	}
	if len(got) < len(want) || !slices.Equal(got[:len(want)], want) {
		t.Errorf("got %q, want it to start %q", got, want)
	}
	if len(got) != len(pages) {
		t.Errorf("got %d pages, want %d", len(got), len(pages))
	}
}

// TestSpillLeavesNoFiles checks that a Spill's files have no name in its
// folder while it is open (a build that dies leaves nothing), and that
// Close frees them.
func TestSpillLeavesNoFiles(t *testing.T) {
	dir := t.TempDir()
	l, s := spilledListing(t, dir, paging(20), nil, articles(50))
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("got %d files in the folder, want none: %v", len(entries), entries)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := l.AppendPage(nil, l.Pages()[0]); err == nil {
		t.Error("rendering a page of a closed Spill: got no error")
	}
}

// TestSpillNotAdded checks that Listing refuses an article that was not
// added, or whose index is another's, rather than list it without its
// JSON or with another's.
func TestSpillNotAdded(t *testing.T) {
	tests := []struct {
		name  string
		add   []int       // of articles(3), in this order
		index map[int]int // Index given to some of them
	}{
		{name: "not added", add: []int{0, 2}},
		{name: "past the last index added", add: []int{0, 1}},
		{name: "index of another", add: []int{0, 2}, index: map[int]int{1: 2}},
		{name: "two added with one index", add: []int{0, 1, 2}, index: map[int]int{2: 0}},
		{name: "negative index", add: []int{0, 1, 2}, index: map[int]int{1: -1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := NewSpill(t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			in := articles(3)
			for i, idx := range tt.index {
				in[i].Index = idx
			}
			for _, i := range tt.add {
				s.Add(in[i])
			}
			if _, err := s.Listing(base, paging(20), nil, in); err == nil {
				t.Error("got no error")
			}
		})
	}
}

// TestSpillFallsBack checks that a folder that cannot be written in sends
// the files to the system's temporary folder.
func TestSpillFallsBack(t *testing.T) {
	s, err := NewSpill(filepath.Join(t.TempDir(), "missing"))
	if err != nil {
		t.Fatalf("got %v, want the system's temporary folder", err)
	}
	if got := filepath.Dir(s.raw.Name()); got != os.TempDir() {
		t.Errorf("got a file in %s, want %s", got, os.TempDir())
	}
	s.Close()
}

// TestStreamPacedOnceMerged checks that a page that waited lets the merge
// past its window only until the bytes it wanted are merged, not until
// the page runs again: on a busy machine that can be long after, and a
// merge that ran on meanwhile let go of what the page then read.
func TestStreamPacedOnceMerged(t *testing.T) {
	st := newStream(nil, blockSize, 2*blockSize)
	// A page waited for the first three chunks, one past the window, and
	// was woken: it has yet to run.
	st.waiting, st.needed = 1, 3*blockSize
	for range 3 {
		b, ok := st.chunk()
		if !ok {
			t.Fatal("the stream stopped")
		}
		st.add(b, blockSize)
	}
	next := make(chan bool)
	go func() {
		_, ok := st.chunk()
		next <- ok
	}()
	for paced := false; !paced; {
		select {
		case <-next:
			t.Fatal("the merge went on past its window, with no page waiting for bytes not merged")
		default:
		}
		st.mu.Lock()
		paced = st.paced
		st.mu.Unlock()
		runtime.Gosched()
	}
	st.release(2 * blockSize)
	if !<-next {
		t.Fatal("the stream stopped")
	}
	st.close()
}
