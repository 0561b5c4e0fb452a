package chunk

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/listing"
)

// LeafSuffix ends the name of a leaf's file: LeafPath.
const LeafSuffix = ".leaf.json"

// LeafPath returns the file of the leaf whose SHA-256 is sum, relative to
// the output folder: articles/chunks/<2 hex>/<64 lowercase hex>.leaf.json,
// beside the chunks (see ChunkPath), immutable as they are.
func LeafPath(sum [32]byte) string {
	return strings.TrimSuffix(ChunkPath(sum), ".json") + LeafSuffix
}

// ParseLeafPath reads a path as LeafPath writes it and returns the
// SHA-256 it names; ok is false for any other path.
func ParseLeafPath(p string) (sum [32]byte, ok bool) {
	c, found := strings.CutSuffix(p, LeafSuffix)
	if !found {
		return sum, false
	}
	return ParseChunkPath(c + ".json")
}

// IsLeaf reports whether p is a leaf's path.
func IsLeaf(p string) bool {
	_, ok := ParseLeafPath(p)
	return ok
}

// Root is the root of a collection's index, at IndexPath(dir): the
// collection's count and its leaves, in order.
type Root struct {
	Count  int
	Leaves []LeafRef
}

// LeafRef is one leaf of a root: its first article's position in the
// collection, its file and size, and how many articles it holds.
type LeafRef struct {
	First int
	Path  string
	Size  int
	Count int
}

// Leaf is a run of a collection's chunks, in order; the positions of
// its articles are counted from its first (the first chunk's first
// article is 0).
type Leaf struct {
	Count  int
	Chunks []Ref
}

// AppendRoot appends the root as JSON: compact, keys in this order, one
// leaf a line, each starting with {"first":N and ascending by it, as an
// assembler that cannot keep the root parsed (nginx's njs) bisects it:
//
//	{"format":3,"count":N,"leaves":[
//	{"first":0,"path":"articles/chunks/ab/ab….leaf.json","size":S,"count":C},
//	…]}
func AppendRoot(dst []byte, r *Root) []byte {
	dst = appendHead(dst, r.Count, "leaves")
	for i, l := range r.Leaves {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n"+`{"first":`...)
		dst = strconv.AppendInt(dst, int64(l.First), 10)
		dst = append(dst, `,"path":`...)
		dst = listing.AppendString(dst, l.Path)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(l.Size), 10)
		dst = append(dst, `,"count":`...)
		dst = strconv.AppendInt(dst, int64(l.Count), 10)
		dst = append(dst, '}')
	}
	return append(dst, "]}\n"...)
}

// AppendLeaf appends the leaf as JSON, as AppendRoot does a root, one
// chunk a line, its first counted from the leaf's first article:
//
//	{"format":3,"count":C,"chunks":[
//	{"first":0,"path":"articles/chunks/cd/cd….json","size":S,"ends":[…]},
//	…]}
func AppendLeaf(dst []byte, l *Leaf) []byte {
	dst = appendHead(dst, l.Count, "chunks")
	first := 0
	for i, r := range l.Chunks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n"+`{"first":`...)
		dst = strconv.AppendInt(dst, int64(first), 10)
		first += len(r.Ends)
		dst = append(dst, `,"path":`...)
		dst = listing.AppendString(dst, r.Path)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(r.Size), 10)
		dst = append(dst, `,"ends":[`...)
		for j, e := range r.Ends {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(e), 10)
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, "]}\n"...)
}

func appendHead(dst []byte, count int, list string) []byte {
	dst = append(dst, `{"format":`...)
	dst = strconv.AppendInt(dst, IndexFormat, 10)
	dst = append(dst, `,"count":`...)
	dst = strconv.AppendInt(dst, int64(count), 10)
	return append(dst, `,"`+list+`":[`...)
}

// FormatError is the error of reading an index (a root or a leaf) of
// another format than IndexFormat: written by another version of
// feedgen (format 2 and older: a flat index), never read as this one.
// Readers tell it from damage (errors.As) to say what to do: a build
// writes such an output again whole.
type FormatError struct {
	What   string // "chunk index", "chunk index leaf"
	Format string // the format found, as written
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("reading %s: chunk index format %s, not %d: written by another version of feedgen; rebuild the output (feedgen build)", e.What, e.Format, IndexFormat)
}

