package rules

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
)

// A tampering replaces what a chunks build's main index names (its
// root, a leaf, a chunk) with something else, in the build's folder pub:
// it returns how to put the build back. Every page it touches is 503
// unless answered says that target e may answer page as it is (the
// bytes answered are the chunk's).
type tampering struct {
	name     string
	answered func(e edge, page string) bool
	do       func(t *testing.T, pub string, ix *chunk.Index) (undo func())
}

// edge is what an assembling target checks beyond what every one does.
type edge struct {
	links bool // it sees a chunk's symbolic links (nginx-njs)
	sums  bool // it checks a leaf's SHA-256 (the Workers, which keep leaves)
}

// unseen is answered of a link to the chunk's own bytes: a target that
// cannot see links (workerd) answers the page, the others refuse it.
func unseen(e edge, _ string) bool { return !e.links }

// always is answered by every target.
func always(edge, string) bool { return true }

// moveAside moves the file or folder p aside until undo puts it back.
func moveAside(t *testing.T, p string) (undo func()) {
	t.Helper()
	aside := p + ".aside"
	if err := os.Rename(p, aside); err != nil {
		t.Fatal(err)
	}
	return func() {
		os.RemoveAll(p)
		if err := os.Rename(aside, p); err != nil {
			t.Fatal(err)
		}
	}
}

