package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/outfile"
)

// Validate checks what every reader of a build relies on in its manifest,
// before it reads a page or sizes anything by the manifest's numbers:
// pagination with positive sorted limits that include the default and the
// maximum, a known offsets mode, the main listing among the collections,
// every page listed once by a clean relative path with a size and a
// SHA-256, and every page each collection's count calls for listed (so
// that a count is never larger than the pages behind it). Each problem
// names Name.
func (m *Manifest) Validate() diag.List {
	var ps diag.List
	add := func(format string, args ...any) { ps.Add(Name, 0, fmt.Sprintf(format, args...)) }
	p := m.Pagination
	l := layout.Of(p)
	pagingOK := true
	if err := checkPaging(p); err != nil {
		add("%v", err)
		pagingOK = false
	}
	main := false
	for _, c := range m.Collections {
		if c.Dir == listing.Dir && len(c.Params) == 0 {
			main = true
			if c.Count != m.Articles {
				add("collection %q counts %d articles, the manifest %d: it changed since a build wrote it; run feedgen build, which writes it again", c.Dir, c.Count, m.Articles)
			}
		}
	}
	if !main {
		add("no collection %q", listing.Dir)
	}
	kinds := map[string]bool{}
	for _, f := range m.Filters {
		k := listing.FilterKind(f)
		switch {
		case !slices.Contains(listing.FilterNames(), f):
			add("filter %q: not one of %s", f, strings.Join(listing.FilterNames(), ", "))
		case kinds[k]:
			add("filter %q: listed twice", f)
		}
		kinds[k] = true
	}
	dirs := make(map[string]bool, len(m.Collections))
	for _, c := range m.Collections {
		if msg := checkCollection(c, kinds); msg != "" {
			add("collection %q: %s", c.Dir, msg)
		} else if dirs[c.Dir] {
			add("collection %q: listed twice", c.Dir)
		}
		dirs[c.Dir] = true
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		switch msg := CheckPath(f.Path); {
		case msg != "":
			add("page %q: %s", f.Path, msg)
		case strings.HasSuffix(f.Path, "/"):
			add("page %q: a folder, not a file", f.Path)
		case seen[f.Path]:
			add("page %s: listed twice", f.Path)
		case f.Size < 0 || !isSHA256(f.SHA256):
			add("page %s: bad size or sha256", f.Path)
		case f.Size > MaxPageSize:
			add("page %s: %d bytes, more than any page feedgen writes (%d)", f.Path, f.Size, MaxPageSize)
		case !pagingOK:
		default:
			if msg := l.CheckFile(f.Path, f.Sum()); msg != "" {
				add("%s %s: %s", layout.Classify(f.Path), f.Path, msg)
			}
		}
		seen[f.Path] = true
	}
	if l.Has(layout.Index) {
		for _, c := range m.Collections {
			if ix := chunk.IndexPath(c.Dir); !seen[ix] {
				add("collection %q: its chunk index %s is not listed", c.Dir, ix)
			}
		}
		return ps
	}
	if pagingOK && len(ps) == 0 {
		for _, c := range m.Collections {
			if path, n := missingPage(c, p, seen); path != "" {
				add("collection %q of %s: page %s is not listed (%s missing)", c.Dir, human.Plural(c.Count, "article"), path, human.Plural(n, "page"))
			}
		}
	}
	return ps
}

// checkCollection says what is wrong with collection c of a build whose
// filters select the collection kinds of kinds; "" when nothing is.
func checkCollection(c Collection, kinds map[string]bool) string {
	if len(c.Params) == 0 {
		if c.Dir != listing.Dir {
			return fmt.Sprintf("no parameters, so its folder must be %q", listing.Dir)
		}
		return ""
	}
	for i, p := range c.Params {
		switch {
		case !slices.Contains(listing.FilterKeys(), p.Key):
			return fmt.Sprintf("parameter %q is not a filter", p.Key)
		case p.Value == "":
			return fmt.Sprintf("parameter %q is empty", p.Key)
		case i > 0 && c.Params[i-1].Key >= p.Key:
			return "parameters not sorted by key, or one given twice"
		}
	}
	if k := listing.Kind(c.Params); !kinds[k] {
		return fmt.Sprintf("filtered by %s, which no filter of the manifest pre-renders", k)
	}
	if want := listing.CollectionDir(c.Params); c.Dir != want {
		return fmt.Sprintf("its folder must be %q", want)
	}
	return ""
}

