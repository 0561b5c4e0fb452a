//go:build unix

package server

import (
	"os"
	"syscall"
)

// noBuildRunning reports whether it can tell that no build is writing the
// output folder dir. A build holds an exclusive flock on the folder itself
// while it writes (see internal/build's lock), which the kernel drops when
// the build dies: a shared lock taken without waiting, and let go at once,
// tells.
func noBuildRunning(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close() // drops the lock
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) == nil
}
