// Package chunktest writes the index of a collection for tests: a root
// and its leaves (chunk.Sizes.Tree), from chunks given by hand.
package chunktest

import (
	"bytes"

	"github.com/feedgen/feedgen/internal/chunk"
)

// Tree returns the root of index ix as one leaf of every chunk, and the
// files of the tree (the leaf, by path; none for an empty index).
func Tree(ix *chunk.Index) (root []byte, leaves map[string][]byte) {
	return TreeOf(ix, len(ix.Chunks)+1)
}

// TreeOf is Tree with leaves of at most max chunks (no leaf ends before
// it is full).
func TreeOf(ix *chunk.Index, max int) (root []byte, leaves map[string][]byte) {
	s := chunk.Sizes{Average: 1, LeafAverage: 1 << 62, LeafMaxChunks: max}
	ids := make([]int64, len(ix.Chunks))
	for i := range ids {
		// Ids no leaf ends after (chunk.Sizes.LeafBoundary): the 1 in
		// 2^62 that would is skipped.
		for ids[i] = int64(i) + 1; s.LeafBoundary(ids[i]); ids[i] += 1 << 32 {
		}
	}
	leaves = map[string][]byte{}
	r, err := s.Tree(ix, ids, func(p string, _ [32]byte, data []byte) error {
		leaves[p] = bytes.Clone(data)
		return nil
	})
	if err != nil {
		panic(err) // as many ids as chunks
	}
	return chunk.AppendRoot(nil, r), leaves
}
