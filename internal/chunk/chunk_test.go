package chunk

import (
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/listing"
)

func TestChunkPath(t *testing.T) {
	sum := sha256.Sum256([]byte("[{}]"))
	p := ChunkPath(sum)
	if !strings.HasPrefix(p, "articles/chunks/"+p[16:18]+"/"+p[16:18]) || len(p) != len("articles/chunks/ab/")+64+len(".json") {
		t.Fatalf("ChunkPath = %q", p)
	}
	got, ok := ParseChunkPath(p)
	if !ok || got != sum {
		t.Fatalf("ParseChunkPath(%q) = %x, %v", p, got, ok)
	}
	if h, ok := ChunkHex(p); !ok || h != hex.EncodeToString(sum[:]) {
		t.Fatalf("ChunkHex(%q) = %q, %v", p, h, ok)
	}
	for _, bad := range []string{
		"articles/chunks/AA/" + strings.Repeat("A", 64) + ".json", // uppercase
		"articles/chunks/aa/" + strings.Repeat("a", 63) + ".json",
		"articles/chunks/aa/" + strings.Repeat("a", 64) + ".jsn",
		"articles/chunks/ab/" + strings.Repeat("a", 64) + ".json", // another folder than its first byte's
		"articles/chunks/" + strings.Repeat("a", 64) + ".json",
		"articles/chunks/x/" + strings.Repeat("a", 64) + ".json",
		"articles/" + strings.Repeat("a", 64) + ".json",
		"articles/chunks.json",
	} {
		if IsChunk(bad) {
			t.Errorf("IsChunk(%q) = true", bad)
		}
		if _, ok := ParseChunkPath(bad); ok {
			t.Errorf("ParseChunkPath(%q) ok", bad)
		}
	}
}

func TestIsIndex(t *testing.T) {
	for p, want := range map[string]bool{
		"articles/chunks.json":                      true,
		"articles/tag/_47o/chunks.json":             true,
		"articles/category/a/section/b/chunks.json": true,
		"articles/chunks/chunks.json":               false, // the chunks' folder is no collection's
		"chunks.json":                               false,
		"other/chunks.json":                         false,
		"articles/20/chunks.json.tmp":               false,
		"articlesx/chunks.json":                     false,
	} {
		if got := IsIndex(p); got != want {
			t.Errorf("IsIndex(%q) = %v, want %v", p, got, want)
		}
	}
	if IndexPath(listing.Dir) != "articles/chunks.json" {
		t.Errorf("IndexPath(%q) = %q", listing.Dir, IndexPath(listing.Dir))
	}
}

// TestNoFilterNamedChunks checks that the chunks' folder is no
// collection's: after listing.Dir comes a filter's name.
func TestNoFilterNamedChunks(t *testing.T) {
	if slices.Contains(listing.FilterKeys(), "chunks") || slices.Contains(listing.FilterNames(), "chunks") {
		t.Fatal(`a filter is named "chunks", the folder of every chunk: rename one`)
	}
}

// index is a valid index of two chunks, and their bytes.
func index() (*Index, [][]byte) {
	a := []byte(`[{"id":2},{"id":1}]`)
	b := []byte(`[{"id":0}]`)
	ix := &Index{Count: 3, Chunks: []Ref{
		{Path: ChunkPath(sha256.Sum256(a)), Size: len(a), Ends: []int{9, 18}},
		{Path: ChunkPath(sha256.Sum256(b)), Size: len(b), Ends: []int{9}},
	}}
	return ix, [][]byte{a, b}
}

func TestCheckChunk(t *testing.T) {
	ix, bodies := index()
	r := ix.Chunks[0]
	for _, tc := range []struct {
		name string
		data string
		ends []int
	}{
		{"size", `[{"id":2},{"id":1}] `, nil},
		{"not an array", `{{"id":2},{"id":1}}`, nil},
		{"end inside an article", `[{"id":2},{"id":1}]`, []int{8, 18}},
		{"comma for a bracket", `[{"id":2}]{"id":1}]`, nil},
		{"bracket for a comma", `[{"id":2},{"id":1},`, nil},
	} {
		r := r
		if tc.ends != nil {
			r.Ends = tc.ends
		}
		if err := CheckChunk(&r, []byte(tc.data)); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if err := CheckChunk(&r, bodies[0]); err != nil {
		t.Error(err)
	}
}

func TestBoundary(t *testing.T) {
	n := 0
	const ids = 100000
	for id := int64(1); id <= ids; id++ {
		if DefaultSizes().Boundary(id) {
			n++
		}
	}
	// About one in Average.
	if want := ids / DefaultSizes().Average; n < want*9/10 || n > want*11/10 {
		t.Errorf("%d boundaries in %d ids, want about %d", n, ids, want)
	}
}
