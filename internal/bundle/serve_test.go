package bundle

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/server"
)

// served is a server answering on a loopback connection.
type served struct {
	conn net.Conn
	r    *bufio.Reader
}

// serve starts a server with opt on a free loopback port, stopped at the
// end of the test, and connects to it.
func serve(t *testing.T, opt server.Options) *served {
	t.Helper()
	s, err := server.New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	conn, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		conn.Close()
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return &served{conn: conn, r: bufio.NewReader(conn)}
}

// answer is a response as compared: everything but the Date header.
type answer struct {
	status string
	header http.Header
	body   string
}

// do sends one request on the connection and reads its answer.
func (s *served) do(t *testing.T, method, target string, header map[string]string) answer {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: example.com\r\n", method, target)
	for k, v := range header {
		fmt.Fprintf(&b, "%s: %s\r\n", k, v)
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(s.conn, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(s.r, &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %s: %v", method, target, err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Date") == "" {
		t.Errorf("%s %s: no Date header", method, target)
	}
	resp.Header.Del("Date")
	return answer{status: resp.Status, header: resp.Header, body: string(body)}
}

// TestServeLikeDir serves a build from its folder and from its bundle,
// and checks that every page and every rule of the file server gets the
// same answer from both: status, headers but Date, body.
func TestServeLikeDir(t *testing.T) {
	sites := []struct {
		name   string
		opt    corpus.Options
		leaves bool // indexes of many leaves (see smallLeaves)
	}{
		{"every offset", smallOpt, false},
		{"aligned offsets", corpus.Options{Articles: 23, Limits: []int{5, 10}, Offsets: "aligned", Seed: 5}, false},
		{"no articles", corpus.Options{Articles: 0, Limits: []int{5, 10}, Seed: 5}, false},
		{"chunks", corpus.Options{Articles: 70, Limits: []int{5, 10}, Seed: 5, Layout: layout.ChunksName, Filters: []string{"tag"}}, false},
		{"chunks, leaves", corpus.Options{Articles: 150, Limits: []int{5, 10}, Seed: 3, Layout: layout.ChunksName}, true},
	}
	for _, site := range sites {
		t.Run(site.name, func(t *testing.T) {
			o := buildSite(t, site.opt)
			if site.leaves {
				smallLeaves(t, o.out)
			}
			b, err := read(o.write(t, Options{}))
			if err != nil {
				t.Fatal(err)
			}
			dir := serve(t, server.Options{Source: server.Folder(o.out)})
			zip := serve(t, server.Options{Source: server.Archive("feed.zip", b.FS(), nil)})

			type request struct {
				method, target string
				header         map[string]string
			}
			var reqs []request
			if layout.Of(b.Manifest.Pagination).Assembled {
				for limit := 1; limit <= 10; limit++ {
					for offset := 0; offset <= 72; offset++ {
						reqs = append(reqs, request{"GET", "/articles/?limit=" + strconv.Itoa(limit) + "&offset=" + strconv.Itoa(offset), nil})
					}
				}
			}
			for _, f := range b.Manifest.Files {
				if layout.Of(b.Manifest.Pagination).Assembled {
					break // no pages
				}
				target := "/articles/"
				if k, ok := listing.ParsePageKey(f.Path); !ok || k.Dir != listing.Dir {
					t.Fatalf("%s: not a page of the main listing", f.Path)
				} else if !k.Index {
					target += "?limit=" + strconv.Itoa(k.Limit) + "&offset=" + strconv.Itoa(k.Offset)
				}
				reqs = append(reqs, request{"GET", target, nil}, request{"HEAD", target, nil})
			}
			index := dir.do(t, "GET", "/articles/", nil)
			etag := index.header.Get("Etag")
			if etag == "" {
				t.Fatal("no ETag")
			}
			reqs = append(reqs, []request{
				{"GET", "/articles/?limit=5&offset=100", nil}, // past the end
				{"GET", "/articles/?limit=5&offset=" + strconv.Itoa(site.opt.Articles), nil},
				{"GET", "/articles/?offset=100000000000000000000000000", nil}, // huge
				{"GET", "/articles/?limit=7", nil},                            // not pre-rendered: 404
				{"GET", "/articles/?limit=5&offset=3", nil},                   // 404 when aligned
				{"GET", "/articles/?limit=%2010&limit=abc", nil},              // the last value wins
				{"GET", "/articles/?limit=%D9%A1%D9%A0&offset=+2", nil},       // ١٠, " 2"
				{"GET", "/articles/?limit=1000", nil},                         // clamped to max_limit
				{"GET", "/articles/?offset=-1&x=y", nil},
				{"GET", "/articles", nil},
				{"GET", "/articles?limit=5&offset=2", nil}, // 301
				{"GET", "/articles/index.json", nil},
				{"GET", "/articles/5/0.json", nil},
				{"GET", "/manifest.json", nil},
				{"GET", "/config.yaml", nil},
				{"GET", "/bundle.json", nil},
				{"GET", "/", nil},
				{"GET", "/articles/../manifest.json", nil},
				{"OPTIONS", "/articles/", nil},
				{"POST", "/articles/", nil},
				{"DELETE", "/articles/?limit=5", nil},
				{"PUT", "/articles/", nil},
				{"GET", "/articles/", map[string]string{"If-None-Match": etag}},
				{"GET", "/articles/", map[string]string{"If-None-Match": `W/` + etag}},
				{"GET", "/articles/", map[string]string{"If-None-Match": `"other"`}},
				{"GET", "/articles/", map[string]string{"If-None-Match": "*"}},
				{"HEAD", "/articles/", map[string]string{"If-None-Match": etag}},
				{"GET", "/articles/", map[string]string{"If-Modified-Since": "Mon, 23 Nov 2026 06:30:15 GMT"}},
				{"GET", "/articles/", map[string]string{"If-Modified-Since": "Mon, 23 Nov 2026 06:30:14 GMT"}},
				{"GET", "/articles/", map[string]string{"Accept-Encoding": "gzip, deflate"}},
				{"GET", "/articles/?limit=5&offset=1", map[string]string{"Accept": "text/html"}},
			}...)
			statuses := map[string]int{}
			for _, r := range reqs {
				want := dir.do(t, r.method, r.target, r.header)
				got := zip.do(t, r.method, r.target, r.header)
				statuses[want.status]++
				if got.status != want.status || got.body != want.body {
					t.Errorf("%s %s: got %s %.80q, want %s %.80q", r.method, r.target, got.status, got.body, want.status, want.body)
				}
				if g, w := fmt.Sprint(got.header), fmt.Sprint(want.header); g != w {
					t.Errorf("%s %s: got header %s, want %s", r.method, r.target, g, w)
				}
			}
			for _, s := range []string{"200 OK", "301 Moved Permanently", "304 Not Modified", "404 Not Found", "405 Method Not Allowed"} {
				if statuses[s] == 0 {
					t.Errorf("no request answered %s: the comparison misses a case", s)
				}
			}
		})
	}
}
