package feed

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/content"
)

// A Store is the JSON of the articles of a build, kept in a file beside
// its output for the next build, which then takes an unchanged article's
// JSON from it instead of parsing and encoding the article again (the
// build's cache of its sources records where each one is: a Loc). The
// file is a head (storeMagic and the store's id, 16 random bytes), then
// JSON: each article's at its Loc. A build whose pages are put together
// from the few that changed (chunks) appends the JSON of its new articles
// (see Spill.Keep); a build that reads them all (pages), or finds more
// than half of the store no longer used, writes a new one, in listing
// order.
//
// A Store never changes what is built: each article's JSON is checked
// against the SHA-256 its Loc records when it is read (ErrStoreDamaged).
type Store struct {
	file *spillFile // read through the page cache
	id   [16]byte
	size int64 // at open: what a build may read
}

// storeMagic starts every store file of this format.
const storeMagic = "feedgen encoded 1\n"

// storeHead is the length of a store's head.
const storeHead = len(storeMagic) + 16

// ErrStoreDamaged is the error of reading an article's JSON from a Store
// that is not what the build that wrote it left (see StoreError): the
// build is to be made again without the store.
var ErrStoreDamaged = errors.New("the JSON kept of an article changed since a build wrote it")

// A StoreError says which article's JSON in a Store is not what the
// build that wrote it left. It is ErrStoreDamaged.
type StoreError struct {
	Path string // the article's file, as content.Article.Path
}

func (e *StoreError) Error() string {
	return "the JSON kept of " + e.Path + " changed since a build wrote it"
}

func (e *StoreError) Is(target error) bool { return target == ErrStoreDamaged }

// OpenStore opens the store file name: an error when there is none, or
// it is not a store of this version.
func OpenStore(name string) (*Store, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	head := make([]byte, storeHead)
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s: not a regular file", name)
	}
	if err == nil {
		_, err = io.ReadFull(f, head)
	}
	if err == nil && string(head[:len(storeMagic)]) != storeMagic {
		err = fmt.Errorf("%s: not a store of encoded articles of this version", name)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	st := &Store{file: &spillFile{buffered: f}, size: info.Size()}
	copy(st.id[:], head[len(storeMagic):])
	return st, nil
}

// Close closes the store's file.
func (st *Store) Close() error {
	if st == nil {
		return nil
	}
	return st.file.buffered.Close()
}

// Tag returns what the cache that names Locs of st records of it: its id
// and its size.
func (st *Store) Tag() []byte { return storeTag(st.id, st.size) }

func storeTag(id [16]byte, size int64) []byte {
	return binary.AppendUvarint(append([]byte("encoded "), id[:]...), uint64(size))
}

// Matches reports whether tag, recorded by a cache, is st's: the same
// store, at least as long as it was then.
func (st *Store) Matches(tag []byte) bool {
	rest, ok := bytes.CutPrefix(tag, []byte("encoded "))
	if !ok || len(rest) < 16 || !bytes.Equal(rest[:16], st.id[:]) {
		return false
	}
	size, n := binary.Uvarint(rest[16:])
	return n > 0 && n == len(rest)-16 && int64(size) <= st.size
}

// A Loc is where an article's JSON is in a Store, and its SHA-256.
type Loc struct {
	Off int64
	Len int
	Sum [sha256.Size]byte
}

// AppendLoc appends l in the bytes a cache keeps (see ParseLoc).
func AppendLoc(b []byte, l Loc) []byte {
	b = binary.AppendUvarint(b, uint64(l.Off))
	b = binary.AppendUvarint(b, uint64(l.Len))
	return append(b, l.Sum[:]...)
}

// ParseLoc reads the bytes of AppendLoc.
func ParseLoc(b []byte) (Loc, bool) {
	off, n := binary.Uvarint(b)
	if n <= 0 {
		return Loc{}, false
	}
	b = b[n:]
	size, n := binary.Uvarint(b)
	if n <= 0 || len(b[n:]) != sha256.Size || off > 1<<62 || size > 1<<30 {
		return Loc{}, false
	}
	l := Loc{Off: int64(off), Len: int(size)}
	copy(l.Sum[:], b[n:])
	return l, true
}

