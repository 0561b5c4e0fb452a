package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
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
//	curl [-s] [-i] URL
//	             GET URL into stdout (-i: the status line and headers
//	             first); a refused connection is tried again for up to
//	             10 seconds, for a server the script started just before;
//	             $VAR in URL is expanded, quoted or not
//
// $PORT is a free port on 127.0.0.1, for a server the script starts; $REPO
// is the repository's root, whose sample site a script may copy (never
// write there).
//
// go test -update rewrites the expected files that a cmp finds different.
func TestScript(t *testing.T) {
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	testscript.Run(t, testscript.Params{
		Dir: "testdata/script",
		Setup: func(env *testscript.Env) error {
			env.Setenv(statusFileEnv, filepath.Join(env.Getenv("TMPDIR"), "feedgen-status"))
			port, err := freePort()
			if err != nil {
				return err
			}
			env.Setenv("PORT", port)
			env.Setenv("REPO", repo)
			if os.Getenv("GORACE") == "" {
				// Under -race, feedgen would otherwise sleep 1s on every exit.
				env.Setenv("GORACE", "atexit_sleep_ms=0")
			}
			return nil
		},
		Cmds: map[string]func(ts *testscript.TestScript, neg bool, args []string){
			"status":     cmdStatus,
			"nextsecond": cmdNextSecond,
			"curl":       cmdCurl,
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

// freePort returns a port of 127.0.0.1 that nothing listens on.
func freePort() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	_, port, err := net.SplitHostPort(l.Addr().String())
	return port, err
}

// cmdCurl gets a URL, as the examples of the documents do with curl. A
// server started in the background a line before may not listen yet: a
// refused connection is what says so, and the only event there is to wait
// for, so it is tried again until the server listens or 10 s have passed.
func cmdCurl(ts *testscript.TestScript, neg bool, args []string) {
	headers := false
	for len(args) > 1 && strings.HasPrefix(args[0], "-") {
		switch args[0] {
		case "-s":
		case "-i":
			headers = true
		default:
			ts.Fatalf("curl: unknown flag %s", args[0])
		}
		args = args[1:]
	}
	if len(args) != 1 {
		ts.Fatalf("usage: curl [-s] [-i] URL")
	}
	url := os.Expand(args[0], ts.Getenv) // the document's quotes keep $PORT in the word
	client := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(10 * time.Second)
	var resp *http.Response
	for {
		var err error
		resp, err = client.Get(url)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.ECONNREFUSED) || time.Now().After(deadline) {
			if neg {
				return
			}
			ts.Fatalf("curl: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	ts.Check(err)
	var out strings.Builder
	if headers {
		fmt.Fprintf(&out, "%s %s\r\n", resp.Proto, resp.Status)
		ts.Check(resp.Header.Write(&out))
		out.WriteString("\r\n")
	}
	out.Write(body)
	ts.Stdout().Write([]byte(out.String()))
	if neg {
		ts.Fatalf("curl: unexpected success")
	}
}
