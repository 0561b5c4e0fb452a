//go:build unix

package emulatortest

import (
	"os"
	"syscall"
)

// resume lets a server a test stopped (SIGSTOP) go on, so that it can
// stop.
func resume(p *os.Process) { p.Signal(syscall.SIGCONT) }
