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
	"os/exec"
	"path/filepath"
	"slices"
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
// end-to-end tests, and that copy runs main's run. Under -race, that copy
// is replaced by the same test binary built without it (see plainCommands).
func TestMain(m *testing.M) {
	var tm testscript.TestingM = m
	if raceEnabled && os.Getenv(scriptRaceEnv) == "" {
		tm = plainCommands{m}
	}
	testscript.Main(tm, map[string]func(){
		"feedgen": func() {
			code := run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr, os.Getenv)
			if name := os.Getenv(statusFileEnv); name != "" {
				if err := os.WriteFile(name, []byte(strconv.Itoa(code)), 0o644); err != nil {
					panic(err)
				}
			}
			os.Exit(code)
		},
		"feedgen-stop-test": stopTest,
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
//	             first); a refused connection, or feedgen serve's 503
//	             while it loads its build (Connection: close), is tried
//	             again for up to 10 seconds, for a server the script
//	             started just before;
//	             $VAR in URL is expanded, quoted or not
//	[!] waitfile PATH
//	             wait until the file exists (10 s at most): after a
//	             daemon's start, its pid file, so that the daemon is
//	             stopped even if the script fails next; with !, until it
//	             is gone: after a stop, the pid file, which says it stopped
//
// [runtime:NAME] is true when the program NAME is installed (see
// runtimeCondition).
//
// $PORT is a free port on 127.0.0.1, for a server the script starts, and
// $PORT2 another, for the feedgen serve whose answers it compares the
// server's with; $REPO is the repository's root, whose sample site a
// script may copy (never write there). A server that a script started as
// a daemon, as the documents do (nginx, Apache), is stopped when the
// script ends, if it left one running by failing before it stopped it.
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
			if port, err = freePort(); err != nil {
				return err
			}
			env.Setenv("PORT2", port)
			env.Setenv("REPO", repo)
			if !slices.Contains(filepath.SplitList(env.Getenv("PATH")), sbin) {
				env.Setenv("PATH", env.Getenv("PATH")+string(filepath.ListSeparator)+sbin)
			}
			// Started by root, nginx's and Apache's workers run as
			// nobody, and must be able to reach the script's build, in
			// $WORK, whose parent os.MkdirTemp made for the owner only.
			if os.Geteuid() == 0 {
				if err := os.Chmod(filepath.Dir(env.WorkDir), 0o755); err != nil {
					return err
				}
			}
			env.Defer(func() { stopDaemons(env.WorkDir) })
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
			"waitfile":   cmdWaitFile,
		},
		Condition:          runtimeCondition,
		RequireUniqueNames: true,
		UpdateScripts:      *update,
	})
}

// runtimeCondition is the condition [runtime:NAME]: the program NAME, a
// platform the documents' examples run (nginx, apache2, caddy, workerd),
// is installed: in $PATH or in /usr/sbin, which Setup adds to the
// scripts' PATH (Debian keeps nginx and apache2 there, out of a user's
// PATH), as the rules tests find them (needProgram). When it is not, the
// condition is false, so that a script can skip, unless
// FEEDGEN_RUNTIMES=required (make test, which installs them, sets it):
// then the script fails, as the rules tests do.
func runtimeCondition(cond string) (bool, error) {
	name, ok := strings.CutPrefix(cond, "runtime:")
	if !ok {
		return false, fmt.Errorf("unknown condition %q", cond)
	}
	for _, p := range []string{name, filepath.Join(sbin, name)} {
		if _, err := exec.LookPath(p); err == nil {
			return true, nil
		}
	}
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		return false, fmt.Errorf("%s not found: make test installs it (make runtimes)", name)
	}
	return false, nil
}

// sbin is where Debian keeps the servers, out of a user's PATH.
const sbin = "/usr/sbin"

// daemonPIDFiles are the pid files of the servers a script may start as
// daemons with the documents' commands: nginx and apache --standalone
// configs keep them in their folder.
var daemonPIDFiles = []string{"nginx.pid", "httpd.pid"}

// stopDaemons stops the daemons whose pid files are in dir or the
// folders in it: those a script started and left running. Each is sent
// SIGTERM and waited for, and killed if it has not exited in 10 s: none
// is left running, as root, after the test. A daemon writes its pid file
// after the command that starts it returns: a script waits for it
// (waitfile) before anything that may fail.
func stopDaemons(dir string) {
	var pids []int
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !slices.Contains(daemonPIDFiles, d.Name()) {
			return nil
		}
		data, err := os.ReadFile(path)
		if err != nil {
			return nil
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(data))); err == nil && pid > 0 {
			if p, err := os.FindProcess(pid); err == nil && p.Signal(syscall.SIGTERM) == nil {
				pids = append(pids, pid)
			}
		}
		return nil
	})
	for _, pid := range pids {
		// Not a child of the test's: nothing announces its exit.
		deadline := time.Now().Add(10 * time.Second)
		for running(pid) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if p, err := os.FindProcess(pid); err == nil && running(pid) {
			p.Kill()
		}
	}
}

// running says whether the process pid is running: it exists and is not
// a zombie (exited, waiting for a parent that may never reap it).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		if _, perr := os.Stat("/proc/self/stat"); perr == nil {
			return false // gone
		}
		p, err := os.FindProcess(pid) // no /proc to tell a zombie by
		return err == nil && p.Signal(syscall.Signal(0)) == nil
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	i := strings.LastIndexByte(string(stat), ')')
	return i < 0 || i+2 >= len(stat) || stat[i+2] != 'Z'
}

// cmdWaitFile waits until the file exists (! waitfile: until it is
// gone), for up to 10 s: the pid file a daemon writes after the command
// that started it returned (apache2 -k start), which is what stopDaemons
// finds it by, and removes once stopped. A file appearing is announced by
// nothing a script can wait on: it is looked for every 20 ms.
func cmdWaitFile(ts *testscript.TestScript, neg bool, args []string) {
	if len(args) != 1 {
		ts.Fatalf("usage: [!] waitfile PATH")
	}
	name := ts.MkAbs(args[0])
	deadline := time.Now().Add(10 * time.Second)
	for {
		_, err := os.Stat(name)
		if (err == nil) != neg {
			return
		}
		if time.Now().After(deadline) {
			if neg {
				ts.Fatalf("waitfile: %s still there after 10s", args[0])
			}
			ts.Fatalf("waitfile: no %s after 10s", args[0])
		}
		time.Sleep(20 * time.Millisecond)
	}
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
		if err == nil && resp.StatusCode == http.StatusServiceUnavailable && resp.Close && time.Now().Before(deadline) {
			// feedgen serve listens before it loads its build and answers
			// 503 with Connection: close until it is loaded (a page not
			// ready keeps the connection): a server still starting, as
			// a refused connection is.
			resp.Body.Close()
			time.Sleep(20 * time.Millisecond)
			continue
		}
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
