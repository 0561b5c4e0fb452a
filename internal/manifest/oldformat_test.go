package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"testing"
	"testing/fstest"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// TestOldIndexFormat reads the build of an older feedgen: its manifest
// names a format-2 index (chunks.json, flat) with its very bytes. Read
// names no chunk of it (unmatched: a build writes it again whole), and
// Complete says what it is, to rebuild, not that a build is being
// written (a *Mismatch, which a reader waits out).
func TestOldIndexFormat(t *testing.T) {
	body := []byte(`[{"id":1}]`)
	sum := sha256.Sum256(body)
	cp := chunk.ChunkPath(sum)
	ix := chunktest.FormatTwo(&chunk.Index{Count: 1, Chunks: []chunk.Ref{{Path: cp, Size: len(body), Ends: []int{9}}}})
	isum := sha256.Sum256(ix)
	m := &Manifest{
		Format: Format, Articles: 1,
		Pagination:  listing.Pagination{DefaultLimit: 1, MaxLimit: 1, Limits: []int{1}, Offsets: "all", Layout: layout.ChunksName},
		Collections: []Collection{{Dir: "articles", Count: 1}},
		Files:       []File{{Path: "articles/chunks.json", Size: int64(len(ix)), SHA256: hex.EncodeToString(isum[:])}},
	}
	r, err := Read(fstest.MapFS{Name: {Data: m.Marshal()}, "articles/chunks.json": {Data: ix}, cp: {Data: body}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Files) != 1 || !slices.Equal(r.Unmatched, []string{"articles/chunks.json"}) {
		t.Errorf("files %v, unmatched %v; want the index only, unmatched", r.Files, r.Unmatched)
	}
	err = r.Complete()
	const want = "articles/chunks.json: reading chunk index: chunk index format 2, not 3: written by another version of feedgen; rebuild the output (feedgen build)"
	var fe *chunk.FormatError
	var mm *Mismatch
	if err == nil || err.Error() != want || !errors.As(err, &fe) || errors.As(err, &mm) {
		t.Errorf("Complete: %v, want a chunk.FormatError: %q", err, want)
	}
}