// UseStore makes s take the JSON of articles added with AddStored from
// st. Call it before any Add.
func (s *Spill) UseStore(st *Store) { s.store = st }

// AddStored adds a, whose JSON is at loc in the Store given to UseStore,
// instead of encoding it (see Add); it returns false, adding nothing,
// when there is no store or loc is not in it.
func (s *Spill) AddStored(a *content.Article, loc Loc) bool {
	st := s.store
	if st == nil || loc.Len <= 0 || loc.Off < int64(storeHead) || loc.Off+int64(loc.Len) > st.size || a.Index < 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ref(a.Index, spilled{off: loc.Off, n: loc.Len, id: a.ID, sum: loc.Sum, stored: true}, a.Path)
	s.storedBytes += int64(loc.Len)
	return true
}

// PreferDirect says that the listing's pages are few of those a build
// could write (the chunks that changed): Listing then reads each article
// where it is rather than merging them all into a file in listing order,
// when s has a store mostly used.
func (s *Spill) PreferDirect() { s.preferDirect = true }

// direct reports whether Listing reads the articles where they are: a
// store of which at most half is no longer used, and the preference.
func (s *Spill) direct() bool {
	if !s.preferDirect || s.store == nil {
		return false
	}
	garbage := s.store.size - int64(storeHead) - s.storedBytes
	return garbage <= s.storedBytes
}

// directSrc is where each article of a listing read directly is: at
// at[i] of the store when stored[i], else of the Spill's raw file.
type directSrc struct {
	at     []int64
	stored []bool
	store  *os.File
	raw    *os.File
}

// appendDirect appends the JSON of the articles [i, j] of c, a main
// listing read directly, with commas between them, checking those from
// the store.
func (c *Collection) appendDirect(dst []byte, i, j int) ([]byte, error) {
	d := c.direct
	for k := i; k <= j; k++ {
		if k > i {
			dst = append(dst, ',')
		}
		n := c.end[k] - c.start[k]
		at := len(dst)
		dst = append(dst, make([]byte, n)...)
		f := d.raw
		if d.stored[k] {
			f = d.store
		}
		if _, err := f.ReadAt(dst[at:], d.at[k]); err != nil {
			if d.stored[k] {
				return dst[:at], &StoreError{Path: c.Articles[k].Path}
			}
			return dst[:at], fmt.Errorf("reading encoded articles: %w", err)
		}
		if d.stored[k] && sha256.Sum256(dst[at:]) != c.sums[k] {
			return dst[:at], &StoreError{Path: c.Articles[k].Path}
		}
	}
	return dst, nil
}

// Kept is where the JSON of each article of a listing is once Spill.Keep
// stored it, for the cache of the build that keeps it.
type Kept struct {
	main *Collection
	pos  []int32 // by content.Article.Index: 1 + its place in main; 0 for none
	// Article i of main is at head+start[i] of a store written anew (at
	// is nil), or at at[i] of the store it was read from, but for those
	// appended to it.
	head     int64
	at       []int64
	appended map[int]int64
	tag      []byte
}

// Loc returns where a's JSON is in the store, and whether it is there.
func (k *Kept) Loc(a *content.Article) (Loc, bool) {
	if a.Index < 0 || a.Index >= len(k.pos) || k.pos[a.Index] == 0 {
		return Loc{}, false
	}
	m, i := k.main, int(k.pos[a.Index]-1)
	l := Loc{Off: k.head + int64(m.start[i]), Len: m.end[i] - m.start[i], Sum: m.sums[i]}
	if k.at != nil {
		l.Off = k.at[i]
		if off, ok := k.appended[i]; ok {
			l.Off = off
		}
	}
	return l, true
}

// Tag returns what the cache records of the store (see Store.Matches).
func (k *Kept) Tag() []byte { return k.tag }

