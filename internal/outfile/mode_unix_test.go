//go:build unix

package outfile

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestTypeOf checks TypeOf against the type os.Lstat gives, for every
// type of file a test can make.
func TestTypeOf(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "file"), "x")
	testfiles.FIFO(t, filepath.Join(dir, "pipe"))
	if err := os.Symlink("file", filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	names := []string{dir, filepath.Join(dir, "file"), filepath.Join(dir, "pipe"), filepath.Join(dir, "link"), os.DevNull}
	if l, err := net.Listen("unix", filepath.Join(dir, "sock")); err == nil {
		defer l.Close()
		names = append(names, filepath.Join(dir, "sock"))
	}
	for _, name := range names {
		info, err := os.Lstat(name)
		if err != nil {
			t.Fatal(err)
		}
		var st syscall.Stat_t
		if err := syscall.Lstat(name, &st); err != nil {
			t.Fatal(err)
		}
		if got, want := TypeOf(uint32(st.Mode)), info.Mode().Type(); got != want {
			t.Errorf("TypeOf(%s) = %v (%s), want %v (%s)", name, got, Kind(got), want, Kind(want))
		}
	}
}