// checkFormat checks that data starts as an index of IndexFormat does:
// an index of another format (an older feedgen's build) is refused
// before it is read as this one (a *FormatError).
func checkFormat(what string, data []byte) error {
	head := []byte(`{"format":`)
	if !bytes.HasPrefix(data, head) {
		return fmt.Errorf("reading %s: not a chunk index (it does not start with %s)", what, head)
	}
	rest := data[len(head):]
	n := 0
	for n < len(rest) && n < 9 && '0' <= rest[n] && rest[n] <= '9' {
		n++
	}
	if f, err := strconv.Atoi(string(rest[:n])); err != nil || f != IndexFormat {
		return &FormatError{What: what, Format: string(rest[:n])}
	}
	return nil
}

// ParseRoot reads a root and checks that it is one AppendRoot could
// have written: its format, a leaf's path for every leaf, firsts that
// count the articles before each leaf, and a count that is their sum.
func ParseRoot(data []byte) (*Root, error) {
	if err := checkFormat("chunk index", data); err != nil {
		return nil, err
	}
	var raw struct {
		Format int `json:"format"`
		Count  int `json:"count"`
		Leaves []struct {
			First *int   `json:"first"`
			Path  string `json:"path"`
			Size  int    `json:"size"`
			Count int    `json:"count"`
		} `json:"leaves"`
	}
	if err := strictDecode(data, &raw); err != nil {
		return nil, fmt.Errorf("reading chunk index: %w", err)
	}
	r := &Root{Count: raw.Count, Leaves: make([]LeafRef, len(raw.Leaves))}
	n := 0
	for i, l := range raw.Leaves {
		switch {
		case l.First == nil || *l.First != n:
			return nil, fmt.Errorf("chunk index: leaf %d (%s): first is not %d, the number of articles before it", i, l.Path, n)
		case !IsLeaf(l.Path):
			return nil, fmt.Errorf("chunk index: leaf %d: %q is not a leaf's path", i, l.Path)
		case l.Count < 1:
			return nil, fmt.Errorf("chunk index: leaf %d (%s) holds no article", i, l.Path)
		case l.Size < 1:
			return nil, fmt.Errorf("chunk index: leaf %d (%s): size %d", i, l.Path, l.Size)
		}
		r.Leaves[i] = LeafRef{First: n, Path: l.Path, Size: l.Size, Count: l.Count}
		n += l.Count
	}
	if r.Count != n {
		return nil, fmt.Errorf("chunk index: count %d, but its leaves hold %d articles", r.Count, n)
	}
	return r, nil
}

// ParseLeaf reads a leaf and checks that it is one AppendLeaf could have
// written: its format, a chunk path for every chunk, firsts counted from
// the leaf's start, ends that ascend inside each chunk with room for an
// article ("{}") each, and a count that is the number of ends. It does
// not read the chunks: an assembler checks that the bytes at the ends
// are an article's (see CheckChunk).
func ParseLeaf(data []byte) (*Leaf, error) {
	if err := checkFormat("chunk index leaf", data); err != nil {
		return nil, err
	}
	raw, ok := scanLeaf(data)
	if !ok {
		// Not byte for byte what AppendLeaf writes: encoding/json reads
		// it, and says what is wrong with it.
		var err error
		if raw, err = decodeLeaf(data); err != nil {
			return nil, err
		}
	}
	return raw.check()
}

// rawLeaf is a leaf as read, before it is checked.
type rawLeaf struct {
	Format int          `json:"format"`
	Count  int          `json:"count"`
	Chunks []rawLeafRef `json:"chunks"`
}

type rawLeafRef struct {
	First *int `json:"first"`
	Ref
}

// decodeLeaf reads a leaf with encoding/json, strictly.
func decodeLeaf(data []byte) (rawLeaf, error) {
	var raw rawLeaf
	if err := strictDecode(data, &raw); err != nil {
		return rawLeaf{}, fmt.Errorf("reading chunk index leaf: %w", err)
	}
	return raw, nil
}