// Keep stores the JSON of the articles of l, the Listing of s, in the
// store file name, as the next build will find it: with a listing read
// directly from a store that is still the file name, it appends the
// articles not taken from it; otherwise it writes a new store, in listing
// order. Call it once the pages of l are written.
func (s *Spill) Keep(l *Listing, name string) (*Kept, error) {
	main := l.Main()
	k := &Kept{main: main}
	most := 0
	for _, a := range main.Articles {
		most = max(most, a.Index+1)
	}
	k.pos = make([]int32, most)
	for i, a := range main.Articles {
		k.pos[a.Index] = int32(i + 1)
	}
	if main.direct != nil {
		if ok, err := s.appendStore(main, name, k); ok || err != nil {
			return k, err
		}
	}
	return k, s.writeStore(l, name, k)
}

// appendStore appends to the store file name, when it is the one the
// listing main read, the JSON of main's articles that are not in it, and
// says where they are in k; false when it is another file.
func (s *Spill) appendStore(main *Collection, name string, k *Kept) (bool, error) {
	d := main.direct
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	info, err := f.Stat()
	was, werr := d.store.Stat()
	head := make([]byte, storeHead)
	if err != nil || werr != nil || !os.SameFile(info, was) || info.Size() < s.store.size {
		return false, nil
	}
	if _, err := f.ReadAt(head, 0); err != nil || !bytes.Equal(head[len(storeMagic):], s.store.id[:]) {
		return false, nil
	}
	end := info.Size()
	w := bufio.NewWriterSize(io.NewOffsetWriter(f, end), 1<<20)
	var buf []byte
	k.at, k.appended = d.at, map[int]int64{}
	for i := range main.Count() {
		if d.stored[i] {
			continue
		}
		n := main.end[i] - main.start[i]
		buf = grown(buf, n)
		if _, err := d.raw.ReadAt(buf, d.at[i]); err != nil {
			return true, fmt.Errorf("reading encoded articles: %w", err)
		}
		if _, err := w.Write(buf); err != nil {
			return true, fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
		}
		k.appended[i] = end
		end += int64(n)
	}
	// Not synced: a store is checked as it is read, and one that lost
	// what was appended in a crash costs a build that parses it all.
	if err := w.Flush(); err != nil {
		return true, fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
	}
	k.tag = storeTag(s.store.id, end)
	return true, nil
}

// grown returns b with length n, reusing its memory when it can.
func grown(b []byte, n int) []byte {
	if cap(b) < n {
		return make([]byte, n)
	}
	return b[:n]
}

// writeStore writes a new store file name, with a new id, holding the
// JSON of the articles of l's main listing in listing order (with a comma between two,
// as the file a merge writes holds them), and sets their Locs in k.
func (s *Spill) writeStore(l *Listing, name string, k *Kept) error {
	main := l.Main()
	var id [16]byte
	rand.Read(id[:])
	f, err := atomicfile.Create(name, 0o644)
	if err != nil {
		return fmt.Errorf("keeping the encoded articles: %w", err)
	}
	defer f.Abort()
	if _, err := f.Write(append([]byte(storeMagic), id[:]...)); err != nil {
		return fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
	}
	n := main.Count()
	var size int64
	if n > 0 {
		size = int64(main.end[n-1])
	}
	if main.file != nil {
		// The file the merge wrote, once it is whole: no page holds it
		// back now.
		l.ReleaseAll()
		s.merging.Wait()
		if err := s.stream.error(); err != nil {
			return err
		}
		if _, err := f.ReadFrom(io.NewSectionReader(main.file, 0, size)); err != nil {
			return fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
		}
	} else {
		w := bufio.NewWriterSize(f, 1<<20)
		var buf []byte
		for i := range n {
			buf = buf[:0]
			if i > 0 {
				buf = append(buf, ',')
			}
			var err error
			if buf, err = main.appendRange(buf, i, i); err != nil {
				return err
			}
			if _, err := w.Write(buf); err != nil {
				return fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
			}
		}
		if err := w.Flush(); err != nil {
			return fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
		}
	}
	k.head = int64(storeHead)
	if err := f.CommitUnsynced(); err != nil {
		return fmt.Errorf("keeping the encoded articles in %s: %w", name, err)
	}
	k.tag = storeTag(id, int64(storeHead)+size)
	return nil
}
