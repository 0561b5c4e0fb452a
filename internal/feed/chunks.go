package feed

import (
	"crypto/sha256"

	"github.com/feedgen/feedgen/internal/chunk"
)

// A Chunk is the articles [Lo, Hi) of a collection, stored as one chunk
// of the chunks layout (see package chunk).
type Chunk struct {
	Coll   *Collection
	Lo, Hi int
}

// Chunks cuts each collection into chunks of chunk.DefaultSizes, in the
// order of Collections: chunks[i] are those of Collections[i]. An empty
// collection has none.
func (l *Listing) Chunks() [][]Chunk { return l.ChunksSized(chunk.DefaultSizes()) }

// ChunkInputs returns Chunks and the ChunkInput of each chunk, worked
// out on the first call only: inputs[i][k] is that of chunks[i][k]. The
// caller must not change them.
func (l *Listing) ChunkInputs() (chunks [][]Chunk, inputs [][][sha256.Size]byte) {
	l.cutOnce.Do(func() {
		l.cuts = l.Chunks()
		l.inputs = make([][][sha256.Size]byte, len(l.cuts))
		var scratch []byte
		for i, cs := range l.cuts {
			l.inputs[i] = make([][sha256.Size]byte, len(cs))
			for k, ch := range cs {
				l.inputs[i][k], scratch = ChunkInput(ch, scratch)
			}
		}
	})
	return l.cuts, l.inputs
}

// ChunksSized is Chunks with other sizes: for measuring them.
func (l *Listing) ChunksSized(s chunk.Sizes) [][]Chunk {
	out := make([][]Chunk, len(l.Collections))
	for i, c := range l.Collections {
		out[i] = c.cut(s)
	}
	return out
}

// cut returns the chunks of c.
func (c *Collection) cut(s chunk.Sizes) []Chunk {
	var chunks []Chunk
	lo, size := 0, 1
	for i := range c.Count() {
		size += c.articleLen(i) + 1
		if i+1 == c.Count() || s.Boundary(c.Articles[i].ID) || i+1-lo >= s.MaxArticles ||
			size+c.articleLen(i+1)+1 > s.MaxBytes {
			chunks = append(chunks, Chunk{Coll: c, Lo: lo, Hi: i + 1})
			lo, size = i+1, 1
		}
	}
	return chunks
}

// articleLen is the length of the JSON of article i.
func (c *Collection) articleLen(i int) int {
	if c.main != nil {
		return c.cum[i+1] - c.cum[i]
	}
	return c.end[i] - c.start[i]
}

// page is the page whose results are the chunk's articles.
func (ch Chunk) page() Page {
	return Page{Coll: ch.Coll, Offset: ch.Lo, Limit: ch.Hi - ch.Lo}
}

// LastID is the id of the chunk's last article: where a leaf of an index
// may end (chunk.Sizes.LeafBoundary).
func (ch Chunk) LastID() int64 { return ch.Coll.Articles[ch.Hi-1].ID }

// Size is the length of the chunk's bytes.
func (ch Chunk) Size() int { return ch.page().resultsSize() + 2 }

// Ends returns the end of each article in the chunk's bytes (see
// chunk.Ref).
func (ch Chunk) Ends() []int {
	ends := make([]int, 0, ch.Hi-ch.Lo)
	at := 1
	for i := ch.Lo; i < ch.Hi; i++ {
		at += ch.Coll.articleLen(i)
		ends = append(ends, at)
		at++
	}
	return ends
}

// AppendChunk appends the chunk's bytes: its articles as a JSON array.
// The only error is that of reading articles kept in a file (see Spill).
func AppendChunk(dst []byte, ch Chunk) ([]byte, error) {
	dst = append(dst, '[')
	dst, err := ch.page().appendResults(dst)
	if err != nil {
		return dst, err
	}
	return append(dst, ']'), nil
}

// ChunkInput returns a digest of what the chunk is made of: the SHA-256
// of each of its articles' JSON. Chunks with the same input are the same
// bytes, whichever collection they are cut from.
func ChunkInput(ch Chunk, scratch []byte) ([sha256.Size]byte, []byte) {
	scratch = append(scratch[:0], chunkInputVersion...)
	for i := ch.Lo; i < ch.Hi; i++ {
		scratch = append(scratch, ch.Coll.sum(i)[:]...)
	}
	return sha256.Sum256(scratch), scratch
}

// chunkInputVersion starts every chunk input: a change to how chunks are
// made of articles must change it.
const chunkInputVersion = "feedgen chunk 1\n"
