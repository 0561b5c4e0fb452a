// Package testfiles writes the files a test sets up: one helper for every
// package's tests, which fail at once (t.Fatal) when a file cannot be
// written.
package testfiles

import (
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Data is what a file is written from: text or bytes.
type Data interface{ ~string | ~[]byte }

// Write writes files under dir: each key is a slash-separated path
// relative to dir (fs.ValidPath), each value the file's contents. The
// folders on the way are made as needed; a file already there is
// replaced. Files are written in the order of their paths.
func Write[D Data](t testing.TB, dir string, files map[string]D) {
	t.Helper()
	for _, p := range slices.Sorted(maps.Keys(files)) {
		if !fs.ValidPath(p) || p == "." {
			t.Fatalf("testfiles.Write: %q is not a path relative to the folder", p)
		}
		WriteFile(t, filepath.Join(dir, filepath.FromSlash(p)), files[p])
	}
}

// WriteFile writes data to the file name (mode 0644), making the folders
// on the way (mode 0755) as needed; a file already there is replaced.
func WriteFile[D Data](t testing.TB, name string, data D) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

// Replace replaces the file name with data atomically, as a build
// replaces a page: data goes to a file beside it, renamed over it, so
// that a reader sees the old bytes or the new, never part of either.
func Replace[D Data](t testing.TB, name string, data D) {
	t.Helper()
	tmp := name + ".tmp-test"
	WriteFile(t, tmp, data)
	if err := os.Rename(tmp, name); err != nil {
		t.Fatal(err)
	}
}
