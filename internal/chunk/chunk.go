// Package chunk owns the storage contract of the chunks layout
// (pagination.layout: chunks, docs/contract.md §12): where chunks and
// indexes are, what an index holds (Index, its one format AppendIndex
// and its one parse ParseIndex), and where a chunk ends (Boundary). The
// build writes chunks and indexes, the server and edge code assemble
// pages from them, publish, bundle and verify move and check them: all
// through this package.
//
// A chunk is a JSON array of consecutive articles of one collection, in
// listing order, exactly as they stand in a page's results:
// [{...},{...}]. Its file is named by the SHA-256 of its bytes
// (ChunkPath), so a chunk never changes once written: a collection that
// changes gets new chunks and a new index. An index, one per collection,
// is a tree of two levels (tree.go): a small root at IndexPath(dir), the
// collection's count and its leaves in order; and leaves, named by their
// SHA-256 as chunks are (LeafPath), each a run of the collection's chunks
// in order, with the end of every article in them. Positions in a leaf
// are counted from the leaf's first article, so that a new article at the
// top, or an edited or deleted one, changes its chunk, the one leaf that
// names it, and the root: what an assembler needs to cut the results of
// any (limit, offset) out of the chunks is the root and one leaf (two
// when the page runs past the leaf's end).
package chunk

import (
	"encoding/hex"
	"fmt"
	"strings"

	"github.com/feedgen/feedgen/internal/listing"
)

// Dir is the folder, inside the output folder, of every chunk of every
// collection: chunks are shared, one file for equal bytes. "chunks" is
// where a filter's name would be after listing.Dir (see
// listing.CollectionDir), so no filter may be named so (TestNoFilterNamedChunks).
const Dir = listing.Dir + "/chunks"

// IndexName is the file name of a collection's index in its folder: a
// name with a '.', which no key or value of a collection's folder has.
const IndexName = "chunks.json"

// IndexFormat is the version of the index's format, of its root and of
// its leaves. Format 2 gave each chunk's first article (its position in
// the collection), so that edge code can find a page's chunk without
// reading every line; format 3 is a tree: a root and leaves.
const IndexFormat = 3

// ChunkPath returns the file of the chunk whose SHA-256 is sum, relative
// to the output folder: articles/chunks/<2 hex>/<64 lowercase hex>.json,
// in one of 256 folders by its first byte, as git keeps its objects: a
// build creates its chunks on several cores, and files created at once in
// one folder wait for each other (the folder's lock); a million articles
// make tens of thousands of chunks.
func ChunkPath(sum [32]byte) string {
	b := make([]byte, 0, len(Dir)+4+64+5)
	b = append(b, Dir...)
	b = append(b, '/')
	b = hex.AppendEncode(b, sum[:1])
	b = append(b, '/')
	b = hex.AppendEncode(b, sum[:])
	b = append(b, ".json"...)
	return string(b)
}

// ChunkHex reads a path as ChunkPath writes it and returns the SHA-256
// it names in lowercase hex: a slice of p. ok is false for any other
// path.
func ChunkHex(p string) (h string, ok bool) {
	name, found := strings.CutPrefix(p, Dir+"/")
	if !found || len(name) < 3 || name[2] != '/' || !strings.HasPrefix(name[3:], name[:2]) {
		return "", false
	}
	h, found = strings.CutSuffix(name[3:], ".json")
	if !found || len(h) != 64 {
		return "", false
	}
	for i := 0; i < len(h); i++ {
		if c := h[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", false
		}
	}
	return h, true
}

// ParseChunkPath reads a path as ChunkPath writes it and returns the
// SHA-256 it names; ok is false for any other path.
func ParseChunkPath(p string) (sum [32]byte, ok bool) {
	h, ok := ChunkHex(p)
	if !ok {
		return sum, false
	}
	var b [64]byte
	hex.Decode(sum[:], b[:copy(b[:], h)])
	return sum, true
}

// IsChunk reports whether p is a chunk's path.
func IsChunk(p string) bool {
	_, ok := ChunkHex(p)
	return ok
}

// IndexPath returns the index of the collection in folder dir
// (listing.CollectionDir).
func IndexPath(dir string) string { return dir + "/" + IndexName }

