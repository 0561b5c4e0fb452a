package server

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/eventtest"
)

// serve runs s.Serve on a loopback port until the test ends, and returns
// the base URL.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "http://" + ln.Addr().String()
}

// TestSlowClients opens connections that send their headers one byte at a
// time (ten per second): they do not keep the server from answering
// others, and each is closed once ReadHeaderTimeout has passed.
func TestSlowClients(t *testing.T) {
	const headerTimeout = 500 * time.Millisecond
	s, _ := newServer(t, Options{Source: Folder(allSite.out), ReadHeaderTimeout: headerTimeout, ReadTimeout: time.Second})
	url := serve(t, s)
	addr := strings.TrimPrefix(url, "http://")

	const slow = 32
	closed := make(chan time.Duration, slow)
	for range slow {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		start := time.Now()
		go func() { // one byte at a time, until the server hangs up
			for _, c := range []byte("GET /articles/ HTTP/1.1\r\nHost: x\r\n\r\n") {
				if _, err := conn.Write([]byte{c}); err != nil {
					return
				}
				time.Sleep(time.Second / 10)
			}
		}()
		go func() {
			// Returns when the server closes the connection; net/http
			// may say "400 Bad Request" first, never more.
			got, _ := io.ReadAll(conn)
			if len(got) > 0 && !strings.HasPrefix(string(got), "HTTP/1.1 400 Bad Request\r\n") {
				closed <- -1
				return
			}
			closed <- time.Since(start)
		}()
	}

	// Meanwhile, other clients are answered at once.
	for range 20 {
		start := time.Now()
		resp, err := http.Get(url + "/articles/?limit=20&offset=3")
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("got status %d, want 200", resp.StatusCode)
		}
		if d := time.Since(start); d > time.Second {
			t.Errorf("a request took %s while slow clients were connected", d)
		}
		time.Sleep(10 * time.Millisecond)
	}

	for range slow {
		select {
		case d := <-closed:
			if d < 0 {
				t.Fatal("a slow client got an answer other than 400")
			}
			if d < headerTimeout-50*time.Millisecond || d > headerTimeout+2*time.Second {
				t.Errorf("a slow connection was closed after %s, want about %s", d, headerTimeout)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a slow connection is still open after 5s")
		}
	}
}

// TestHeaderLimit sends a request line and headers larger than
// MaxHeaderBytes: refused, and the server goes on.
func TestHeaderLimit(t *testing.T) {
	s, _ := newServer(t, Options{Source: Folder(allSite.out), MaxHeaderBytes: 1 << 10})
	url := serve(t, s)
	addr := strings.TrimPrefix(url, "http://")
	for _, req := range []string{
		"GET /articles/?limit=" + strings.Repeat("1", 16<<10) + " HTTP/1.1\r\nHost: x\r\n\r\n",
		"GET /articles/ HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 16<<10) + "\r\n\r\n",
	} {
		conn, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		io.WriteString(conn, req)
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		readBody(t, resp)
		conn.Close()
		if resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
			t.Errorf("got status %d, want 431", resp.StatusCode)
		}
	}
	resp, err := http.Get(url + "/articles/")
	if err != nil {
		t.Fatal(err)
	}
	readBody(t, resp)
	if resp.StatusCode != http.StatusOK {
		t.Errorf("after the large requests: got status %d, want 200", resp.StatusCode)
	}
}

// blockingWriter blocks every Write until release is closed.
type blockingWriter struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *blockingWriter) Write(p []byte) (int, error) {
	b.once.Do(func() { close(b.entered) })
	<-b.release
	return len(p), nil
}

// closeSignal is a listener that closes closed when it is closed.
type closeSignal struct {
	net.Listener
	once   sync.Once
	closed chan struct{}
}

func (l *closeSignal) Close() error {
	err := l.Listener.Close()
	l.once.Do(func() { close(l.closed) })
	return err
}

// TestGracefulShutdown cancels Serve while a request is in flight (held
// in the access log): the request is answered in full, new connections
// are refused, and Serve returns nil.
func TestGracefulShutdown(t *testing.T) {
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	var log eventtest.Buffer
	s, _ := newServer(t, Options{Source: Folder(allSite.out), AccessLog: bw, Log: &log})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln := &closeSignal{Listener: l, closed: make(chan struct{})}
	url := "http://" + ln.Addr().String()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()

	type answer struct {
		status int
		body   []byte
		err    error
	}
	got := make(chan answer, 1)
	go func() {
		resp, err := http.Get(url + "/articles/?limit=20")
		if err != nil {
			got <- answer{err: err}
			return
		}
		defer resp.Body.Close()
		body, err := io.ReadAll(resp.Body)
		got <- answer{resp.StatusCode, body, err}
	}()
	<-bw.entered
	cancel()
	// Shutdown closes the listener at once: new connections are refused.
	select {
	case <-ln.closed:
	case <-time.After(2 * time.Second):
		t.Fatal("the listener is still open 2s into the shutdown")
	}
	if conn, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second); err == nil {
		conn.Close()
		t.Error("new connections are still accepted during the shutdown")
	}
	select {
	case err := <-done:
		t.Fatalf("Serve returned %v with a request in flight", err)
	default:
	}
	close(bw.release)
	a := <-got
	if a.err != nil || a.status != http.StatusOK || string(a.body) != string(file(t, allSite.out, 20, 0)) {
		t.Errorf("the request in flight got status %d, error %v, %d bytes; want 200 and the page", a.status, a.err, len(a.body))
	}
	if err := <-done; err != nil {
		t.Errorf("Serve: got %v, want nil", err)
	}
	if !strings.Contains(log.String(), "stopped serving "+allSite.out) {
		t.Errorf("got log %q, want the stop said", log.String())
	}
}

