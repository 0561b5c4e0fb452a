//go:build linux

package build

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreateNew checks that createNew makes a new file with all its bytes
// and nothing else in the folder, and leaves an existing file alone.
func TestCreateNew(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "0.json")
	if !createNew(name, []byte(`{"count":1}`), nil) {
		t.Fatal("createNew of a new file: false, want true")
	}
	if !createNew(filepath.Join(dir, "empty.json"), nil, nil) {
		t.Fatal("createNew of an empty file: false, want true")
	}
	if createNew(name, []byte("other"), nil) {
		t.Error("createNew over an existing file: true, want false")
	}
	got, err := os.ReadFile(name)
	if err != nil || string(got) != `{"count":1}` {
		t.Errorf("file holds %q (%v), want the first bytes", got, err)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Errorf("folder holds %d entries, want the 2 files", len(entries))
	}
	// The mode is that of a file written the usual way (0644 less the umask).
	ref := filepath.Join(t.TempDir(), "ref")
	if err := os.WriteFile(ref, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	info, err1 := os.Stat(name)
	want, err2 := os.Stat(ref)
	if err1 != nil || err2 != nil || info.Mode() != want.Mode() {
		t.Errorf("mode %v, want %v (%v, %v)", info.Mode(), want.Mode(), err1, err2)
	}
}