// missingPage returns the first page of collection c that is not in listed,
// and how many are missing; "" when none is. A count larger than the pages
// listed is found without walking more pages than there are listed.
func missingPage(c Collection, p listing.Pagination, listed map[string]bool) (string, int) {
	if c.Count < 0 {
		return listing.PageKey{Dir: c.Dir, Limit: p.DefaultLimit}.Path(), 1
	}
	main := c.Dir == listing.Dir && len(c.Params) == 0
	first, missing, walked := "", 0, 0
	for k := range p.Keys(c.Dir, c.Count, main) {
		walked++
		if path := k.Path(); !listed[path] {
			if first == "" {
				first = path
			}
			missing++
		}
		if missing > 0 && walked > len(listed) {
			// More pages than the manifest lists: count the rest.
			return first, missing + (pages(p, c.Count, main) - walked)
		}
	}
	return first, missing
}

// pages returns how many pages a collection of count articles has (at
// most MaxInt).
func pages(p listing.Pagination, count int, main bool) int {
	n := 0
	if main {
		n = 1 // index.json
	}
	for _, l := range p.Limits {
		m := p.Pages(count, l)
		if m > math.MaxInt-n {
			return math.MaxInt
		}
		n += m
	}
	return n
}

// MaxPageSize bounds the size of one page: far more than the largest
// limit of the largest articles, far less than a reader could not hold.
const MaxPageSize = 256 << 20

// checkPaging checks the pagination a server answers with.
func checkPaging(p listing.Pagination) error {
	if len(p.Limits) == 0 || !slices.IsSorted(p.Limits) || p.Limits[0] <= 0 {
		return fmt.Errorf("bad limits %v", p.Limits)
	}
	if !p.HasLimit(p.DefaultLimit) || !p.HasLimit(p.MaxLimit) && !layout.Of(p).EveryPage {
		return fmt.Errorf("default_limit %d or max_limit %d is not one of limits %v", p.DefaultLimit, p.MaxLimit, p.Limits)
	}
	if p.Offsets != listing.OffsetsAll && p.Offsets != listing.OffsetsAligned {
		return fmt.Errorf("unknown offsets mode %q", p.Offsets)
	}
	if _, ok := layout.Named(p.Layout); !ok {
		return fmt.Errorf("unknown layout %q: a newer feedgen wrote it?", p.Layout)
	}
	return nil
}

