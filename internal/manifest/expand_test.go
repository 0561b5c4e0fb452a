package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// TestChunksManifest checks that a manifest of the chunks layout lists
// its indexes and not its chunks, and that Read puts the chunks back,
// from the indexes that match it.
func TestChunksManifest(t *testing.T) {
	body := []byte(`[{"id":1}]`)
	sum := sha256.Sum256(body)
	cp := chunk.ChunkPath(sum)
	ix, leaves := chunktest.Tree(&chunk.Index{Count: 1, Chunks: []chunk.Ref{{Path: cp, Size: len(body), Ends: []int{9}}}})
	isum := sha256.Sum256(ix)
	var lp string
	for lp = range leaves {
	}
	lsum := sha256.Sum256(leaves[lp])
	m := &Manifest{
		Format: Format, Articles: 1,
		Pagination:  listing.Pagination{DefaultLimit: 1, MaxLimit: 1, Limits: []int{1}, Offsets: "all", Layout: layout.ChunksName},
		Collections: []Collection{{Dir: "articles", Count: 1}},
		Files: []File{
			{Path: "articles/chunks.json", Size: int64(len(ix)), SHA256: hex.EncodeToString(isum[:])},
			{Path: cp, Size: int64(len(body)), SHA256: hex.EncodeToString(sum[:])},
			{Path: lp, Size: int64(len(leaves[lp])), SHA256: hex.EncodeToString(lsum[:])},
		},
	}
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	data := m.Marshal()
	if strings.Contains(string(data), cp) || strings.Contains(string(data), lp) {
		t.Fatalf("the manifest lists the chunk or the leaf:\n%s", data)
	}
	fsys := fstest.MapFS{Name: {Data: data}, "articles/chunks.json": {Data: ix}, cp: {Data: body}, lp: {Data: leaves[lp]}}
	r, err := Read(fsys)
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Complete(); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(r.Files, m.Files) {
		t.Fatalf("read back %v, want %v", r.Files, m.Files)
	}
	if ps := r.Validate(); len(ps) > 0 {
		t.Fatal(ps)
	}

	// An index another build wrote since: named, and its chunks unknown.
	fsys["articles/chunks.json"] = &fstest.MapFile{Data: append(slices.Clone(ix[:len(ix)-2]), "]} "...)}
	if r, err = Read(fsys); err != nil {
		t.Fatal(err)
	}
	if err := r.Complete(); err == nil || len(r.Files) != 1 || !slices.Equal(r.Unmatched, []string{"articles/chunks.json"}) {
		t.Fatalf("an index that does not match: files %v, unmatched %v, %v", r.Files, r.Unmatched, err)
	}
}