// check makes the leaf read, checking it (see ParseLeaf).
func (raw *rawLeaf) check() (*Leaf, error) {
	l := &Leaf{Count: raw.Count, Chunks: make([]Ref, len(raw.Chunks))}
	n := 0
	for i, rr := range raw.Chunks {
		r := rr.Ref
		l.Chunks[i] = r
		if rr.First == nil || *rr.First != n {
			return nil, fmt.Errorf("chunk index leaf: chunk %d (%s): first is not %d, the number of articles before it", i, r.Path, n)
		}
		if err := checkRef(&r); err != nil {
			return nil, fmt.Errorf("chunk index leaf: chunk %d: %w", i, err)
		}
		n += len(r.Ends)
	}
	if len(l.Chunks) == 0 || l.Count != n {
		return nil, fmt.Errorf("chunk index leaf: count %d, but its chunks hold %d articles", l.Count, n)
	}
	return l, nil
}

// scanLeaf reads a leaf written as AppendLeaf writes one, and nothing
// else (false): every leaf of a build, read by every build and publish,
// 70 MB of them at 1,000,000 articles, where encoding/json took seconds.
// What it reads is what decodeLeaf reads from the same bytes
// (FuzzScanLeaf).
func scanLeaf(data []byte) (rawLeaf, bool) {
	sc := leafScanner{data: data}
	var raw rawLeaf
	if !sc.lit(`{"format":`) || !sc.int(&raw.Format) || !sc.lit(`,"count":`) || !sc.int(&raw.Count) || !sc.lit(`,"chunks":[`) {
		return rawLeaf{}, false
	}
	// Ends are the most of a leaf: they share one array.
	ends := make([]int, 0, len(data)/6)
	for i := 0; !sc.lit("]}\n"); i++ {
		if i > 0 && !sc.lit(",") {
			return rawLeaf{}, false
		}
		first := new(int)
		var r rawLeafRef
		if !sc.lit("\n"+`{"first":`) || !sc.int(first) || !sc.lit(`,"path":"`) || !sc.str(&r.Path) ||
			!sc.lit(`,"size":`) || !sc.int(&r.Size) || !sc.lit(`,"ends":[`) {
			return rawLeaf{}, false
		}
		at := len(ends)
		for j := 0; !sc.lit("]}"); j++ {
			var e int
			if j > 0 && !sc.lit(",") || !sc.int(&e) {
				return rawLeaf{}, false
			}
			ends = append(ends, e)
		}
		r.First, r.Ends = first, ends[at:len(ends):len(ends)]
		raw.Chunks = append(raw.Chunks, r)
	}
	return raw, sc.at == len(data)
}

// leafScanner reads the bytes AppendLeaf writes, in order.
type leafScanner struct {
	data []byte
	at   int
}

// lit reads s, if it is next.
func (sc *leafScanner) lit(s string) bool {
	if !bytes.HasPrefix(sc.data[sc.at:], []byte(s)) {
		return false
	}
	sc.at += len(s)
	return true
}

// maxDigits is how many decimal digits an int always holds: 18 (9 where
// an int is 32 bits).
const maxDigits = (strconv.IntSize - 1) * 3 / 10

// int reads a number as strconv.AppendInt writes a non-negative one: no
// sign, no leading zero, at most maxDigits digits (no overflow; a larger
// number is left to encoding/json, which says it overflows).
func (sc *leafScanner) int(v *int) bool {
	d := sc.data[sc.at:]
	n := 0
	for n < len(d) && n <= maxDigits && '0' <= d[n] && d[n] <= '9' {
		n++
	}
	if n == 0 || n > maxDigits || n > 1 && d[0] == '0' {
		return false
	}
	x := 0
	for _, c := range d[:n] {
		x = x*10 + int(c-'0')
	}
	*v = x
	sc.at += n
	return true
}

// str reads the rest of a string after its opening quote, and the
// closing one: printable ASCII with no backslash, as a path of a build
// is. It leaves to encoding/json, to be safe, the characters
// listing.AppendString may write escaped (<, >, &), which no path has.
func (sc *leafScanner) str(v *string) bool {
	d := sc.data[sc.at:]
	for n, c := range d {
		switch {
		case c == '"':
			*v = string(d[:n])
			sc.at += n + 1
			return true
		case c < 0x20 || c > 0x7e || c == '\\' || c == '<' || c == '>' || c == '&':
			return false
		}
	}
	return false
}

