package chunk

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"reflect"
	"strings"
	"testing"
)

// tree builds the tree of ix with leaves of at most max chunks, and no
// content-defined leaf boundary, and returns its root's bytes and its
// leaves by path.
func tree(t testing.TB, ix *Index, max int) ([]byte, map[string][]byte) {
	t.Helper()
	s := Sizes{Average: 1, LeafAverage: 1 << 40, LeafMaxChunks: max}
	ids := make([]int64, len(ix.Chunks))
	for i := range ids {
		ids[i] = int64(i)*7 + 1 // ids whose mix is never 0 mod 2^40: checked below
		if s.LeafBoundary(ids[i]) {
			t.Fatalf("id %d is a leaf boundary", ids[i])
		}
	}
	leaves := map[string][]byte{}
	r, err := s.Tree(ix, ids, func(p string, sum [32]byte, data []byte) error {
		if sha256.Sum256(data) != sum || LeafPath(sum) != p {
			t.Fatalf("leaf %s: not named by its bytes' digest", p)
		}
		leaves[p] = bytes.Clone(data)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return AppendRoot(nil, r), leaves
}

func readFrom(leaves map[string][]byte) func(string) ([]byte, error) {
	return func(p string) ([]byte, error) {
		if d, ok := leaves[p]; ok {
			return d, nil
		}
		return nil, fs.ErrNotExist
	}
}

func TestLeafPath(t *testing.T) {
	sum := sha256.Sum256([]byte("x"))
	p := LeafPath(sum)
	if want := strings.TrimSuffix(ChunkPath(sum), ".json") + ".leaf.json"; p != want {
		t.Fatalf("LeafPath = %q, want %q", p, want)
	}
	if got, ok := ParseLeafPath(p); !ok || got != sum {
		t.Fatalf("ParseLeafPath(%q) = %x, %v", p, got, ok)
	}
	if IsChunk(p) || IsIndex(p) || !IsLeaf(p) || IsLeaf(ChunkPath(sum)) {
		t.Errorf("%s is taken for another kind, or a chunk for a leaf", p)
	}
}

func TestTreeRoundTrip(t *testing.T) {
	ix, bodies := index()
	for _, max := range []int{1, 2, 3} {
		root, leaves := tree(t, ix, max)
		if want := (len(ix.Chunks) + max - 1) / max; len(leaves) != want {
			t.Errorf("max %d: %d leaves, want %d", max, len(leaves), want)
		}
		got, err := ReadIndex(root, readFrom(leaves))
		if err != nil {
			t.Fatalf("max %d: %v\n%s", max, err, root)
		}
		if !reflect.DeepEqual(got, ix) {
			t.Fatalf("max %d: got %+v, want %+v", max, got, ix)
		}
		for k := range got.Chunks {
			if err := CheckChunk(&got.Chunks[k], bodies[k]); err != nil {
				t.Error(err)
			}
		}
	}
	root, leaves := tree(t, ix, 1)
	want := fmt.Sprintf("{\"format\":3,\"count\":3,\"leaves\":[\n{\"first\":0,\"path\":%q,\"size\":%d,\"count\":2},\n{\"first\":2,\"path\":%q,\"size\":%d,\"count\":1}]}\n",
		leafOf(t, leaves, 2), len(leaves[leafOf(t, leaves, 2)]), leafOf(t, leaves, 1), len(leaves[leafOf(t, leaves, 1)]))
	if string(root) != want {
		t.Errorf("root:\n%s\nwant\n%s", root, want)
	}
	// The second chunk's leaf counts from its own first article.
	if l := leaves[leafOf(t, leaves, 1)]; !bytes.HasPrefix(l, []byte("{\"format\":3,\"count\":1,\"chunks\":[\n{\"first\":0,\"path\":")) {
		t.Errorf("leaf: %s", l)
	}
	empty, none := tree(t, &Index{}, 4)
	if string(empty) != `{"format":3,"count":0,"leaves":[]}`+"\n" || len(none) != 0 {
		t.Errorf("empty index: %q, %d leaves", empty, len(none))
	}
	if ix, err := ReadIndex(empty, readFrom(none)); err != nil || ix.Count != 0 || len(ix.Chunks) != 0 {
		t.Errorf("empty index read: %+v, %v", ix, err)
	}
}

// leafOf returns the path of the leaf of leaves that counts n articles.
func leafOf(t *testing.T, leaves map[string][]byte, n int) string {
	t.Helper()
	for p, d := range leaves {
		if bytes.Contains(d, []byte(fmt.Sprintf(`"count":%d,`, n))) {
			return p
		}
	}
	t.Fatalf("no leaf of %d articles", n)
	return ""
}

// TestTreeChange checks what the tree is for: a new article at the top
// of a long collection, an edited one and a deleted one change the
// chunk that holds it, one leaf, and the root; every other leaf is the
// same file.
func TestTreeChange(t *testing.T) {
	s := DefaultSizes()
	// A collection of ids n..1, newest first, cut as the build cuts it.
	cut := func(ids []int64, size func(id int64) int) (*Index, []int64) {
		ix := &Index{Count: len(ids)}
		var ends []int
		var body []byte
		last := []int64{}
		for i, id := range ids {
			if len(ends) == 0 {
				body = append(body[:0], '[')
			} else {
				body = append(body, ',')
			}
			body = append(body, fmt.Sprintf(`{"id":%d,"x":"%s"}`, id, strings.Repeat("a", size(id)))...)
			ends = append(ends, len(body))
			if i+1 == len(ids) || s.Boundary(id) || len(ends) >= s.MaxArticles {
				body = append(body, ']')
				ix.Chunks = append(ix.Chunks, Ref{Path: ChunkPath(sha256.Sum256(body)), Size: len(body), Ends: ends})
				last = append(last, id)
				ends = nil
			}
		}
		return ix, last
	}
	leavesOf := func(ids []int64, size func(int64) int) (map[string]bool, []byte) {
		ix, last := cut(ids, size)
		got := map[string]bool{}
		r, err := s.Tree(ix, last, func(p string, _ [32]byte, _ []byte) error { got[p] = true; return nil })
		if err != nil {
			t.Fatal(err)
		}
		return got, AppendRoot(nil, r)
	}
	const n = 40000
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(n - i)
	}
	plain := func(int64) int { return 3 }
	before, root := leavesOf(ids, plain)
	if len(before) < 4 {
		t.Fatalf("%d leaves for %d articles: too few to test", len(before), n)
	}
	if len(root) > 16<<10 {
		t.Errorf("root of %d articles is %d bytes", n, len(root))
	}
	for _, tc := range []struct {
		name string
		ids  []int64
		size func(int64) int
	}{
		{"new at the top", append([]int64{n + 1}, ids...), plain},
		{"edited", ids, func(id int64) int { return map[bool]int{true: 9, false: 3}[id == n/2] }},
		{"deleted", append(append([]int64{}, ids[:n/3]...), ids[n/3+1:]...), plain},
	} {
		after, root2 := leavesOf(tc.ids, tc.size)
		var gone, added int
		for p := range before {
			if !after[p] {
				gone++
			}
		}
		for p := range after {
			if !before[p] {
				added++
			}
		}
		if gone != 1 || added != 1 {
			t.Errorf("%s: %d leaves replaced by %d, want 1 by 1", tc.name, gone, added)
		}
		if bytes.Equal(root, root2) {
			t.Errorf("%s: the root did not change", tc.name)
		}
	}
}

func TestParseRootErrors(t *testing.T) {
	ix, _ := index()
	r, leaves := tree(t, ix, 1)
	good := string(r)
	for _, tc := range []struct{ name, data, want string }{
		{"not JSON", "{", "not a chunk index"},
		{"no format", `{"count":0,"leaves":[]}`, "not a chunk index"},
		{"format 2", `{"format":2,"count":0,"chunks":[]}`, "chunk index format 2, not 3: written by another version of feedgen; rebuild the output (feedgen build)"},
		{"unknown key", `{"format":3,"count":0,"leaves":[],"x":1}`, "unknown field"},
		{"two values", `{"format":3,"count":0,"leaves":[]} {}`, "more than one"},
		{"no first", strings.Replace(good, `{"first":0,`, `{`, 1), "first is not 0"},
		{"first", strings.Replace(good, `{"first":2,`, `{"first":1,`, 1), "first is not 2"},
		{"count", strings.Replace(good, `"count":3`, `"count":4`, 1), "count 4, but its leaves hold 3"},
		{"not a leaf path", strings.Replace(good, ".leaf.json", ".json", 1), "is not a leaf's path"},
		{"empty leaf", strings.Replace(good, `"count":1}`, `"count":0}`, 1), "holds no article"},
	} {
		_, err := ParseRoot([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
	// Leaves that are not what the root says.
	for _, tc := range []struct {
		name   string
		change func(map[string][]byte)
		want   string
	}{
		{"missing", func(m map[string][]byte) { clear(m) }, "reading leaf"},
		{"other bytes", func(m map[string][]byte) {
			for p, d := range m {
				m[p] = bytes.Replace(d, []byte(`"size":`), []byte(`"size" :`), 1)[:len(d)]
			}
		}, "not those its name is the SHA-256 of"},
		{"other size", func(m map[string][]byte) {
			for p, d := range m {
				m[p] = append(d, ' ')
			}
		}, "bytes, the index says"},
	} {
		m := map[string][]byte{}
		for p, d := range leaves {
			m[p] = bytes.Clone(d)
		}
		tc.change(m)
		if _, err := ReadIndex(r, readFrom(m)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

func TestParseLeafErrors(t *testing.T) {
	ix, _ := index()
	good := string(AppendLeaf(nil, &Leaf{Count: 3, Chunks: ix.Chunks}))
	for _, tc := range []struct{ name, data, want string }{
		{"format 2", `{"format":2,"count":0,"chunks":[]}`, "format 2, not 3"},
		{"no chunk", `{"format":3,"count":0,"chunks":[]}`, "count 0, but its chunks hold 0"},
		{"unknown key", strings.Replace(good, `"count":3,`, `"count":3,"x":1,`, 1), "unknown field"},
		{"first", strings.Replace(good, `{"first":2,`, `{"first":3,`, 1), "first is not 2"},
		{"count", strings.Replace(good, `"count":3`, `"count":4`, 1), "count 4, but its chunks hold 3"},
		{"not a chunk path", strings.Replace(good, "articles/chunks/", "articles/chunkz/", 1), "is not a chunk's path"},
		{"ends descend", strings.Replace(good, "[9,18]", "[9,8]", 1), "an article ends at 8"},
		{"last end", strings.Replace(good, "[9,18]", "[9,17]", 1), "its last article ends at"},
		{"empty chunk", strings.Replace(good, "[9,18]", "[]", 1), "holds no article"},
	} {
		_, err := ParseLeaf([]byte(tc.data))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error with %q", tc.name, err, tc.want)
		}
	}
}

// FuzzParseRoot and FuzzParseLeaf check that the parsers never panic,
// and that what they accept is written back into the same bytes.
func FuzzParseRoot(f *testing.F) {
	ix, _ := index()
	r, _ := tree(f, ix, 1)
	f.Add(r)
	f.Add([]byte(`{"format":3,"count":0,"leaves":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRoot(data)
		if err != nil {
			return
		}
		again := AppendRoot(nil, r)
		r2, err := ParseRoot(again)
		if err != nil || !reflect.DeepEqual(r, r2) {
			t.Fatalf("a root read is not written into the same: %v\n%s", err, again)
		}
	})
}

func FuzzParseLeaf(f *testing.F) {
	ix, _ := index()
	f.Add(AppendLeaf(nil, &Leaf{Count: 3, Chunks: ix.Chunks}))
	f.Add([]byte(`{"format":3,"count":1,"chunks":[{"first":0,"path":"articles/chunks/00/` + strings.Repeat("0", 64) + `.json","size":4,"ends":[3]}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		l, err := ParseLeaf(data)
		if err != nil {
			return
		}
		again := AppendLeaf(nil, l)
		l2, err := ParseLeaf(again)
		if err != nil || !reflect.DeepEqual(l, l2) {
			t.Fatalf("a leaf read is not written into the same: %v\n%s", err, again)
		}
		for _, r := range l.Chunks {
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

// TestScanLeaf: the leaves AppendLeaf writes are read by scanLeaf, not
// by encoding/json (the fast path is the one taken), and what it reads
// is what encoding/json reads; a leaf written otherwise (spaces, an
// escaped path) is left to encoding/json, which reads it.
func TestScanLeaf(t *testing.T) {
	ix, _ := index()
	for n := 1; n <= len(ix.Chunks); n++ {
		count := 0
		for _, c := range ix.Chunks[:n] {
			count += len(c.Ends)
		}
		data := AppendLeaf(nil, &Leaf{Count: count, Chunks: ix.Chunks[:n]})
		raw, ok := scanLeaf(data)
		if !ok {
			t.Fatalf("scanLeaf refused what AppendLeaf wrote:\n%s", data)
		}
		sameAsDecoded(t, data, raw)
	}
	good := string(AppendLeaf(nil, &Leaf{Count: 3, Chunks: ix.Chunks}))
	for _, other := range []string{
		strings.Replace(good, `"count":3`, `"count": 3`, 1),
		strings.Replace(good, "articles/chunks/", `articles\/chunks/`, 1),
		strings.Replace(good, `"size":`, `"size":0`, 1),
		strings.TrimSuffix(good, "\n"),
	} {
		if _, ok := scanLeaf([]byte(other)); ok {
			t.Errorf("scanLeaf read what AppendLeaf does not write:\n%s", other)
		}
	}
	if _, err := ParseLeaf([]byte(strings.Replace(good, "articles/chunks/", `articles\/chunks/`, 1))); err != nil {
		t.Errorf("an escaped path, read by encoding/json: %v", err)
	}
}

// sameAsDecoded fails unless decodeLeaf reads data as raw.
func sameAsDecoded(t *testing.T, data []byte, raw rawLeaf) {
	t.Helper()
	want, err := decodeLeaf(data)
	if err != nil {
		t.Fatalf("scanLeaf read what encoding/json refuses (%v):\n%q", err, data)
	}
	if len(want.Chunks) == 0 {
		want.Chunks = nil
	}
	if len(raw.Chunks) == 0 {
		raw.Chunks = nil
	}
	if !reflect.DeepEqual(raw, want) {
		t.Fatalf("scanLeaf read %+v, encoding/json %+v:\n%q", raw, want, data)
	}
}

// FuzzScanLeaf: whatever scanLeaf reads, encoding/json reads the same.
func FuzzScanLeaf(f *testing.F) {
	ix, _ := index()
	f.Add(AppendLeaf(nil, &Leaf{Count: 3, Chunks: ix.Chunks}))
	f.Add([]byte(`{"format":3,"count":1,"chunks":[` + "\n" + `{"first":0,"path":"a","size":4,"ends":[3]}]}` + "\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if raw, ok := scanLeaf(data); ok {
			sameAsDecoded(t, data, raw)
		}
	})
}
