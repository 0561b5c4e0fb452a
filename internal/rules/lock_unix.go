//go:build unix

package rules

import (
	"fmt"
	"os"
	"syscall"
)

// lockDir takes an exclusive lock on the folder dir, waiting for
// whoever holds it, and returns the function that releases it (as the
// kernel does when the process dies). It is the pattern of the build's
// lock on its output folder, without its messages: a record is held for
// a moment.
func lockDir(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}
