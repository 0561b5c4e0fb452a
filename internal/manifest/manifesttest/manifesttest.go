// Package manifesttest changes the indexes of a built output folder of
// the chunks layout for tests: written as leaves of other sizes
// (chunktest.TreeOf), or as an older feedgen wrote them
// (chunktest.FormatTwo), the manifest following.
package manifesttest

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
)

// ReadIndex reads the index of collection dir of the build in out, its
// root and leaves, flattened.
func ReadIndex(t testing.TB, out, dir string) *chunk.Index {
	t.Helper()
	root, err := os.ReadFile(filepath.Join(out, chunk.IndexPath(dir)))
	if err != nil {
		t.Fatal(err)
	}
	ix, err := chunk.ReadIndex(root, func(p string) ([]byte, error) {
		return os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
	})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// RewriteIndexes writes the index of every collection of the build in
// out again as index returns it (the bytes of its root, at
// chunk.IndexPath, and of the files beside it, by path), each file
// replaced by a rename, then the manifest with the new roots' sizes and
// SHA-256. The files of the indexes it had stay, as a build's strays.
// It returns the roots, by collection folder.
func RewriteIndexes(t testing.TB, out string, index func(dir string, ix *chunk.Index) (root []byte, files map[string][]byte)) map[string][]byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(data) // its roots, not what they name
	if err != nil {
		t.Fatal(err)
	}
	if m.Pagination.Layout != layout.ChunksName {
		t.Fatalf("%s: not a build of the chunks layout", out)
	}
	roots := map[string][]byte{}
	for _, c := range m.Collections {
		root, files := index(c.Dir, ReadIndex(t, out, c.Dir))
		for p, data := range files {
			Replace(t, out, p, data)
		}
		roots[c.Dir] = root
	}
	for dir, root := range roots {
		Replace(t, out, chunk.IndexPath(dir), root)
		sum := sha256.Sum256(root)
		for i, f := range m.Files {
			if f.Path == chunk.IndexPath(dir) {
				m.Files[i].Size, m.Files[i].SHA256 = int64(len(root)), hex.EncodeToString(sum[:])
			}
		}
	}
	Replace(t, out, manifest.Name, m.Marshal())
	return roots
}

// Replace writes data to file p of out (a slash path), its folder made,
// by a rename, as a build replaces a file.
func Replace(t testing.TB, out, p string, data []byte) {
	t.Helper()
	name := filepath.Join(out, filepath.FromSlash(p))
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name+".new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(name+".new", name); err != nil {
		t.Fatal(err)
	}
}
