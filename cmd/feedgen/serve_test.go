package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// servedProcess is a running "feedgen serve".
type servedProcess struct {
	cmd  *exec.Cmd
	url  string // http://ADDR
	mu   sync.Mutex
	errs strings.Builder // its stderr so far
	more chan struct{}   // closed at the next line of stderr
	done chan struct{}   // closed when stderr is at its end
}

func (p *servedProcess) stderr() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.errs.String()
}

// waitStderr waits until a line of stderr has s in it; it fails the test
// when stderr ends, or 10s pass, first.
func (p *servedProcess) waitStderr(t *testing.T, s string) {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		p.mu.Lock()
		found, more := strings.Contains(p.errs.String(), s), p.more
		p.mu.Unlock()
		if found {
			return
		}
		select {
		case <-more:
		case <-p.done:
			if !strings.Contains(p.stderr(), s) {
				t.Fatalf("feedgen serve ended its stderr without %q:\n%s", s, p.stderr())
			}
			return
		case <-timer.C:
			t.Fatalf("feedgen serve did not say %q within 10s; stderr:\n%s", s, p.stderr())
		}
	}
}

// startServe starts the binary with args in dir and waits for it to say
// where it serves (serve --watch says it as "previewing on").
func startServe(t *testing.T, dir string, args ...string) *servedProcess {
	t.Helper()
	return startUntil(t, dir, regexp.MustCompile(`^(?:serving .*|previewing) on (http://127\.0\.0\.1:\d+)/articles/(?:$|:)`), args...)
}

// startUntil starts the binary with args in dir and waits for a line of
// its stderr that re matches: its first group is the server's URL.
func startUntil(t *testing.T, dir string, re *regexp.Regexp, args ...string) *servedProcess {
	t.Helper()
	p := &servedProcess{cmd: exec.Command(binary(t), args...), more: make(chan struct{}), done: make(chan struct{})}
	p.cmd.Dir = dir
	p.cmd.Env = feedgenEnv()
	pipe, err := p.cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
			p.cmd.Wait()
		}
	})
	found := make(chan string, 1)
	go func() {
		defer close(p.done)
		lines := bufio.NewScanner(pipe)
		for lines.Scan() {
			p.mu.Lock()
			p.errs.WriteString(lines.Text() + "\n")
			close(p.more)
			p.more = make(chan struct{})
			p.mu.Unlock()
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
		}
		io.Copy(io.Discard, pipe)
	}()
	select {
	case p.url = <-found:
	case <-time.After(10 * time.Second):
		t.Fatalf("feedgen serve did not say where it listens; stderr:\n%s", p.stderr())
	}
	return p
}

// get fetches url and returns its status, headers and body.
func get(t *testing.T, method, url string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, body
}

// article is the markdown of a small article with id 1 to 9.
func article(id string) string {
	return "---\nid: " + id + "\ntitle: Article " + id + "\npublished: 2025-01-0" + id + "T10:00:00\nauthor: ivan\n---\nBody.\n"
}