// outside writes data into a file outside the build (beside pub) and
// returns its path.
func outside(t *testing.T, pub, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(filepath.Dir(pub), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// notArticles returns size bytes that are no chunk's: a JSON array of
// one string, as /etc/passwd stands for here.
func notArticles(size int) []byte {
	return []byte(`["` + strings.Repeat("s", size-4) + `"]`)
}

// chunkFile returns the path and bytes of the first chunk of index ix in
// the build's folder pub.
func chunkFile(t *testing.T, pub string, ix *chunk.Index) (string, []byte) {
	t.Helper()
	p := filepath.Join(pub, ix.Chunks[0].Path)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return p, data
}

// link makes p a link to file to: a hard link or a symbolic one.
func link(t *testing.T, p, to string, hard bool) {
	t.Helper()
	link := os.Symlink
	if hard {
		link = os.Link
	}
	if err := link(to, p); err != nil {
		t.Fatal(err)
	}
}

// replaceChunk is the tampering that puts a link to a file outside the
// build, of data made from the first chunk's bytes, in its place.
func replaceChunk(hard bool, data func(chunk []byte) []byte) func(*testing.T, string, *chunk.Index) func() {
	return func(t *testing.T, pub string, ix *chunk.Index) func() {
		p, orig := chunkFile(t, pub, ix)
		to := outside(t, pub, "secret.json", data(orig))
		undo := moveAside(t, p)
		link(t, p, to, hard)
		return undo
	}
}

// replaceFolder is the tampering that puts a symbolic link to a copy of
// folder dir, outside the build, whose files are made by data, in its
// place.
func replaceFolder(dir func(ix *chunk.Index) string, data func(chunk []byte) []byte) func(*testing.T, string, *chunk.Index) func() {
	return func(t *testing.T, pub string, ix *chunk.Index) func() {
		p := filepath.Join(pub, dir(ix))
		copyDir := filepath.Join(filepath.Dir(pub), "copy")
		os.RemoveAll(copyDir)
		if err := os.CopyFS(copyDir, os.DirFS(p)); err != nil {
			t.Fatal(err)
		}
		err := filepath.WalkDir(copyDir, func(f string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			b, err := os.ReadFile(f)
			if err != nil {
				return err
			}
			return os.WriteFile(f, data(b), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
		undo := moveAside(t, p)
		link(t, p, copyDir, false)
		return undo
	}
}

// editRoot is the tampering that rewrites the main index's root with
// edit.
func editRoot(edit func(t *testing.T, pub string, ix *chunk.Index, data string) string) func(*testing.T, string, *chunk.Index) func() {
	return func(t *testing.T, pub string, ix *chunk.Index) func() {
		p := rootFile(pub)
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(edit(t, pub, ix, string(data))), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
}

// rootFile is the file of the main index's root, leafFile of its first
// leaf.
func rootFile(pub string) string { return filepath.Join(pub, chunk.IndexPath(listing.Dir)) }

func leafFile(t *testing.T, pub string) string {
	_, root := readTree(t, pub, listing.Dir)
	return filepath.Join(pub, root.Leaves[0].Path)
}

// swapLeaf is the tampering that names a new file in the main index's
// root in place of its first leaf (the root keeps the leaf's size and
// count): data made from the leaf's bytes, at the path that names them
// by their SHA-256 as a leaf is named (misnamed: at a path that does
// not), or a symbolic link to them outside the build (linked); with no
// data, no file. A new file, not the leaf changed in place: the Workers
// keep a leaf they read (it never changes), and the leaf of the main
// listing is read before the first tampering.
func swapLeaf(data func(t *testing.T, ix *chunk.Index, leaf string) string, misnamed, linked bool) func(*testing.T, string, *chunk.Index) func() {
	return func(t *testing.T, pub string, ix *chunk.Index) func() {
		rp := rootFile(pub)
		root, err := os.ReadFile(rp)
		if err != nil {
			t.Fatal(err)
		}
		old := leafFile(t, pub)
		leaf, err := os.ReadFile(old)
		if err != nil {
			t.Fatal(err)
		}
		var b []byte
		if data != nil {
			b = []byte(data(t, ix, string(leaf)))
		}
		sum := sha256.Sum256(b)
		if misnamed {
			sum[31] ^= 1
		}
		p := filepath.Join(pub, chunk.LeafPath(sum))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		switch {
		case data == nil:
		case linked:
			link(t, p, outside(t, pub, "secret.json", b), false)
		default:
			if err := os.WriteFile(p, b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		oldPath, _ := filepath.Rel(pub, old)
		newPath, _ := filepath.Rel(pub, p)
		if err := os.WriteFile(rp, []byte(strings.Replace(string(root), `"`+oldPath+`"`, `"`+newPath+`"`, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return func() {
			if err := os.WriteFile(rp, root, 0o644); err != nil {
				t.Fatal(err)
			}
			os.Remove(p)
		}
	}
}

// replaceLeaf is the tampering that puts a link to a file outside the
// build, of data made from the first leaf's bytes, in its place (the
// Workers answer from the leaf they keep).
func replaceLeaf(hard bool, data func(leaf []byte) []byte) func(*testing.T, string, *chunk.Index) func() {
	return func(t *testing.T, pub string, _ *chunk.Index) func() {
		p := leafFile(t, pub)
		orig, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		to := outside(t, pub, "secret.json", data(orig))
		undo := moveAside(t, p)
		link(t, p, to, hard)
		return undo
	}
}

// tamperings are the probe's attacks on the edges, and a few more: links
// out of the build's folder, chunks of another size, an index whose ends
// are shifted, a path that is not a chunk's.
func tamperings() []tampering {
	same := func(b []byte) []byte { return b }
	other := func(b []byte) []byte { return notArticles(len(b)) }
	chunks := func(*chunk.Index) string { return chunk.Dir }
	return []tampering{
		{"a chunk a symbolic link to a file of its size", nil, replaceChunk(false, other)},
		{"a chunk a symbolic link to a copy of it", unseen, replaceChunk(false, same)},
		{"a chunk a hard link to a file of another size", nil, replaceChunk(true, func(b []byte) []byte { return notArticles(len(b) + 100) })},
		// A hard link is the file it names (cp -al, rsync --link-dest):
		// its bytes are the chunk's, answered everywhere.
		{"a chunk a hard link to a copy of it", always, replaceChunk(true, same)},
		{"the chunks folder a symbolic link to a copy", unseen, replaceFolder(chunks, same)},
		{"the chunks folder a symbolic link to other files", nil, replaceFolder(chunks, other)},
		{"a chunk's folder a symbolic link to a copy", unseen, replaceFolder(func(ix *chunk.Index) string { return filepath.Dir(ix.Chunks[0].Path) }, same)},
		{"a chunk longer than its index says", nil, func(t *testing.T, pub string, ix *chunk.Index) func() {
			p, orig := chunkFile(t, pub, ix)
			undo := moveAside(t, p)
			if err := os.WriteFile(p, append(slices.Clone(orig), orig...), 0o644); err != nil {
				t.Fatal(err)
			}
			return undo
		}},
		// The first chunk's first article ends a byte later: the index's
		// sizes and the chunk's are unchanged. A page cut there is
		// refused; one that takes the whole chunk has its bytes, which
		// the shifted end does not change.
		// A leaf at the path named by the SHA-256 of its bytes, whose
		// first article ends a byte later: a page cut there is refused;
		// one that takes the whole chunk has its bytes, which the shifted
		// end does not change.
		{"a leaf whose ends are shifted", func(_ edge, page string) bool { return page == "/articles/?limit=100" }, swapLeaf(func(t *testing.T, ix *chunk.Index, leaf string) string {
			from, to := `"ends":[`+strconv.Itoa(ix.Chunks[0].Ends[0])+",", `"ends":[`+strconv.Itoa(ix.Chunks[0].Ends[0]+1)+","
			if !strings.Contains(leaf, from) || len(from) != len(to) {
				t.Fatalf("the leaf has no %s, or %s is not as long", from, to)
			}
			return strings.Replace(leaf, from, to, 1)
		}, false, false)},
		// Of the shape and length of a chunk's path, its last digit not
		// hex: a copy of the chunk is there.
		{"a leaf naming a path that is not a chunk's", nil, swapLeaf(func(t *testing.T, ix *chunk.Index, leaf string) string {
			path := ix.Chunks[0].Path
			bad := path[:len(path)-len(".json")-1] + "g.json"
			return strings.Replace(leaf, `"`+path+`"`, `"`+bad+`"`, 1)
		}, false, false)},
		{"a leaf one byte longer", nil, swapLeaf(func(_ *testing.T, _ *chunk.Index, leaf string) string { return leaf + "\n" }, false, false)},
		{"a leaf of another count, of its size", nil, swapLeaf(func(t *testing.T, ix *chunk.Index, leaf string) string {
			from, to := `"count":`+strconv.Itoa(ix.Count)+",", `"count":`+strconv.Itoa(ix.Count+1)+","
			if !strings.HasPrefix(leaf, `{"format":3,`+from) || len(from) != len(to) {
				t.Fatalf("the leaf does not start with %s, or %s is not as long: %.40s", from, to, leaf)
			}
			return strings.Replace(leaf, from, to, 1)
		}, false, false)},
		{"a leaf of format 2, of its size", nil, swapLeaf(func(_ *testing.T, _ *chunk.Index, leaf string) string {
			return strings.Replace(leaf, `{"format":3,`, `{"format":2,`, 1)
		}, false, false)},
		{"a leaf other bytes of its size", nil, swapLeaf(func(_ *testing.T, _ *chunk.Index, leaf string) string { return string(notArticles(len(leaf))) }, false, false)},
		{"a leaf a symbolic link to other bytes of its size", nil, swapLeaf(func(_ *testing.T, _ *chunk.Index, leaf string) string { return string(notArticles(len(leaf))) }, false, true)},
		{"a leaf that is not there", nil, swapLeaf(nil, false, false)},
		// The leaf's bytes, at a path that is not their SHA-256: nginx-njs
		// checks a leaf as it does a chunk (what its root says of it),
		// the Workers, which keep leaves, by its SHA-256.
		{"a leaf's bytes misnamed", func(e edge, _ string) bool { return !e.sums }, swapLeaf(func(_ *testing.T, _ *chunk.Index, leaf string) string { return leaf }, true, false)},
		// A leaf may be a link, as the root may: what it names is
		// checked.
		{"a leaf a symbolic link to a copy of it", always, replaceLeaf(false, func(b []byte) []byte { return b })},
		{"a leaf a hard link to a copy of it", always, replaceLeaf(true, func(b []byte) []byte { return b })},
		// What an older feedgen wrote: a format-2 index at the root's
		// path, which names the same chunks.
		{"a root of format 2", nil, editRoot(func(_ *testing.T, _ string, ix *chunk.Index, _ string) string {
			return formatTwo(ix)
		})},
		{"a root naming a chunk as a leaf", nil, editRoot(func(t *testing.T, pub string, ix *chunk.Index, data string) string {
			_, root := readTree(t, pub, listing.Dir)
			_, orig := chunkFile(t, pub, ix)
			fake := chunk.ChunkPath(sha256.Sum256([]byte("fake")))
			if err := os.MkdirAll(filepath.Dir(filepath.Join(pub, fake)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(pub, fake), orig, 0o644); err != nil {
				t.Fatal(err)
			}
			return strings.Replace(data, `"`+root.Leaves[0].Path+`"`, `"`+fake+`"`, 1)
		})},
	}
}

// formatTwo returns index ix as feedgen wrote it before format 3: one
// file, a line a chunk, positions counted in the collection.
func formatTwo(ix *chunk.Index) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"format":2,"count":%d,"chunks":[`, ix.Count)
	first := 0
	for i, r := range ix.Chunks {
		if i > 0 {
			b.WriteByte(',')
		}
		ends, _ := json.Marshal(r.Ends)
		fmt.Fprintf(&b, "\n"+`{"first":%d,"path":%q,"size":%d,"ends":%s}`, first, r.Path, r.Size, ends)
		first += len(r.Ends)
	}
	b.WriteString("]}\n")
	return b.String()
}

// TestChunksTampered runs the targets that put pages together on a
// chunks build, and tampers with it as the probe did (a chunk or its
// folder a link to a file out of the build, a chunk of another size than
// its index says, shifted ends, a path that is not a chunk's), and with
// its index (a leaf that is not the one its root names: another size,
// count or format, other bytes, a path that is not a chunk's in it, none
// there; a root of format 2, as an older feedgen wrote, or naming a
// chunk as a leaf): the pages of that chunk or leaf are 503, as feedgen
// serve answers them, never the bytes read; nginx-njs also refuses links
// to the chunk's own bytes (workerd cannot see links: it answers those
// pages, whose bytes are the chunk's). A leaf, as the root, may be a
// link to its own bytes. The build put back,
// they are answered again. serve refuses a chunk whose index is shifted
// anywhere (it checks every article of every chunk when it loads a
// build); the edges check the articles where a page is cut, and answer a
// page whose bytes the shift does not change.
func TestChunksTampered(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*testing.T) startFunc
		edge  edge
	}{
		{"nginx-njs", startNginxNJS, edge{links: true}},
		{"cloudflare", startWorkerd, edge{sums: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := tc.start(t)
			site, s := copyChunkSite(t)
			pub := filepath.Join(site, "public")
			base := startTarget(t, tc.name, s, start)
			ix, _ := readTree(t, pub, listing.Dir)
			pages := []string{"/articles/?limit=1", "/articles/?limit=100"} // of the first chunk's first article, of every chunk
			want := map[string]answer{}
			for _, p := range pages {
				want[p] = ask(t, chunkRefBase, request{method: "GET", target: p})
			}
			for _, tm := range tamperings() {
				undo := tm.do(t, pub, ix)
				for _, p := range pages {
					if tm.answered != nil && tm.answered(tc.edge, p) {
						if got := ask(t, base, request{method: "GET", target: p}); want[p].diff(got) != "" || got.etag != want[p].etag {
							t.Errorf("%s: %s: %d (valid JSON %v) %.100q, want the page or 503", tm.name, p, got.status, json.Valid([]byte(got.body)), got.body)
						}
						continue
					}
					checkUnavailable(t, base, p, tm.name+": "+p)
				}
				undo()
				for _, p := range pages {
					if d := want[p].diff(ask(t, base, request{method: "GET", target: p})); d != "" {
						t.Fatalf("%s, put back: %s: %s", tm.name, p, d)
					}
				}
			}
		})
	}
}

// TestNginxNJSPagesLinked runs nginx-njs on a copy of a pages build and
// makes a page, then its folder, a symbolic link to a file out of the
// build (the probe's /etc/passwd): nginx refuses to follow it
// (disable_symlinks), and the page is the JSON 404, never the file's
// bytes. Put back, it is answered again.
func TestNginxNJSPagesLinked(t *testing.T) {
	start := startNginxNJS(t)
	root := filepath.Join(t.TempDir(), "public")
	if err := os.CopyFS(root, os.DirFS(sampleRoot)); err != nil {
		t.Fatal(err)
	}
	s, err := NewSite(sampleMan, root, "127.0.0.1:"+freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	base := startTarget(t, "nginx-njs", s, start)
	r := request{method: "GET", target: "/articles/?limit=50&offset=10"}
	want := ask(t, refBase, r)
	secret := outside(t, root, "secret.json", []byte(`"secret"`))
	secretDir := filepath.Join(filepath.Dir(root), "secrets")
	if err := os.CopyFS(secretDir, os.DirFS(filepath.Join(root, "articles", "50"))); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, to string }{
		{"a page a symbolic link", filepath.Join(root, "articles", "50", "10.json"), secret},
		{"a page's folder a symbolic link", filepath.Join(root, "articles", "50"), secretDir},
	} {
		undo := moveAside(t, tc.path)
		link(t, tc.path, tc.to, false)
		got := ask(t, base, r)
		if got.status != 404 || got.body != listing.NotFoundBody {
			t.Errorf("%s: %d %.100q, want the JSON 404", tc.name, got.status, got.body)
		}
		undo()
		if d := want.diff(ask(t, base, r)); d != "" {
			t.Fatalf("%s, put back: %s", tc.name, d)
		}
	}
}
