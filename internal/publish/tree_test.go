package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// dirReader reads a file of the build in dir, by its path in the build.
func dirReader(dir string) func(p string) ([]byte, error) {
	return func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))) }
}

// bucketReader reads an object of b.
func bucketReader(ctx context.Context, b *blob.Bucket) func(p string) ([]byte, error) {
	return func(p string) ([]byte, error) { return b.ReadAll(ctx, p) }
}

// readTree reads the index whose root is at path p of the build in dir:
// its root, parsed and as bytes, and the whole index (root and leaves,
// flattened: chunk.ReadIndex, which checks each leaf against its root).
func readTree(t testing.TB, dir, p string) (*chunk.Root, *chunk.Index, []byte) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p)))
	if err != nil {
		t.Fatal(err)
	}
	root, err := chunk.ParseRoot(data)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	ix, err := chunk.ReadIndex(data, dirReader(dir))
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	return root, ix, data
}

// leavesOf returns the paths of the leaves of the root at path p of the
// build in dir, in order.
func leavesOf(t testing.TB, dir, p string) []string {
	t.Helper()
	root, _, _ := readTree(t, dir, p)
	var out []string
	for _, l := range root.Leaves {
		out = append(out, l.Path)
	}
	return out
}

// treeSizes are the leaves of the tests' hand-made trees (retree):
// content-defined as a build's (after a chunk whose last article's id
// hashes to 0 modulo 32×2, so about every second chunk's end; at most 3
// chunks), so that collections of a hundred articles have several. A
// build's leaves hold 128 chunks on average: a collection needs some
// 10,000 articles for several.
var treeSizes = chunk.Sizes{Average: 32, LeafAverage: 2, LeafMaxChunks: 3}

// retree copies the build of s and cuts the index of each of its
// collections into leaves of treeSizes, where the build cut them into
// those of chunk.DefaultSizes: its chunks stay, each root is written
// again with its leaves, and its entry in manifest.json says its new size
// and SHA-256. It returns the copy's folder, a build that publish, serve
// and verify take as the build's own.
func (s *site) retree(t testing.TB) string {
	t.Helper()
	dir := s.snapshot(t)
	m := readManifest(t, dir)
	var old []string // the leaves of the roots written again
	for _, f := range m.Files {
		if !chunk.IsIndex(f.Path) {
			continue
		}
		root, ix, _ := readTree(t, dir, f.Path)
		if len(ix.Chunks) < 2 {
			continue // one leaf of its one chunk, whatever the sizes
		}
		for _, l := range root.Leaves {
			old = append(old, l.Path)
		}
		ids := make([]int64, len(ix.Chunks))
		for i := range ix.Chunks {
			r := &ix.Chunks[i]
			data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.Path)))
			if err != nil {
				t.Fatal(err)
			}
			last := len(r.Ends) - 1
			var a struct {
				ID *int64 `json:"id"`
			}
			if err := json.Unmarshal(data[r.Start(last):r.Ends[last]], &a); err != nil || a.ID == nil {
				t.Fatalf("%s: the last article has no id (%v)", r.Path, err)
			}
			ids[i] = *a.ID
		}
		leaves := map[string][]byte{}
		root, err := treeSizes.Tree(ix, ids, func(p string, _ [32]byte, data []byte) error {
			leaves[p] = bytes.Clone(data)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		rewriteIndex(t, dir, f, chunk.AppendRoot(nil, root), leaves)
	}
	// The leaves the build wrote that no root names now go, as a build
	// leaves none behind.
	named := immutables(readManifest(t, dir))
	for _, p := range old {
		if !named[p] {
			if err := os.Remove(filepath.Join(dir, filepath.FromSlash(p))); err != nil && !errors.Is(err, os.ErrNotExist) {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// rewriteIndex replaces the index f of the build in dir (its root, of
// the size and SHA-256 manifest.json gives) by root and its leaves (by
// path), and fixes the root's entry in manifest.json.
func rewriteIndex(t testing.TB, dir string, f manifest.File, root []byte, leaves map[string][]byte) {
	t.Helper()
	for p, data := range leaves {
		name := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Path)), root, 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(dir, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	from := fmt.Sprintf(`"path":%q,"size":%d,"sha256":%q`, f.Path, f.Size, f.SHA256)
	to := fmt.Sprintf(`"path":%q,"size":%d,"sha256":%q`, f.Path, len(root), sha256Hex(root))
	if !bytes.Contains(data, []byte(from)) {
		t.Fatalf("manifest.json has no %s", from)
	}
	data = bytes.Replace(data, []byte(from), []byte(to), 1)
	if err := os.WriteFile(filepath.Join(dir, manifest.Name), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// publishedRe is the published line of a corpus article.
var publishedRe = regexp.MustCompile(`(?m)^published: "[^"]*"$`)

// addTop adds a new article to the site, newer than every other (so at
// the top of each collection it joins), and rebuilds. Its id is the
// corpus's next one.
func (s *site) addTop(t testing.TB) {
	t.Helper()
	p, data := corpus.Article(s.opt, s.opt.Articles+s.added)
	s.added++
	if !publishedRe.Match(data) {
		t.Fatalf("%s has no published line", p)
	}
	// After every corpus article (2025 at the latest), before buildTime.
	date := fmt.Sprintf(`published: "2026-06-01T12:%02d:00"`, s.added%60)
	data = publishedRe.ReplaceAll(data, []byte(date))
	if err := os.WriteFile(filepath.Join(s.dir, filepath.FromSlash(p)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(t)
}

// immutables returns the leaves and chunks build m names (its expanded
// manifest's files).
func immutables(m *manifest.Manifest) map[string]bool {
	set := map[string]bool{}
	for _, f := range m.Files {
		if immutable(f.Path) {
			set[f.Path] = true
		}
	}
	return set
}

// countKinds counts the leaves and chunks among keys.
func countKinds(keys []string) (leaves, chunks int) {
	for _, k := range keys {
		switch {
		case chunk.IsLeaf(k):
			leaves++
		case chunk.IsChunk(k):
			chunks++
		}
	}
	return leaves, chunks
}

// checkTrees checks that every root the bucket holds (whichever build's:
// those m lists) reads whole from the bucket: each leaf it names is
// there with the size and bytes its root gives, and each chunk those
// leaves name is there with the size they give. What a reader of the
// bucket, an edge, can read at any time.
func checkTrees(t *testing.T, b *blob.Bucket, m *manifest.Manifest) {
	t.Helper()
	ctx := context.Background()
	for _, f := range m.Files {
		if !chunk.IsIndex(f.Path) {
			continue
		}
		data, err := b.ReadAll(ctx, f.Path)
		if err != nil {
			t.Errorf("%s: %v", f.Path, err)
			continue
		}
		ix, err := chunk.ReadIndex(data, bucketReader(ctx, b))
		if err != nil {
			t.Errorf("the bucket's %s does not read from the bucket: %v", f.Path, err)
			continue
		}
		for _, r := range ix.Chunks {
			if a, err := b.Attributes(ctx, r.Path); err != nil || a.Size != int64(r.Size) {
				t.Errorf("the bucket's %s names %s, which the bucket does not hold with %d bytes (%v)", f.Path, r.Path, r.Size, err)
			}
		}
	}
}