// TestShutdownTimeout cancels Serve while a request never finishes: Serve
// gives up after ShutdownTimeout and says so.
func TestShutdownTimeout(t *testing.T) {
	bw := &blockingWriter{entered: make(chan struct{}), release: make(chan struct{})}
	defer close(bw.release)
	s, _ := newServer(t, Options{Source: Folder(allSite.out), AccessLog: bw, ShutdownTimeout: 100 * time.Millisecond})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	go func() {
		if resp, err := http.Get("http://" + ln.Addr().String() + "/articles/"); err == nil {
			resp.Body.Close()
		}
	}()
	<-bw.entered
	start := time.Now()
	cancel()
	err = <-done
	if err == nil || !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "requests still running after 100ms") {
		t.Errorf("got %v, want the shutdown deadline exceeded", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Serve took %s to give up, want about 100ms", d)
	}
}

// TestAccessLog checks the combined log format line of each answer.
func TestAccessLog(t *testing.T) {
	var log eventtest.Buffer
	now := time.Date(2026, 11, 1, 15, 4, 5, 0, time.FixedZone("", 3*3600))
	s, _ := newServer(t, Options{Source: Folder(allSite.out), AccessLog: &log, Now: func() time.Time { return now }})
	h := s.Handler()
	size := len(file(t, allSite.out, 5, 0))
	tests := []struct {
		method, target string
		header         http.Header
		want           string
	}{
		{"GET", "/articles/", nil, `192.0.2.1 - - [01/Nov/2026:15:04:05 +0300] "GET /articles/ HTTP/1.1" 200 ` + strconv.Itoa(size) + ` "-" "-"`},
		{"HEAD", "/articles/", http.Header{"User-Agent": {"curl/8"}}, `192.0.2.1 - - [01/Nov/2026:15:04:05 +0300] "HEAD /articles/ HTTP/1.1" 200 - "-" "curl/8"`},
		{"GET", "/articles/?limit=7", http.Header{"Referer": {"https://x/\"q\""}, "User-Agent": {"a\\b\x01я"}}, `192.0.2.1 - - [01/Nov/2026:15:04:05 +0300] "GET /articles/?limit=7 HTTP/1.1" 404 23 "https://x/\x22q\x22" "a\x5Cb\x01\xD1\x8F"`},
		{"POST", "/articles/", nil, `192.0.2.1 - - [01/Nov/2026:15:04:05 +0300] "POST /articles/ HTTP/1.1" 405 41 "-" "-"`},
		{"GET", `/articles?a="b"`, nil, `192.0.2.1 - - [01/Nov/2026:15:04:05 +0300] "GET /articles?a=\x22b\x22 HTTP/1.1" 301 - "-" "-"`},
	}
	for _, tt := range tests {
		before := log.String()
		readBody(t, request(h, tt.method, tt.target, tt.header))
		if got := strings.TrimPrefix(log.String(), before); got != tt.want+"\n" {
			t.Errorf("%s %s: got %q, want %q", tt.method, tt.target, got, tt.want+"\n")
		}
	}
}

// TestRun runs the whole server on port 0: it says where it listens,
// answers there, and stops when the context is cancelled.
func TestRun(t *testing.T) {
	pr, pw := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Source: Folder(allSite.out), Addr: "127.0.0.1:0", Log: pw})
		pw.Close()
	}()
	lines := bufio.NewScanner(pr)
	re := regexp.MustCompile(`^serving ` + regexp.QuoteMeta(allSite.out) + ` on (http://127\.0\.0\.1:\d+)/articles/$`)
	var url string
	for url == "" && lines.Scan() {
		if m := re.FindStringSubmatch(lines.Text()); m != nil {
			url = m[1]
		}
	}
	if url == "" {
		t.Fatal("Run did not say where it listens")
	}
	go io.Copy(io.Discard, pr)
	resp, err := http.Get(url + "/articles/?limit=20&offset=40")
	if err != nil {
		t.Fatal(err)
	}
	if body := readBody(t, resp); string(body) != string(file(t, allSite.out, 20, 40)) {
		t.Errorf("got %.100s, want the page", body)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("Run: got %v, want nil", err)
	}
}
