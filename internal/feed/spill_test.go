package feed

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
)

// spilled returns the listing of articles made through a Spill in dir: the
// articles added from several goroutines in shuffled order and slimmed, as
// a build that bounds its memory does.
func spilledListing(t *testing.T, dir string, p config.Pagination, filters []string, articles []*content.Article) (*Listing, *Spill) {
	t.Helper()
	s, err := NewSpill(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	order := rand.New(rand.NewPCG(1, 2)).Perm(len(articles))
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for k := w; k < len(order); k += 4 {
				a := articles[order[k]]
				s.Add(a)
				a.Slim()
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
	aligned.Offsets = config.OffsetsAligned
	tests := []struct {
		name    string
		n       int
		p       config.Pagination
		filters []string
	}{
		{"empty", 0, paging(20), nil},
		{"one", 1, paging(20), nil},
		{"every offset", 300, paging(3, 20), nil},
		{"filters", 700, paging(3, 20), config.Filters()},
		{"aligned filters", 700, aligned, config.Filters()},
		{"past one write", 2000, aligned, []string{config.FilterTag}}, // > spillWrite bytes
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mem := New(base, tt.p, tt.filters, tagged(specs(tt.n)...))
			l, _ := spilledListing(t, t.TempDir(), tt.p, tt.filters, tagged(specs(tt.n)...))
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
		})
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
// added rather than list it without its JSON.
func TestSpillNotAdded(t *testing.T) {
	s, err := NewSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	in := articles(3)
	s.Add(in[0])
	s.Add(in[2])
	if _, err := s.Listing(base, paging(20), nil, in); err == nil {
		t.Error("got no error")
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