// TestServeE2E builds a site with the binary, serves it with the binary
// over TCP, rebuilds it while it is served, and stops it with SIGTERM.
func TestServeE2E(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), e2eConfig)
	for _, id := range []string{"1", "2", "3"} {
		testfiles.WriteFile(t, filepath.Join(site, "content/news/politics/a"+id+".md"), article(id))
	}
	env := []string{"SOURCE_DATE_EPOCH=1767225600"} // 2026-01-01T00:00:00Z
	if r := runFeedgen(t, dir, env, "build", "--config", "site/config.yaml", "--quiet"); r.code != 0 {
		t.Fatalf("build: exit %d: %s", r.code, r.stderr)
	}
	p := startServe(t, dir, "serve", "--dir", "site/public", "--addr", "127.0.0.1:0", "--log", "access.log")
	if !strings.Contains(p.stderr(), "serving site/public on "+p.url+"/articles/") {
		t.Errorf("got stderr %q, want the serving line", p.stderr())
	}

	var m struct {
		Files []struct{ Path, SHA256 string }
	}
	data, err := os.ReadFile(filepath.Join(site, "public", "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	etag := ""
	for _, f := range m.Files {
		if f.Path == "articles/index.json" {
			etag = `"` + f.SHA256 + `"`
		}
	}
	index, err := os.ReadFile(filepath.Join(site, "public", "articles", "index.json"))
	if err != nil {
		t.Fatal(err)
	}

	status, h, body := get(t, "GET", p.url+"/articles/")
	if status != 200 || string(body) != string(index) {
		t.Errorf("GET /articles/: got %d %.100s, want 200 and index.json", status, body)
	}
	for k, want := range map[string]string{
		"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json", "Etag": etag,
		"Last-Modified": "Thu, 01 Jan 2026 00:00:00 GMT", "Content-Length": strconv.Itoa(len(index)),
	} {
		if got := h.Get(k); got != want {
			t.Errorf("GET /articles/: got %s %q, want %q", k, got, want)
		}
	}
	tests := []struct {
		method, target string
		status         int
		body           string
	}{
		{"GET", "/articles/?limit=20&offset=99", 200, `{"count":3,"next":null,"previous":"https://api.example.com/articles/?limit=20&offset=79","results":[]}`},
		{"GET", "/articles/?limit=%D9%A2%D9%A0&offset=3", 200, `{"count":3,"next":null,"previous":"https://api.example.com/articles/?limit=20","results":[]}`},
		{"GET", "/articles/?limit=7", 404, `{"detail":"Not found."}`},
		{"GET", "/articles/?limit=50", 200, string(index)}, // clamped to max_limit 20
		{"GET", "/articles/20/0.json", 404, `{"detail":"Not found."}`},
		{"GET", "/manifest.json", 404, `{"detail":"Not found."}`},
		{"DELETE", "/articles/", 405, `{"detail":"Method \"DELETE\" not allowed."}`},
		{"GET", "/articles?limit=20", 301, ""},
	}
	for _, tt := range tests {
		status, _, body := get(t, tt.method, p.url+tt.target)
		if status != tt.status || string(body) != tt.body {
			t.Errorf("%s %s: got %d %q, want %d %q", tt.method, tt.target, status, body, tt.status, tt.body)
		}
	}

	// A rebuild with one more article is picked up without a restart.
	testfiles.WriteFile(t, filepath.Join(site, "content/news/politics/a4.md"), article("4"))
	if r := runFeedgen(t, dir, env, "build", "--config", "site/config.yaml", "--quiet"); r.code != 0 {
		t.Fatalf("rebuild: exit %d: %s", r.code, r.stderr)
	}
	// The server says so once it answers from the rebuild.
	p.waitStderr(t, "switched to the build of 2026-01-01T00:00:00Z (4 articles")
	if _, _, body := get(t, "GET", p.url+"/articles/"); !strings.HasPrefix(string(body), `{"count":4,`) {
		t.Errorf("GET /articles/ after the switch: got %.100s, want the rebuild's 4 articles", body)
	}

	// SIGTERM: a graceful stop, exit code 0.
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-p.done
	if err := p.cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0; stderr:\n%s", err, p.stderr())
	}
	for _, want := range []string{"loaded the build of 2026-01-01T00:00:00Z (3 articles", "switched to the build of 2026-01-01T00:00:00Z (4 articles", "stopped serving site/public"} {
		if !strings.Contains(p.stderr(), want) {
			t.Errorf("stderr lacks %q:\n%s", want, p.stderr())
		}
	}
	log, err := os.ReadFile(filepath.Join(dir, "access.log"))
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^127\.0\.0\.1 - - \[[^]]+\] "GET /articles/ HTTP/1\.1" 200 \d+ "-" "Go-http-client/1\.1"$`).Match(log) {
		t.Errorf("access log lacks the first request:\n%s", log)
	}
}
