//go:build !unix

package emulatortest

import "os"

// resume does nothing: a test stops a server only where it can (unix).
func resume(*os.Process) {}
