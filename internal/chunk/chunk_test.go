package chunk

import (
	"bytes"
	"crypto/sha256"
	"reflect"
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

func TestIndexRoundTrip(t *testing.T) {
	ix, bodies := index()
	data := AppendIndex(nil, ix)
	if !strings.Contains(string(data), "\n"+`{"first":0,"path":`) || !strings.Contains(string(data), "\n"+`{"first":2,"path":`) {
		t.Errorf("the lines do not start with each chunk's first article:\n%s", data)
	}
	got, err := ParseIndex(data)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, ix) {
		t.Fatalf("got %+v, want %+v", got, ix)
	}
	for k := range got.Chunks {
		if err := CheckChunk(&got.Chunks[k], bodies[k]); err != nil {
			t.Error(err)
		}
	}
	empty := AppendIndex(nil, &Index{})
	if string(empty) != `{"format":2,"count":0,"chunks":[]}`+"\n" {
		t.Errorf("empty index: %q", empty)
	}
	if _, err := ParseIndex(empty); err != nil {
		t.Error(err)
	}
}

func TestParseIndexErrors(t *testing.T) {
	ix, _ := index()
	good := string(AppendIndex(nil, ix))
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "reading chunk index"},
		{"no format", `{"count":0,"chunks":[]}`, "format is not 2"},
		{"other format", `{"format":1,"count":0,"chunks":[]}`, "format is not 2"},
		{"unknown key", `{"format":2,"count":0,"chunks":[],"x":1}`, "unknown field"},
		{"no first", strings.Replace(good, `{"first":0,`, `{`, 1), "first is not 0"},
		{"first", strings.Replace(good, `{"first":0,`, `{"first":1,`, 1), "first is not 0"},
		{"count", strings.Replace(good, `"count":3`, `"count":4`, 1), "count 4, but its chunks hold 3"},
		{"not a chunk path", strings.Replace(good, "articles/chunks/", "articles/chunkz/", 1), "is not a chunk's path"},
		{"ends descend", strings.Replace(good, "[9,18]", "[9,8]", 1), "an article ends at 8"},
		{"last end", strings.Replace(good, "[9,18]", "[9,17]", 1), "its last article ends at"},
		{"empty chunk", strings.Replace(good, "[9,18]", "[]", 1), "holds no article"},
	} {
		_, err := ParseIndex([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
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

// FuzzParseIndex checks that ParseIndex never panics, and that an index
// it accepts is written back by AppendIndex into an index it reads the
// same.
func FuzzParseIndex(f *testing.F) {
	ix, _ := index()
	f.Add(AppendIndex(nil, ix))
	f.Add(AppendIndex(nil, &Index{}))
	f.Add([]byte(`{"format":2,"count":1,"chunks":[{"first":0,"path":"articles/chunks/` + strings.Repeat("0", 64) + `.json","size":4,"ends":[3]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		ix, err := ParseIndex(data)
		if err != nil {
			return
		}
		again := AppendIndex(nil, ix)
		ix2, err := ParseIndex(again)
		if err != nil {
			t.Fatalf("an index read is written into one that is not: %v\n%s", err, again)
		}
		if !bytes.Equal(AppendIndex(nil, ix2), again) {
			t.Fatalf("not stable:\n%s", again)
		}
		for _, r := range ix.Chunks {
			at := 1
			for _, e := range r.Ends {
				if e < at+2 {
					t.Fatalf("accepted an article of less than 2 bytes")
				}
				at = e + 1
			}
		}
	})
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
