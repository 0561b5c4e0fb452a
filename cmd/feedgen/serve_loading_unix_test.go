//go:build unix

package main

import (
	"bufio"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestServeStopsWhileLoading starts feedgen serve on a build it cannot
// load yet: a build holds the folder's lock (here the test does) and a
// page does not match the manifest, so serve waits for that build (up to
// 10 s). It listens at once all the same, and answers 503 with
// Retry-After meanwhile (after holding a request a second); SIGTERM then
// stops it within 2 s, exit 0. An address taken is said at once, not once
// the build is loaded.
func TestServeStopsWhileLoading(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), e2eConfig)
	for _, id := range []string{"1", "2", "3"} {
		testfiles.WriteFile(t, filepath.Join(site, "content/news/politics/a"+id+".md"), article(id))
	}
	if r := runFeedgen(t, dir, nil, "build", "--config", "site/config.yaml", "--quiet"); r.code != 0 {
		t.Fatalf("build: exit %d: %s", r.code, r.stderr)
	}
	out := filepath.Join(site, "public")
	if err := os.Truncate(filepath.Join(out, "articles/20/0.json"), 10); err != nil {
		t.Fatal(err)
	}
	lock, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer lock.Close()
	if err := syscall.Flock(int(lock.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}

	p := startUntil(t, dir, regexp.MustCompile(`^loading site/public: listening on (http://127\.0\.0\.1:\d+)/articles/, answering once it is loaded \(503 after 1s\)$`),
		"serve", "--dir", "site/public", "--addr", "127.0.0.1:0")
	status, h, body := get(t, "GET", p.url+"/articles/")
	if status != 503 || h.Get("Retry-After") != "5" || string(body) != `{"detail":"Service temporarily unavailable, try again later."}` {
		t.Errorf("while loading: %d %v %q, want 503 with Retry-After", status, h, body)
	}
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-p.done:
	case <-time.After(2 * time.Second):
		t.Fatalf("feedgen serve still running 2 s after SIGTERM; stderr:\n%s", p.stderr())
	}
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM while loading: %v, want exit 0; stderr:\n%s", err, p.stderr())
	}
	t.Logf("stopped %s after SIGTERM", time.Since(start))
	if !strings.Contains(p.stderr(), "stopped before the build of site/public was loaded\n") {
		t.Errorf("stderr:\n%s", p.stderr())
	}

	// An address taken.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	start = time.Now()
	r := runFeedgen(t, dir, nil, "serve", "--dir", "site/public", "--addr", ln.Addr().String())
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("an address taken was said after %s", d)
	}
	want := "feedgen: listening: listen tcp " + ln.Addr().String() + ": bind: address already in use: another server listens there; pass --addr with another port (port 0 picks a free one)\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("an address taken: exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
	}
}

// TestSecondSignal stops a command that does not return once stopped (a
// safety net: feedgen's own commands return): a second SIGTERM ends the
// process at once, as the first stops the catching of signals.
func TestSecondSignal(t *testing.T) {
	path, err := exec.LookPath("feedgen-stop-test")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path)
	cmd.Env = feedgenEnv()
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	lines := bufio.NewScanner(out)
	for _, want := range []string{"ready", "stopping"} {
		if !lines.Scan() || lines.Text() != want {
			t.Fatalf("got %q, want %q", lines.Text(), want)
		}
		if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(2 * time.Second):
		t.Fatal("still running 2 s after a second SIGTERM")
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGTERM {
		t.Errorf("after a second SIGTERM: %v, want the process ended by it", err)
	}
}
