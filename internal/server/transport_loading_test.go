package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"io/fs"
	"net"
	"net/http"
	"os"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/manifest"
)

// hookFS is an output folder whose Open calls hook first, with the file's
// name: a slow disk, or one a test holds still.
type hookFS struct {
	fs.FS
	hook func(name string)
}

func (h hookFS) Open(name string) (fs.File, error) {
	h.hook(name)
	return h.FS.Open(name)
}

// TestLoadStops cancels the load of a build at its first page file (as
// SIGTERM cancels it): New returns, having opened no more than the files
// its workers had started; it does not read the rest (a build of 200,000
// files takes seconds to read). In the pages layout and the chunks
// layout.
func TestLoadStops(t *testing.T) {
	for _, tt := range []struct {
		name string
		out  func(t *testing.T) string
	}{
		{"pages", func(*testing.T) string { return allSite.out }},
		{"chunks", func(t *testing.T) string { return chunkSite(t).out }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var (
				mu                  sync.Mutex
				opened, afterCancel int
			)
			fsys := hookFS{FS: os.DirFS(tt.out(t)), hook: func(name string) {
				mu.Lock()
				defer mu.Unlock()
				if ctx.Err() != nil {
					afterCancel++
				}
				if name != manifest.Name {
					if opened++; opened == 1 {
						cancel()
					}
				}
			}}
			err := eventtest.Returns(t, 10*time.Second, "New", func() error {
				_, err := New(ctx, Options{Source: Archive("slow", fsys, nil)})
				return err
			})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("New cancelled: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			if workers := 2 * max(2, runtime.GOMAXPROCS(0)); afterCancel > workers {
				t.Errorf("%d files opened after the load was cancelled, want at most %d (the workers')", afterCancel, workers)
			}
		})
	}
}

// startHeld runs Run on allSite's build, whose load waits at its first
// page file until release is closed; it returns the server's URL once Run
// says it listens, and once the load waits.
func startHeld(t *testing.T, ctx context.Context, release chan struct{}, log *eventtest.Buffer) (string, chan error) {
	t.Helper()
	hold := make(chan struct{})
	var once sync.Once
	fsys := hookFS{FS: os.DirFS(allSite.out), hook: func(name string) {
		if name != manifest.Name {
			once.Do(func() { close(hold) })
			<-release
		}
	}}
	done := make(chan error, 1)
	go func() { done <- Run(ctx, Options{Source: Archive("slow", fsys, nil), Addr: "127.0.0.1:0", Log: log}) }()
	listening := regexp.MustCompile(`^loading slow: listening on (http://127\.0\.0\.1:\d+)/articles/, answering once it is loaded \(503 after 1s\)\n`)
	var base string
	if !log.Wait(10*time.Second, func(s string) bool {
		m := listening.FindStringSubmatch(s)
		if m != nil {
			base = m[1]
		}
		return m != nil
	}) {
		t.Fatalf("Run did not say it listens; log:\n%s", log.String())
	}
	<-hold
	return base, done
}

// TestRunListensFirst starts Run on a build whose load is held still: it
// listens at once and says so. A request that comes while the build loads
// waits for it, and gets its answer; one that has waited a second gets
// 503 with Retry-After. Cancelled while loading (SIGTERM), Run returns nil
// within a second. An address taken is said at once, before any file is
// read.
func TestRunListensFirst(t *testing.T) {
	t.Run("loaded soon", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		release := make(chan struct{})
		var log eventtest.Buffer
		base, done := startHeld(t, ctx, release, &log)
		c, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, "GET /articles/?limit=5 HTTP/1.1\r\nHost: feed\r\n\r\n"); err != nil {
			t.Fatal(err)
		}
		close(release)
		resp, err := http.ReadResponse(bufio.NewReader(c), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || string(body) != string(file(t, allSite.out, 5, 0)) {
			t.Errorf("a request that came while loading: %d %.80q, want 200 and the page", resp.StatusCode, body)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	t.Run("loading long", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		release := make(chan struct{})
		var log eventtest.Buffer
		base, done := startHeld(t, ctx, release, &log)
		for _, method := range []string{http.MethodGet, http.MethodHead} {
			req, _ := http.NewRequest(method, base+"/articles/?limit=5", nil)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			want := `{"detail":"Service temporarily unavailable, try again later."}`
			if method == http.MethodHead {
				want = ""
			}
			if resp.StatusCode != http.StatusServiceUnavailable || string(body) != want || resp.Header.Get("Retry-After") != "5" ||
				resp.Header.Get("Content-Type") != "application/json" || !resp.Close {
				t.Errorf("%s while loading: %d %q %v (close %v), want 503 with Retry-After, closing", method, resp.StatusCode, body, resp.Header, resp.Close)
			}
		}
		start := time.Now()
		cancel()
		close(release) // the opens under way return; no other starts
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run stopped while loading: %v, want nil", err)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("Run took %s to stop while loading", d)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("Run still loading 2 s after it was stopped; log:\n%s", log.String())
		}
		if !regexp.MustCompile(`(?m)^stopped before the build of slow was loaded$`).MatchString(log.String()) {
			t.Errorf("log:\n%s", log.String())
		}
	})
	// A connection the loading phase accepted is answered, however late
	// its request comes: on a loaded machine its request may be read
	// only after the build is loaded, and a closed connection is an
	// error to the client where a 503 says "again" (a CI run's curl got
	// EOF this way). A sends half its request; B's answer says A was
	// accepted (one accept loop, in order); A's request ends only once
	// the server serves.
	t.Run("accepted while loading, answered after", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		release := make(chan struct{})
		var log eventtest.Buffer
		base, done := startHeld(t, ctx, release, &log)
		a, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
		if err != nil {
			t.Fatal(err)
		}
		defer a.Close()
		if _, err := io.WriteString(a, "GET /articles/?limit=5 HTTP/1.1\r\nHost: feed\r\n"); err != nil {
			t.Fatal(err)
		}
		resp, err := http.Get(base + "/articles/?limit=5")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable {
			t.Fatalf("B while loading: %d, want 503", resp.StatusCode)
		}
		close(release)
		if !log.Wait(10*time.Second, func(s string) bool { return strings.Contains(s, "serving slow on ") }) {
			t.Fatalf("not serving; log:\n%s", log.String())
		}
		if _, err := io.WriteString(a, "\r\n"); err != nil {
			t.Fatalf("A, its request's end: %v", err)
		}
		resp, err = http.ReadResponse(bufio.NewReader(a), nil)
		if err != nil {
			t.Fatalf("A, accepted while loading, its request ended once serving: %v, want an answer", err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusServiceUnavailable || !resp.Close {
			t.Errorf("A: %d (close %v), want 503, closing", resp.StatusCode, resp.Close)
		}
		resp, err = http.Get(base + "/articles/?limit=5")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("after A: %d, want 200", resp.StatusCode)
		}
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	t.Run("address taken", func(t *testing.T) {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		opened := 0
		fsys := hookFS{FS: os.DirFS(allSite.out), hook: func(string) { opened++ }}
		err = Run(context.Background(), Options{Source: Archive("slow", fsys, nil), Addr: ln.Addr().String()})
		if !errors.Is(err, syscall.EADDRINUSE) || opened > 0 {
			t.Errorf("an address taken: %v, after %d files opened; want EADDRINUSE before any", err, opened)
		}
	})
}