// checkRef checks that r names a chunk, and that its ends ascend with
// room for an article each, the last just before its last byte.
func checkRef(r *Ref) error {
	if !IsChunk(r.Path) {
		return fmt.Errorf("%q is not a chunk's path", r.Path)
	}
	if len(r.Ends) == 0 {
		return fmt.Errorf("%s holds no article", r.Path)
	}
	at := 1
	for _, e := range r.Ends {
		if e < at+2 {
			return fmt.Errorf("%s: an article ends at %d, before its start %d and 2 bytes", r.Path, e, at)
		}
		at = e + 1
	}
	if at != r.Size {
		return fmt.Errorf("%s: its last article ends at %d, not before its last byte (size %d)", r.Path, at-1, r.Size)
	}
	return nil
}

func strictDecode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return fmt.Errorf("more than one JSON value")
	}
	return nil
}

// CheckLeaf checks that data, read for leaf l of a root, is that leaf:
// its size and its SHA-256, which its path names.
func CheckLeaf(l *LeafRef, data []byte) error {
	if len(data) != l.Size {
		return fmt.Errorf("leaf %s: %d bytes, the index says %d", l.Path, len(data), l.Size)
	}
	if sum, _ := ParseLeafPath(l.Path); sha256.Sum256(data) != sum {
		return fmt.Errorf("leaf %s: its bytes are not those its name is the SHA-256 of", l.Path)
	}
	return nil
}

// ReadIndex reads the index whose root's bytes are root, reading each of
// its leaves with read (the bytes of a file of the build, by path), and
// returns it flattened: every chunk, positions counted in the collection.
// Each leaf is checked (CheckLeaf, ParseLeaf) and must count the
// articles the root says.
func ReadIndex(root []byte, read func(path string) ([]byte, error)) (*Index, error) {
	r, err := ParseRoot(root)
	if err != nil {
		return nil, err
	}
	ix := &Index{Count: r.Count}
	for i := range r.Leaves {
		lr := &r.Leaves[i]
		data, err := read(lr.Path)
		if err != nil {
			return nil, fmt.Errorf("reading leaf %s: %w", lr.Path, err)
		}
		if err := CheckLeaf(lr, data); err != nil {
			return nil, err
		}
		l, err := ParseLeaf(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lr.Path, err)
		}
		if l.Count != lr.Count {
			return nil, fmt.Errorf("chunk index: leaf %s holds %d articles, the root says %d", lr.Path, l.Count, lr.Count)
		}
		ix.Chunks = append(ix.Chunks, l.Chunks...)
	}
	return ix, nil
}

// Tree cuts index ix into leaves where s says (LeafBoundary, the id of
// each chunk's last article in lastIDs; LeafMaxChunks), hands each
// leaf's path and bytes to put in order (the bytes are reused after put
// returns), and returns the root. The same chunks make the same leaves in
// any collection: a leaf is one file however many roots name it.
func (s Sizes) Tree(ix *Index, lastIDs []int64, put func(path string, sum [32]byte, data []byte) error) (*Root, error) {
	if len(lastIDs) != len(ix.Chunks) {
		return nil, fmt.Errorf("chunk tree: %d chunks, %d last ids", len(ix.Chunks), len(lastIDs))
	}
	r := &Root{Count: ix.Count}
	var buf []byte
	lo, first := 0, 0
	for k := range ix.Chunks {
		if k+1 < len(ix.Chunks) && !s.LeafBoundary(lastIDs[k]) && k+1-lo < s.LeafMaxChunks {
			continue
		}
		l := Leaf{Chunks: ix.Chunks[lo : k+1]}
		for _, c := range l.Chunks {
			l.Count += len(c.Ends)
		}
		buf = AppendLeaf(buf[:0], &l)
		sum := sha256.Sum256(buf)
		lr := LeafRef{First: first, Path: LeafPath(sum), Size: len(buf), Count: l.Count}
		if err := put(lr.Path, sum, buf); err != nil {
			return nil, err
		}
		r.Leaves = append(r.Leaves, lr)
		first += l.Count
		lo = k + 1
	}
	return r, nil
}
