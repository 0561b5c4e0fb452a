package feed

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// storeSpecs are n articles of TestSpillSamePages's kind.
func storeSpecs(n int) []*content.Article {
	specs := make([]string, n)
	for i := range specs {
		specs[i] = fmt.Sprintf("s%d c%d a%d |t%d|all|", i%3, i%2, i%5, i%7)
	}
	articles := tagged(specs...)
	for i, a := range articles {
		a.Path = fmt.Sprintf("content/s/c/a%d.md", i)
	}
	return articles
}

// kept builds a listing of articles through a Spill that takes those
// fromStore says from st at the Locs k gives (the articles as the last
// build kept them), adding the others, and returns it with its Spill.
func kept(t *testing.T, st *Store, k *Kept, articles []*content.Article, fromStore func(i int) bool, direct bool) (*Listing, *Spill) {
	t.Helper()
	p := paging(3, 20)
	s, err := NewSpill(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	s.UseStore(st)
	if direct {
		s.PreferDirect()
	}
	for i, a := range articles {
		if fromStore(i) {
			loc, ok := k.Loc(a)
			if !ok || !s.AddStored(a, loc) {
				t.Fatalf("%s: not in the store", a.Path)
			}
			continue
		}
		s.Add(a)
	}
	l, err := s.Listing(base, p, listing.FilterNames(), articles)
	if err != nil {
		t.Fatal(err)
	}
	return l, s
}

// TestStoreSamePages checks that a listing whose articles' JSON is taken
// from the store the listing before it kept has a listing in memory's
// pages, byte for byte: read where they are (direct), or merged; and that
// what Keep then stores is found again by the next.
func TestStoreSamePages(t *testing.T) {
	const n = 500
	dir := t.TempDir()
	name := filepath.Join(dir, "store")
	first, s := spilledListing(t, t.TempDir(), paging(3, 20), listing.FilterNames(), storeSpecs(n))
	for _, pg := range first.Pages() {
		mustPage(t, first, pg) // as a build writes them: the merge goes on
	}
	k, err := s.Keep(first, name)
	if err != nil {
		t.Fatal(err)
	}
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprint("direct ", direct), func(t *testing.T) {
			// A copy of its own, which Keep appends to or replaces.
			own := filepath.Join(t.TempDir(), "store")
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			testWrite(t, own, data)
			st, err := OpenStore(own)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			if !st.Matches(k.Tag()) {
				t.Fatal("the store does not match the tag Keep gave")
			}
			// One article in ten edited (encoded again), the rest kept.
			want := New(base, paging(3, 20), listing.FilterNames(), articlesEdited(n))
			l, s := kept(t, st, k, articlesEdited(n), func(i int) bool { return i%10 != 0 }, direct)
			if got := l.Main().direct != nil; got != direct {
				t.Fatalf("read directly: %v, want %v", got, direct)
			}
			samePagesOf(t, l, want)
			// Kept again, then every article taken from it: the same
			// pages, the store appended to (direct) or written anew.
			k2, err := s.Keep(l, own)
			if err != nil {
				t.Fatal(err)
			}
			st2, err := OpenStore(own)
			if err != nil {
				t.Fatal(err)
			}
			defer st2.Close()
			if !st2.Matches(k2.Tag()) || (st2.id == st.id) != direct {
				t.Fatalf("the store kept again: matches its tag %v, the same store %v; want true, %v", st2.Matches(k2.Tag()), st2.id == st.id, direct)
			}
			again, _ := kept(t, st2, k2, articlesEdited(n), func(int) bool { return true }, true)
			samePagesOf(t, again, want)
		})
	}
}

func testWrite(t *testing.T, name string, data []byte) {
	t.Helper()
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// articlesEdited are storeSpecs(n) with one title in ten edited.
func articlesEdited(n int) []*content.Article {
	articles := storeSpecs(n)
	for i := 0; i < n; i += 10 {
		articles[i].Title += " edited"
	}
	return articles
}

// samePagesOf fails unless l has the pages of want, byte for byte.
func samePagesOf(t *testing.T, l, want *Listing) {
	t.Helper()
	got, w := l.Pages(), want.Pages()
	if len(got) != len(w) {
		t.Fatalf("got %d pages, want %d", len(got), len(w))
	}
	for i, pg := range got {
		if gp, wp := mustPage(t, l, pg), mustPage(t, want, w[i]); !bytes.Equal(gp, wp) {
			t.Fatalf("page %s:\ngot  %.300s\nwant %.300s", pg.Path, gp, wp)
		}
	}
}

// TestStoreDamaged checks that an article whose JSON in the store is not
// what its Loc says fails the pages that hold it with a StoreError, read
// directly or merged, rather than give other bytes.
func TestStoreDamaged(t *testing.T) {
	const n = 100
	name := filepath.Join(t.TempDir(), "store")
	first, s := spilledListing(t, t.TempDir(), paging(20), nil, storeSpecs(n))
	for _, pg := range first.Pages() {
		mustPage(t, first, pg)
	}
	k, err := s.Keep(first, name)
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	victim := storeSpecs(n)[42]
	loc, _ := k.Loc(victim)
	data[loc.Off+int64(loc.Len)/2] ^= 1
	testWrite(t, name, data)
	for _, direct := range []bool{true, false} {
		t.Run(fmt.Sprint("direct ", direct), func(t *testing.T) {
			st, err := OpenStore(name)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			l, _ := kept(t, st, k, storeSpecs(n), func(int) bool { return true }, direct)
			var failed error
			for _, pg := range l.Pages() {
				if _, err := l.AppendPage(nil, pg); err != nil {
					failed = err
				}
			}
			var se *StoreError
			if !errors.As(failed, &se) || !errors.Is(failed, ErrStoreDamaged) || se.Path != victim.Path {
				t.Errorf("got %v, want the StoreError of %q", failed, victim.Path)
			}
		})
	}
}
