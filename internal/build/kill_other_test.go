//go:build !unix

package build

import (
	"errors"
	"os"
	"os/exec"
)

// killedExit is the exit status of a process that killSelf ended.
const killedExit = 137

// killSelf ends this process at once, with no signals to send: nothing
// more of it runs, nothing deferred, no file closed by it.
func killSelf() { os.Exit(killedExit) }

// killed reports whether err is the end of a process that killSelf
// ended.
func killed(err error) bool {
	var ee *exec.ExitError
	return errors.As(err, &ee) && ee.ExitCode() == killedExit
}