// IsIndex reports whether p is a path IndexPath writes, for some folder
// inside listing.Dir (or listing.Dir itself).
func IsIndex(p string) bool {
	d, ok := strings.CutSuffix(p, "/"+IndexName)
	return ok && (d == listing.Dir || strings.HasPrefix(d, listing.Dir+"/")) && d != Dir && !strings.HasPrefix(d, Dir+"/")
}

// Index is one collection's index as an assembler uses it: its count and
// every chunk, in order (a root and its leaves flattened: see ReadIndex).
type Index struct {
	Count  int   `json:"count"`
	Chunks []Ref `json:"chunks"`
}

// Ref is one chunk of a collection, in listing order: its file, its size,
// and the end of each of its articles (the offset just past its closing
// brace). The first article starts at 1 (after the '['), each other one
// just past the ',' after the one before it; the last ends at Size-1
// (before the ']').
type Ref struct {
	Path string `json:"path"`
	Size int    `json:"size"`
	Ends []int  `json:"ends"`
}

// Start returns the start of article k of r.
func (r *Ref) Start(k int) int {
	if k == 0 {
		return 1
	}
	return r.Ends[k-1] + 1
}

// CheckChunk checks that data, the bytes of chunk r, are cut where r
// says: '[' first, ']' last, and every article between a '[' or ',' and
// a '}' followed by ',' or ']'. Assembled pages are then well formed
// wherever the articles are cut.
func CheckChunk(r *Ref, data []byte) error {
	if len(data) != r.Size {
		return fmt.Errorf("chunk %s: %d bytes, the index says %d", r.Path, len(data), r.Size)
	}
	if data[0] != '[' || data[len(data)-1] != ']' {
		return fmt.Errorf("chunk %s: not a JSON array", r.Path)
	}
	for k, e := range r.Ends {
		s := r.Start(k)
		if data[s] != '{' || data[e-1] != '}' || data[e] != ',' && data[e] != ']' || (data[e] == ']') != (k == len(r.Ends)-1) {
			return fmt.Errorf("chunk %s: article %d is not at %d..%d", r.Path, k, s, e)
		}
	}
	return nil
}

// Sizes are the sizes of chunks: where a chunk ends is content-defined
// (after an article whose id hashes to 0 modulo Average, so about one
// article in Average, whatever the articles around it), unless it ends
// sooner for being full (MaxArticles articles, or MaxBytes bytes unless
// one article is more). Where chunks end follows the articles, not
// positions: a new, edited or deleted article changes the chunk that
// holds it, and no other (but when it fills its chunk past a maximum,
// the one after it).
type Sizes struct {
	Average     int // articles, on average
	MaxArticles int // articles, at most
	MaxBytes    int // bytes, at most, unless one article is more
	// A leaf of an index ends after a chunk whose last article's id
	// hashes to 0 modulo Average*LeafAverage (always a chunk's end
	// too: about one chunk in LeafAverage), or when it holds
	// LeafMaxChunks chunks.
	LeafAverage   int
	LeafMaxChunks int
}

// DefaultSizes are the sizes of every build (measured in
// docs/performance.md, "Chunk sizes"): a page of 100 articles needs about
// 4 chunks, and a new article republishes about 32 articles in each
// collection it joins.
//
// A leaf of 128 chunks on average (about 4,096 articles, 40 KB) keeps
// both what one new article republishes (its leaf, in each collection
// it joins) and the root (about 120 bytes a leaf: 30 KB at a million
// articles) small: an assembler reads the root and a leaf, and their sum
// is least for leaves of about the square root of 12 times the articles.
func DefaultSizes() Sizes {
	return Sizes{Average: 32, MaxArticles: 256, MaxBytes: 1 << 20, LeafAverage: 128, LeafMaxChunks: 512}
}

// Boundary reports whether a chunk ends after the article with this id,
// full or not.
func (s Sizes) Boundary(id int64) bool {
	return mix(id)%uint64(s.Average) == 0
}

// LeafBoundary reports whether a leaf ends after the chunk whose last
// article has this id, full or not: when Boundary does, so always at a
// chunk's end, about one chunk in LeafAverage.
func (s Sizes) LeafBoundary(id int64) bool {
	return mix(id)%uint64(s.Average*s.LeafAverage) == 0
}

// mix hashes an article's id.
func mix(id int64) uint64 {
	x := uint64(id)
	// splitmix64's finalizer: every bit of the id moves every bit of x.
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}
