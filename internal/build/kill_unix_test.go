//go:build unix

package build

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
)

// killSelf kills this process as the kernel kills a build (SIGKILL):
// nothing more of it runs, nothing deferred, no file closed by it.
func killSelf() {
	syscall.Kill(os.Getpid(), syscall.SIGKILL)
	select {} // the signal is on its way
}

// killed reports whether err is the end of a process that killSelf
// killed.
func killed(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.Sys().(syscall.WaitStatus).Signal() == syscall.SIGKILL
}
