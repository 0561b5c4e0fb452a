//go:build unix

package testfiles

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

// FIFO puts a named pipe at name, in place of any file there: a reader
// that opens it blocks until a writer comes, which none does until the
// test ends: then one opens and closes it, so that a reader still blocked
// (the test failed) reads its end and returns. Skipped where there are no
// named pipes.
func FIFO(t testing.TB, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(name); err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if err := syscall.Mkfifo(name, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		// Fails at once (ENXIO) when no reader is blocked on it.
		if f, err := os.OpenFile(name, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	})
}
