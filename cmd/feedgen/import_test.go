package main

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportStopsOnSignal sends SIGTERM, then SIGINT, to feedgen import
// while the service it reads does not answer: it stops within a second or
// two, writes nothing, and says it was interrupted (the probe's case: an
// import still running two minutes after SIGTERM).
func TestImportStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			asked := make(chan struct{}, 1)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				select {
				case asked <- struct{}{}:
				default:
				}
				<-r.Context().Done()
			}))
			defer srv.Close()
			out := filepath.Join(t.TempDir(), "site")
			cmd := exec.Command(binary(t), "import", srv.URL+"/articles/", "-o", out)
			cmd.Env = feedgenEnv()
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			<-asked
			start := time.Now()
			cmd.Process.Signal(sig)
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				cmd.Process.Kill()
				<-exited
				t.Fatalf("feedgen import still running 5s after %v", sig)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("stopped %v after %v, want within 2s", d, sig)
			}
			if code := cmd.ProcessState.ExitCode(); code == 0 {
				t.Errorf("exit code 0 after %v; stderr %q", sig, stderr.String())
			}
			if !strings.Contains(stderr.String(), "interrupted") {
				t.Errorf("stderr %q, want it to say it was interrupted", stderr.String())
			}
			if entries, _ := filepath.Glob(filepath.Join(out, "*")); len(entries) > 0 {
				t.Errorf("wrote %v", entries)
			}
		})
	}
}
