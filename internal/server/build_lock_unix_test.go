//go:build unix

package server

import (
	"os"
	"syscall"
	"testing"
)

// holdBuildLock takes the lock a build holds on the output folder out
// while it writes, until the returned function or the end of the test.
func holdBuildLock(t *testing.T, out string) func() {
	t.Helper()
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return func() { f.Close() }
}
