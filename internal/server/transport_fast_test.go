package server

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
)

// exchange writes req to a new connection to addr and returns the raw
// bytes of the answers to the requests in it, whose methods are methods.
func exchange(t testing.TB, addr, req string, methods ...string) string {
	t.Helper()
	got, err := tryExchange(addr, req, methods...)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// tryExchange is exchange, for a goroutine other than the test's.
func tryExchange(addr, req string, methods ...string) (string, error) {
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(conn, req); err != nil {
		return "", err
	}
	var raw bytes.Buffer
	br := bufio.NewReader(io.TeeReader(conn, &raw))
	for _, method := range methods {
		resp, err := http.ReadResponse(br, &http.Request{Method: method})
		if err != nil {
			return "", fmt.Errorf("reading the answer to %q: %v", req, err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	// What bufio read ahead is not part of the answers: there is none,
	// the server sends nothing more.
	return raw.String()[:raw.Len()-br.Buffered()], nil
}

var dateField = regexp.MustCompile(`\r\nDate: [^\r]*\r\n`)

// TestFastPathMatchesNetHTTP sends the same requests to the server and to
// net/http serving the same handler: the answers are the same bytes (but
// for the Date), whether the fast path answers them or hands them over.
func TestFastPathMatchesNetHTTP(t *testing.T) {
	for _, mode := range sendModes {
		t.Run(mode.name, func(t *testing.T) {
			opt := Options{Source: Folder(allSite.out)}
			mode.opt(&opt)
			s, _ := newServer(t, opt)
			fastPathMatchesNetHTTP(t, s)
		})
	}
	t.Run("in memory", func(t *testing.T) {
		s, _ := newServer(t, Options{Source: Archive(allSite.out, os.DirFS(allSite.out), nil)})
		fastPathMatchesNetHTTP(t, s)
	})
}

func fastPathMatchesNetHTTP(t *testing.T, s *Server) {
	fast, plain := serveTwoWays(t, s)

	etag := `"` + readManifest(t, allSite.out).Files[0].SHA256 + `"`
	for _, f := range readManifest(t, allSite.out).Files {
		if f.Path == "articles/5/0.json" {
			etag = `"` + f.SHA256 + `"`
		}
	}
	const h = " HTTP/1.1\r\nHost: example.com:8080\r\n"
	tests := []struct {
		name    string
		req     string
		methods []string // of the requests in req; default the first word of req
	}{
		{"index", "GET /articles/" + h + "\r\n", nil},
		{"HEAD", "HEAD /articles/" + h + "\r\n", nil},
		{"limit and offset", "GET /articles/?limit=20&offset=7" + h + "\r\n", nil},
		{"odd numbers", "GET /articles/?limit=%2020&offset=+0_7&limit=%D9%A2%D9%A0" + h + "\r\n", nil},
		{"past the end", "GET /articles/?offset=1000000000000000000000000" + h + "\r\n", nil},
		{"HEAD past the end", "HEAD /articles/?offset=99" + h + "\r\n", nil},
		{"limit not rendered", "GET /articles/?limit=7" + h + "\r\n", nil},
		{"semicolons", "GET /articles/?limit=7;offset=14" + h + "\r\n", nil},
		{"304", "GET /articles/" + h + "If-None-Match: " + etag + "\r\n\r\n", nil},
		{"304 second field", "GET /articles/" + h + "If-None-Match: \"x\"\r\nif-none-match: W/" + etag + "\r\n\r\n", nil},
		{"304 since", "HEAD /articles/" + h + "If-Modified-Since: Sun, 01 Nov 2026 12:00:00 GMT\r\n\r\n", nil},
		{"200 since earlier", "GET /articles/" + h + "If-Modified-Since: Sun, 01 Nov 2026 11:00:00 GMT\r\n\r\n", nil},
		{"redirect", "GET /articles?limit=20&x=%22y%22" + h + "\r\n", nil},
		{"redirect bare", "HEAD /articles" + h + "\r\n", nil},
		{"redirect raw bytes", "GET /articles?q=\xd1\x8f\"<>" + h + "\r\n", nil},
		{"other path", "GET /articles/20/0.json" + h + "\r\n", nil},
		{"root", "GET /" + h + "\r\n", nil},
		{"keep-alive and headers", "GET /articles/?limit=50" + h + "Connection: keep-alive\r\nUser-Agent: x\r\nAccept: */*\r\n\r\n", nil},
		{"pipelined", "GET /articles/?offset=3" + h + "\r\nHEAD /articles/?limit=20" + h + "\r\nGET /nothing" + h + "\r\n", []string{"GET", "HEAD", "GET"}},
		// Handed to net/http.
		{"OPTIONS", "OPTIONS /articles/" + h + "\r\n", nil},
		{"POST", "POST /articles/" + h + "Content-Length: 3\r\n\r\nabc", nil},
		{"HTTP/1.0", "GET /articles/ HTTP/1.0\r\n\r\n", nil},
		{"Connection: close", "GET /articles/" + h + "Connection: close\r\n\r\n", nil},
		{"escaped path", "GET /%61rticles/?limit=5" + h + "\r\n", nil},
		{"bare LF", "GET /articles/ HTTP/1.1\nHost: x\n\n", nil},
		{"no Host", "GET /articles/ HTTP/1.1\r\n\r\n", nil},
		{"two Hosts", "GET /articles/" + h + "Host: y\r\n\r\n", nil},
		{"bad header", "GET /articles/" + h + "Bad Name: x\r\n\r\n", nil},
		{"head over the limit", "GET /articles/" + h + "X-Big: " + strings.Repeat("a", 13000) + "\r\n\r\n", nil},
		{"query over the limit", "GET /articles/?offset=" + strings.Repeat("9", 13000) + h + "\r\n", nil},
		{"fast then handed over", "GET /articles/?limit=5" + h + "\r\nOPTIONS /articles/" + h + "\r\n", []string{"GET", "OPTIONS"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { sameBothWays(t, fast, plain, tt.req, tt.methods) })
	}
}

// serveTwoWays serves s with Serve (the fast path, and net/http for what
// it hands over) and with a plain net/http server of its handler, and
// returns the addresses of both.
func serveTwoWays(t *testing.T, s *Server) (fast, plain string) {
	t.Helper()
	fast = strings.TrimPrefix(serve(t, s), "http://")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ref := &http.Server{Handler: s.Handler(), DisableGeneralOptionsHandler: true, MaxHeaderBytes: DefaultMaxHeaderBytes}
	go ref.Serve(ln)
	t.Cleanup(func() { ref.Shutdown(context.Background()) })
	return fast, ln.Addr().String()
}

// sameBothWays sends req to the two addresses of serveTwoWays and checks
// that the answers are the same bytes (but for the Date). methods are
// those of the requests in req; nil, the first word of req.
func sameBothWays(t *testing.T, fast, plain, req string, methods []string) string {
	t.Helper()
	if methods == nil {
		methods = strings.Fields(req)[:1]
	}
	got := dateField.ReplaceAllString(exchange(t, fast, req, methods...), "\r\nDate: D\r\n")
	want := dateField.ReplaceAllString(exchange(t, plain, req, methods...), "\r\nDate: D\r\n")
	if got != want {
		t.Errorf("got\n%.600q\nwant (net/http)\n%.600q", got, want)
	}
	return got
}

// TestParseHead checks which requests the fast path answers, waits for,
// or hands to net/http.
func TestParseHead(t *testing.T) {
	const (
		answer = iota
		more
		handOff
	)
	tests := []struct {
		name string
		head string
		want int
	}{
		{"GET", "GET /articles/?limit=20 HTTP/1.1\r\nHost: x\r\n\r\n", answer},
		{"HEAD", "HEAD / HTTP/1.1\r\nhost: x\r\n\r\n", answer},
		{"empty Host", "GET / HTTP/1.1\r\nHost:\r\n\r\n", answer},
		{"keep-alive", "GET / HTTP/1.1\r\nHost: x\r\nConnection: Keep-Alive\r\n\r\n", answer},
		{"partial line", "GET /articles/?li", more},
		{"partial head", "GET / HTTP/1.1\r\nHost: x\r\n", more},
		{"CR without LF yet", "GET / HTTP/1.1\r\nHost: x\r", more},
		{"POST", "POST / HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"lower-case method", "get / HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"HTTP/1.0", "GET / HTTP/1.0\r\nHost: x\r\n\r\n", handOff},
		{"HTTP/2 preface", "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", handOff},
		{"absolute form", "GET http://x/articles/ HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"double space", "GET  / HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"escaped path", "GET /articles%2F HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"fragment", "GET /articles/#x HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"control byte", "GET /articles/?a=\x01 HTTP/1.1\r\nHost: x\r\n\r\n", handOff},
		{"bare LF request line", "GET / HTTP/1.1\nHost: x\r\n\r\n", handOff},
		{"bare LF header", "GET / HTTP/1.1\r\nHost: x\nAccept: y", handOff},
		{"no Host", "GET / HTTP/1.1\r\nAccept: x\r\n\r\n", handOff},
		{"two Hosts", "GET / HTTP/1.1\r\nHost: x\r\nHOST: y\r\n\r\n", handOff},
		{"bad Host", "GET / HTTP/1.1\r\nHost: a b\r\n\r\n", handOff},
		{"folded header", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\r\n b\r\n\r\n", handOff},
		{"bad header name", "GET / HTTP/1.1\r\nHost: x\r\nX A: b\r\n\r\n", handOff},
		{"no colon", "GET / HTTP/1.1\r\nHost: x\r\nXA\r\n\r\n", handOff},
		{"control in value", "GET / HTTP/1.1\r\nHost: x\r\nX-A: a\x00b\r\n\r\n", handOff},
		{"body", "GET / HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n", handOff},
		{"chunked", "GET / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n", handOff},
		{"Expect", "GET / HTTP/1.1\r\nHost: x\r\nExpect: 100-continue\r\n\r\n", handOff},
		{"Connection: close", "GET / HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", handOff},
		{"Upgrade", "GET / HTTP/1.1\r\nHost: x\r\nConnection: Upgrade\r\nUpgrade: h2c\r\n\r\n", handOff},
		{"too large", "GET / HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 6<<10), handOff},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := &fastConn{limit: 1<<10 + 4<<10}
			n, ok := c.parse([]byte(tt.head))
			got := answer
			switch {
			case !ok:
				got = handOff
			case n == 0:
				got = more
			}
			if got != tt.want {
				t.Fatalf("got %d (answer, more, hand off), want %d", got, tt.want)
			}
			if got == answer && n != len(tt.head) {
				t.Errorf("got a head of %d bytes, want %d", n, len(tt.head))
			}
		})
	}
}

// FuzzParseHead checks that the fast path only takes requests that
// net/http reads the same way: same method, target, Host and conditional
// headers, and the same length of head.
func FuzzParseHead(f *testing.F) {
	for _, s := range []string{
		"GET /articles/?limit=20 HTTP/1.1\r\nHost: x\r\n\r\n",
		"HEAD /articles HTTP/1.1\r\nHost: a:1\r\nIf-None-Match: \"a\"\r\nif-none-match: *\r\nIf-Modified-Since: x\r\n\r\nGET",
		"GET / HTTP/1.1\r\nHost: x\r\nConnection: keep-alive, keep-alive\r\nUser-Agent: \xd1\x8f\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		c := &fastConn{limit: 8 << 10}
		n, ok := c.parse(b)
		if !ok || n == 0 {
			return
		}
		req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(b[:n])))
		if err != nil {
			t.Fatalf("the fast path took %q, net/http rejects it: %v", b[:n], err)
		}
		r := &c.req
		if req.Method != r.method || req.RequestURI != string(r.target) || req.Proto != "HTTP/1.1" {
			t.Fatalf("got %s %s, net/http read %s %s %s", r.method, r.target, req.Method, req.RequestURI, req.Proto)
		}
		if req.ContentLength != 0 || len(req.TransferEncoding) > 0 || req.Close {
			t.Fatalf("the fast path took a request with a body or Connection: close: %q", b[:n])
		}
		wantPath := ""
		if req.URL.Path == ListPath || req.URL.Path == ListPath[:len(ListPath)-1] {
			wantPath = req.URL.Path
		}
		if r.path != wantPath || r.rawQuery != req.URL.RawQuery {
			t.Fatalf("got path %q query %q, net/http read %q %q", r.path, r.rawQuery, req.URL.Path, req.URL.RawQuery)
		}
		inm, haveINM := req.Header["If-None-Match"]
		if haveINM != r.cond.haveINM || !slices.Equal(inm, r.cond.inm) {
			t.Fatalf("got If-None-Match %q, net/http read %q", r.cond.inm, inm)
		}
		if ims := req.Header.Get("If-Modified-Since"); ims != r.cond.ims {
			t.Fatalf("got If-Modified-Since %q, net/http read %q", r.cond.ims, ims)
		}
		if string(r.agent) != req.UserAgent() || string(r.referer) != req.Referer() {
			t.Fatalf("got agent %q referer %q, net/http read %q %q", r.agent, r.referer, req.UserAgent(), req.Referer())
		}
	})
}

// BenchmarkFastPath measures one request and its answer over a kept-alive
// loopback connection, client included.
func BenchmarkFastPath(b *testing.B) {
	chunked, err := writeSite(b.TempDir(), corpus.Options{Articles: 45, Limits: []int{5, 20, 50}, Seed: 1, Layout: layout.ChunksName})
	if err != nil {
		b.Fatal(err)
	}
	chunked.build(b, chunked.out)
	for _, site := range []struct {
		name string
		out  string
	}{{"pages", allSite.out}, {"chunks", chunked.out}} {
		b.Run(site.name, func(b *testing.B) { benchmarkFastPath(b, site.out) })
	}
}

func benchmarkFastPath(b *testing.B, out string) {
	s, _ := newServer(b, Options{Source: Folder(out)})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	defer func() { cancel(); <-done }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close()
	req := []byte("GET /articles/?limit=20&offset=7 HTTP/1.1\r\nHost: bench\r\n\r\n")
	size := len(exchange(b, ln.Addr().String(), string(req), "GET"))
	buf := make([]byte, 64<<10)
	b.SetBytes(int64(size))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := conn.Write(req); err != nil {
			b.Fatal(err)
		}
		if _, err := io.ReadFull(conn, buf[:size]); err != nil {
			b.Fatal(err)
		}
	}
}

// TestSilentConnection opens a connection that sends nothing: it is
// closed after ReadHeaderTimeout, as net/http closes it, not after the
// idle timeout of a connection that was answered.
func TestSilentConnection(t *testing.T) {
	const headerTimeout = 300 * time.Millisecond
	s, _ := newServer(t, Options{Source: Folder(allSite.out), ReadHeaderTimeout: headerTimeout, IdleTimeout: 10 * time.Second})
	addr := strings.TrimPrefix(serve(t, s), "http://")
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := conn.Read(make([]byte, 1)); n != 0 {
		t.Fatalf("got %d bytes, want none", n)
	}
	if d := time.Since(start); d > headerTimeout+time.Second {
		t.Errorf("a connection that sent nothing was closed after %s, want about %s", d, headerTimeout)
	}
}

// slowReader reads at most n bytes per millisecond.
type slowReader struct {
	r io.Reader
	n int
}

func (s *slowReader) Read(p []byte) (int, error) {
	time.Sleep(time.Millisecond)
	return s.r.Read(p[:min(len(p), s.n)])
}
