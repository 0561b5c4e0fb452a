//go:build unix

package versitytest

import (
	"os"
	"syscall"
)

// resume lets a server a test stopped (SIGSTOP) go on, so that it can
// stop.
func resume(p *os.Process) { p.Signal(syscall.SIGCONT) }
