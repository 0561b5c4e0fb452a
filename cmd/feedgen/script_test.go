package main

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

var update = flag.Bool("update", false, "rewrite the expected files of testdata/script/*.txtar that a cmp finds different")

// statusFileEnv names the file where feedgen, run by a test script, leaves
// its exit code for the script's status command.
const statusFileEnv = "FEEDGEN_TEST_STATUS_FILE"

// TestMain makes this test binary a feedgen too: testscript.Main puts a
// copy of it named feedgen first in $PATH, for the scripts and for the Go
// end-to-end tests, and that copy runs main's run.
func TestMain(m *testing.M) {
	testscript.Main(m, map[string]func(){
		"feedgen": func() {
			code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
			if name := os.Getenv(statusFileEnv); name != "" {
				if err := os.WriteFile(name, []byte(strconv.Itoa(code)), 0o644); err != nil {
					panic(err)
				}
			}
			os.Exit(code)
		},
	})
}

// TestScript runs the command-line sessions in testdata/script/*.txtar.
// Besides the testscript commands, a script can use:
//
//	status CODE  the exit code of the feedgen just run: 0 success, 1 content
//	             or config errors (or a failed run), 2 a bad command line
//	nextsecond   wait until the clock is in a later second than when it
//	             was called: a build after it has a later build time (kept
//	             to the second) than a build before it
//
// go test -update rewrites the expected files that a cmp finds different.
func TestScript(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv(statusFileEnv, filepath.Join(env.Getenv("TMPDIR"), "feedgen-status"))
			if os.Getenv("GORACE") == "" {
				// Under -race, feedgen would otherwise sleep 1s on every exit.
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":     cmdStatus,
			"nextsecond": cmdNextSecond,
		},
		RequireUniqueNames: true,
		UpdateScripts:      *update,
	})
}

// cmdStatus checks the exit code of the feedgen run just before it.
func cmdStatus(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 1 {
		ts.Fatalf("usage: status CODE")
	}
	name := ts.Getenv(statusFileEnv)
	got, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		ts.Fatalf("no feedgen ran since the last status")
	}
	ts.Check(err)
	ts.Check(os.Remove(name))
	if string(got) != args[0] {
		ts.Fatalf("feedgen exited with status %s, want %s", got, args[0])
	}
}

// cmdNextSecond waits until the wall clock is in a later second than when
// it was called. What it waits for is the clock itself, which nothing
// announces: it sleeps until the clock should be there, and looks.
func cmdNextSecond(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) != 0 {
		ts.Fatalf("usage: nextsecond")
	}
	now := time.Now().Unix()
	for time.Now().Unix() <= now {
		time.Sleep(time.Until(time.Unix(now+1, 0)))
	}
}
