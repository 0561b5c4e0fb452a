package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// scriptRaceEnv, set to anything, keeps the race-enabled feedgen in the
// scripts and the Go end-to-end tests (see plainCommands).
const scriptRaceEnv = "FEEDGEN_SCRIPT_RACE"

// plainCommands runs the tests with the feedgen of the scripts and of the
// Go end-to-end tests built without -race: this package's test binary
// again, built by go test -c, which put in testscript's place dispatches
// on its name as this one does.
//
// The scripts start feedgen about 400 times. Race-enabled, each start costs
// about 0.23 s of CPU before feedgen does anything (0.08 s without), and
// its work about 8 times what it costs without (a bundle of the sample:
// 2.3 s against 0.28 s); that was most of this package's time. The code
// those processes run is race-tested in-process, by this package's own
// tests and by the packages under internal/. FEEDGEN_SCRIPT_RACE=1 keeps
// the race-enabled copy.
//
// When the plain build fails (no go command, say), the race-enabled copy
// stays, and the reason is printed.
type plainCommands struct{ m *testing.M }

func (p plainCommands) Run() int {
	if err := buildPlain(); err != nil {
		fmt.Fprintf(os.Stderr, "feedgen's scripts run race-enabled: %v\n", err)
	}
	return p.m.Run()
}

// buildPlain builds this package's test binary without -race and puts it
// in place of the commands testscript.Main copied into the first folder
// of $PATH.
func buildPlain() error {
	bindir := filepath.SplitList(os.Getenv("PATH"))[0]
	target := filepath.Join(bindir, "feedgen")
	if _, err := os.Stat(target); err != nil {
		return fmt.Errorf("testscript's copy of feedgen is not first in $PATH: %w", err)
	}
	gocmd, err := exec.LookPath("go")
	if err != nil {
		return err
	}
	start := time.Now()
	tmp := target + ".plain"
	cmd := exec.Command(gocmd, "test", "-c", "-o", tmp, ".")
	// Whatever GOFLAGS says, the copy is built without -race.
	cmd.Env = append(os.Environ(), "GOFLAGS="+withoutRace(os.Getenv("GOFLAGS")))
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go test -c: %w\n%s", err, out)
	}
	for _, name := range []string{"feedgen-stop-test", "feedgen"} {
		dst := filepath.Join(bindir, name)
		if name != "feedgen" {
			if err := os.Remove(dst); err != nil {
				return err
			}
			if err := os.Link(tmp, dst); err != nil {
				return err
			}
			continue
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		fmt.Fprintf(os.Stderr, "built feedgen without -race for the scripts in %s\n", d.Round(time.Second))
	}
	return nil
}

// withoutRace returns GOFLAGS without its -race flags.
func withoutRace(goflags string) string {
	var kept []string
	for _, f := range strings.Fields(goflags) {
		if f != "-race" && f != "-race=true" && f != "--race" {
			kept = append(kept, f)
		}
	}
	return strings.Join(kept, " ")
}
