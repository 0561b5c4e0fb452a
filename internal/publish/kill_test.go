package publish

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"runtime"
	"testing"
)

// TestHelperKilledPublish is not a test: it is the publish that
// killedPublish runs in another process, which kills itself at the step
// of the publish that FEEDGEN_KILL_AT names (see Options.step).
func TestHelperKilledPublish(t *testing.T) {
	url, at := os.Getenv("FEEDGEN_KILL_URL"), os.Getenv("FEEDGEN_KILL_AT")
	if url == "" {
		t.Skip("the publish that killedPublish kills")
	}
	opt := lockOptions(url, os.Getenv("FEEDGEN_KILL_STORE"))
	opt.step = func(_ context.Context, what string) {
		if what == at {
			killSelf()
		}
	}
	publishDir(t, open(t, url), os.Getenv("FEEDGEN_KILL_DIR"), opt)
	t.Fatalf("the publish finished: it was to die at %q", at)
}

// killedPublish publishes the build in dir to the bucket of url (its
// store for a folder) in another process, killed at the step at.
func killedPublish(t *testing.T, url, store, dir, at string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledPublish$")
	cmd.Env = append(os.Environ(), "FEEDGEN_KILL_URL="+url, "FEEDGEN_KILL_STORE="+store, "FEEDGEN_KILL_DIR="+dir, "FEEDGEN_KILL_AT="+at)
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || runtime.GOOS != "windows" && ee.ExitCode() != -1 {
		t.Fatalf("the publish to kill at %q: %v, want it killed\n%s", at, err, out)
	}
}

// killSelf kills the process, as SIGKILL does on Unix: nothing runs
// after it.
func killSelf() {
	if p, err := os.FindProcess(os.Getpid()); err == nil {
		p.Kill()
	}
	select {} // the signal is on its way
}
