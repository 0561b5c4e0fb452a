package manifest

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/layout"
)

// Indexes are the indexes of a build of the chunks layout, read and
// checked against its manifest, to check each chunk against them as its
// bytes are read (Fits): what every reader that moves or keeps a build
// (bundle, verify, publish) checks before it trusts one, as the server
// does before it serves one. An index that fits its chunks is one that
// serving cuts into whole articles.
type Indexes struct {
	// refs are the chunks the indexes name, by path: each different
	// reference to a chunk once (the indexes of the collections that
	// share a chunk give it the same ends), with the first index that
	// gives it.
	refs map[string][]indexRef
}

type indexRef struct {
	index string
	ref   *chunk.Ref
}

// ErrReported is what ReadIndexes' read returns (wrapped or not) for a
// file whose problem its caller reports itself, as verify does for a file
// missing from a bundle: ReadIndexes skips that index, saying nothing.
var ErrReported = errors.New("reported by the caller")

// ReadIndexes reads the index of every collection of m (a manifest of
// the chunks layout, its chunks in Files: see Expand) with read, which
// returns the bytes of a file of the manifest (checked against its size
// and SHA-256, or an error), and checks each: it is an index, its root
// and its leaves (chunk.ReadIndex), counts its collection's articles, and names chunks
// that m lists with the size it gives them. Every problem comes back,
// named by its index ("corrupted: ..."); an index that cannot be read
// is one, with read's error, unless that is ErrReported. Of a manifest
// of the pages layout it reads nothing.
func ReadIndexes(m *Manifest, read func(File) ([]byte, error)) (*Indexes, diag.List) {
	return ReadIndexesOf(m, nil, read)
}

// ReadIndexesOf is ReadIndexes of the indexes whose path only accepts
// (all with only nil): those a publish uploads, say.
func ReadIndexesOf(m *Manifest, only func(index string) bool, read func(File) ([]byte, error)) (*Indexes, diag.List) {
	ix := &Indexes{refs: map[string][]indexRef{}}
	if !layout.Of(m.Pagination).Has(layout.Index) {
		return ix, nil
	}
	files := make(map[string]File, len(m.Files))
	for _, f := range m.Files {
		files[f.Path] = f
	}
	var ps diag.List
	for _, c := range m.Collections {
		name := chunk.IndexPath(c.Dir)
		if only != nil && !only(name) {
			continue
		}
		f, ok := files[name]
		if !ok {
			ps.Add(name, 0, "missing: the manifest lists its collection, not its index")
			continue
		}
		data, err := read(f)
		if errors.Is(err, ErrReported) {
			continue
		}
		if err != nil {
			ps.Add(name, 0, fmt.Sprintf("corrupted: %v", err))
			continue
		}
		parsed, err := chunk.ReadIndex(data, func(p string) ([]byte, error) {
			lf, ok := files[p]
			if !ok {
				return nil, errors.New("not in the manifest")
			}
			return read(lf)
		})
		if errors.Is(err, ErrReported) {
			continue
		}
		if err != nil {
			ps.Add(name, 0, fmt.Sprintf("corrupted: %v", err))
			continue
		}
		if parsed.Count != c.Count {
			ps.Add(name, 0, fmt.Sprintf("corrupted: it counts %d articles, the manifest %d", parsed.Count, c.Count))
		}
		for k := range parsed.Chunks {
			r := &parsed.Chunks[k]
			if cf, listed := files[r.Path]; !listed || cf.Size != int64(r.Size) {
				ps.Add(name, 0, fmt.Sprintf("corrupted: chunk %s is not in the manifest with %d bytes", r.Path, r.Size))
				continue
			}
			known := ix.refs[r.Path]
			if !slices.ContainsFunc(known, func(o indexRef) bool { return slices.Equal(o.ref.Ends, r.Ends) }) {
				ix.refs[r.Path] = append(known, indexRef{name, r})
			}
		}
	}
	return ix, ps
}

// Chunks returns the paths of the chunks the indexes name, sorted: each
// once, to read and check with Fits.
func (ix *Indexes) Chunks() []string {
	return slices.Sorted(maps.Keys(ix.refs))
}

// Fits checks data, the bytes of the file p, against every index that
// names it as a chunk (chunk.CheckChunk): its articles are where each
// says. The error names the first index that does not fit.
func (ix *Indexes) Fits(p string, data []byte) error {
	for _, o := range ix.refs[p] {
		if err := chunk.CheckChunk(o.ref, data); err != nil {
			return &Mismatch{Path: o.index, Reason: fmt.Sprintf("does not fit its chunks: %v", err)}
		}
	}
	return nil
}