// CheckPath says what is wrong with a page path, or "" when it is a clean
// relative path: slash-separated, no "." or ".." element, not absolute, no
// backslash, no control character, valid UTF-8.
func CheckPath(name string) string {
	switch {
	case name == "":
		return "empty name"
	case strings.HasPrefix(name, "/"):
		return "absolute path: entries must be relative to the archive"
	case len(name) >= 2 && name[1] == ':' && ('a' <= name[0]|0x20 && name[0]|0x20 <= 'z'):
		return "absolute path (a drive letter): entries must be relative to the archive"
	case strings.Contains(name, `\`):
		return `backslash in the name: entries must use forward slashes`
	}
	for _, el := range strings.Split(name, "/") {
		if el == ".." {
			if c := path.Clean(name); c == ".." || strings.HasPrefix(c, "../") {
				return "the name leads outside the archive (..)"
			}
			return "not a clean relative path (a .. element)"
		}
	}
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c == 0x7f {
			return "control character in the name"
		}
	}
	if p := strings.TrimSuffix(name, "/"); p == "." || !fs.ValidPath(p) {
		return "not a clean relative path (an empty or . element)"
	}
	if !utf8.ValidString(name) {
		return "the name is not valid UTF-8"
	}
	return ""
}

// isSHA256 reports whether s is a SHA-256 in lowercase hexadecimal.
func isSHA256(s string) bool {
	if len(s) != 2*sha256.Size {
		return false
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// Sum returns the SHA-256 the manifest records for f. Call it on a
// validated manifest.
func (f File) Sum() [sha256.Size]byte {
	var sum [sha256.Size]byte
	hex.Decode(sum[:], []byte(f.SHA256))
	return sum
}

// Mismatch says that a page is not what the manifest records: the output
// changed since the manifest was written (a build is being written, or
// died), or an archive is damaged.
type Mismatch struct {
	Path   string
	Reason string // "missing", "shorter than the manifest says", ...
}

func (e *Mismatch) Error() string { return e.Path + ": " + e.Reason }

// UnfitAdvice ends the error of a command (cmd: "publish", "bundle")
// that refuses a build of the chunks layout whose indexes do not agree
// with its chunks or its manifest (the problems of ReadIndexes, the error
// of Indexes.Fits): a plain feedgen build writes such an index again.
func UnfitAdvice(cmd string) string {
	return "run feedgen build (it writes such an index again), and " + cmd + " once it is done"
}

// NotRegular is the Mismatch of page p, a file of mode m that is not a
// regular file.
func NotRegular(p string, m fs.FileMode) *Mismatch {
	return &Mismatch{p, "not a regular file (" + outfile.Kind(m) + ")"}
}

// ReadPage reads the page f from fsys and checks it against the size and
// SHA-256 the manifest records: a file that is missing, shorter, longer,
// of other bytes, or not a regular file (one a build did not write, which
// the next build replaces) gives a *Mismatch. An fsys of an output folder
// (outfile.DirFS, RootFS) refuses what is not a regular file before it is
// opened: a named pipe would block the open. buf is reused when it has
// room.
func ReadPage(fsys fs.FS, f File, buf []byte) ([]byte, error) {
	r, err := fsys.Open(f.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, &Mismatch{f.Path, "missing"}
	}
	var nr *outfile.NotRegularError
	if errors.As(err, &nr) {
		return nil, NotRegular(f.Path, nr.Mode)
	}
	if err != nil {
		return nil, fmt.Errorf("reading page: %w", err)
	}
	defer r.Close()
	info, err := r.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading page: %w", err)
	}
	if !info.Mode().IsRegular() {
		return nil, NotRegular(f.Path, info.Mode())
	}
	switch {
	case info.Size() < f.Size:
		return nil, &Mismatch{f.Path, "shorter than the manifest says"}
	case info.Size() > f.Size:
		return nil, &Mismatch{f.Path, "longer than the manifest says"}
	}
	return ReadChecked(r, f, buf)
}

// ReadChecked reads r to its end (io.EOF), expecting the bytes of page f: exactly
// f.Size of them with the SHA-256 the manifest records, or a *Mismatch.
// buf is reused when it has room. It reads at most f.Size+1 bytes.
func ReadChecked(r io.Reader, f File, buf []byte) ([]byte, error) {
	if int64(cap(buf)) < f.Size+1 {
		buf = make([]byte, f.Size+1)
	}
	data := buf[:f.Size+1]
	n := 0
	for n < len(data) {
		k, err := r.Read(data[n:])
		n += k
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("reading page %s: %w", f.Path, err)
		}
	}
	switch {
	case int64(n) < f.Size:
		return nil, &Mismatch{f.Path, "shorter than the manifest says"}
	case int64(n) > f.Size:
		return nil, &Mismatch{f.Path, "longer than the manifest says"}
	}
	data = data[:f.Size]
	if sha256.Sum256(data) != f.Sum() {
		return nil, &Mismatch{f.Path, "its SHA-256 differs from the manifest"}
	}
	return data, nil
}
