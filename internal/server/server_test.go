package server

import (
	"bufio"
	"bytes"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const base = "https://api.example.com/articles/?"

// want is the expected answer to a query: a page file, a literal body
// (pages past the end) or 404.
type want struct {
	limit, offset int    // the page file, when body is "" and !notFound
	body          string // the exact body of a page past the end
	notFound      bool
}

func wantPage(limit, offset int) want { return want{limit: limit, offset: offset} }
func empty(body string) want          { return want{body: body} }

var notFound = want{notFound: true}

// sharedSites checks that TestMain built the shared sites.
func sharedSites(t testing.TB) {
	t.Helper()
	if allSite.out == "" {
		t.Fatal("the shared sites were not built")
	}
}

// checkQueries runs GET /articles/?query for every case against the
// build in out.
func checkQueries(t *testing.T, out string, tests []struct {
	query string
	want  want
}) {
	t.Helper()
	s, _ := newServer(t, Options{Source: Folder(out)})
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			resp := request(s, http.MethodGet, "/articles/?"+tt.query, nil)
			body := readBody(t, resp)
			var wantStatus int
			var wantBody []byte
			switch {
			case tt.want.notFound:
				wantStatus, wantBody = http.StatusNotFound, []byte(`{"detail":"Not found."}`)
			case tt.want.body != "":
				wantStatus, wantBody = http.StatusOK, []byte(tt.want.body)
			default:
				wantStatus, wantBody = http.StatusOK, file(t, out, tt.want.limit, tt.want.offset)
			}
			if resp.StatusCode != wantStatus {
				t.Fatalf("got status %d, want %d (body %.200s)", resp.StatusCode, wantStatus, body)
			}
			if !bytes.Equal(body, wantBody) {
				t.Errorf("got body %.300s\nwant %.300s", body, wantBody)
			}
			if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(wantBody)); got != want {
				t.Errorf("got Content-Length %q, want %q", got, want)
			}
		})
	}
}

// TestQueryAllOffsets covers how a query is read (limit and offset as the
// original's language read integers, the last value winning, other
// parameters ignored, offsets past the end) on a build with every offset:
// 45 articles, limits 5 (default), 20 and 50 (max).
func TestQueryAllOffsets(t *testing.T) {
	sharedSites(t)
	const huge = "1000000000000000000000000000000" // 10^30
	checkQueries(t, allSite.out, []struct {
		query string
		want  want
	}{
		{"", wantPage(5, 0)},
		{"limit=20", wantPage(20, 0)},
		{"limit=%2020", wantPage(20, 0)},
		{"limit=+20", wantPage(20, 0)},
		{"limit=%2B20", wantPage(20, 0)},
		{"limit=020", wantPage(20, 0)},
		{"limit=2_0", wantPage(20, 0)},
		{"limit=2__0", wantPage(5, 0)},
		{"limit=_20", wantPage(5, 0)},
		{"limit=20_", wantPage(5, 0)},
		{"limit=%D9%A2%D9%A0", wantPage(20, 0)},       // ٢٠, Arabic-Indic digits
		{"limit=٢٠", wantPage(20, 0)},                 // the same, sent unencoded
		{"limit=%EF%BC%92%EF%BC%90", wantPage(20, 0)}, // ２０, fullwidth digits
		{"limit=%D9%A20", wantPage(20, 0)},            // scripts may mix: ٢0
		{"limit=%20%0920%0A%E3%80%80", wantPage(20, 0)},
		{"limit=%C2%A020", wantPage(20, 0)},                                    // no-break space
		{"limit=%E2%80%8B20", wantPage(5, 0)},                                  // zero-width space is not white space
		{"limit=+-20", wantPage(5, 0)},                                         // " -20": negative
		{"limit=++20", wantPage(20, 0)},                                        // "  20"
		{"limit=%2B%2B20", wantPage(5, 0)},                                     // "++20": two signs
		{"limit=%FF20", wantPage(5, 0)},                                        // invalid UTF-8 becomes U+FFFD
		{"limit=0", wantPage(5, 0)},                                            // zero: the default
		{"limit=-0", wantPage(5, 0)},                                           // negative zero: zero
		{"limit=-1", wantPage(5, 0)},                                           // negative: the default
		{"limit=abc", wantPage(5, 0)},                                          // not an integer
		{"limit=1.5", wantPage(5, 0)},                                          // not an integer
		{"limit=1e1", wantPage(5, 0)},                                          // not an integer
		{"limit=", wantPage(5, 0)},                                             // empty
		{"limit", wantPage(5, 0)},                                              // no '=': empty
		{"limit=" + huge, wantPage(50, 0)},                                     // huge: clamped to max_limit
		{"limit=51", wantPage(50, 0)},                                          // above max_limit
		{"limit=50", wantPage(50, 0)},                                          // max_limit itself
		{"limit=7", notFound},                                                  // not pre-rendered
		{"limit=1", notFound},                                                  // not pre-rendered
		{"limit=7&limit=abc", wantPage(5, 0)},                                  // the last value wins, even invalid
		{"limit=abc&limit=20", wantPage(20, 0)},                                // the last value wins
		{"limit=7;offset=14", wantPage(5, 0)},                                  // ';' does not separate
		{"LIMIT=20", wantPage(5, 0)},                                           // keys are case-sensitive
		{"%6Cimit=20", wantPage(20, 0)},                                        // keys are decoded
		{"limit=20&offset=14&foo=bar&format=json&limit%3D7", wantPage(20, 14)}, // unknown parameters
		{"&&limit=20&&offset=3&", wantPage(20, 3)},
		{"offset=7", wantPage(5, 7)},
		{"offset=%2B7", wantPage(5, 7)},
		{"offset=0007", wantPage(5, 7)},
		{"offset=1_0", wantPage(5, 10)},
		{"offset=%D9%A7", wantPage(5, 7)}, // ٧
		{"offset=-1", wantPage(5, 0)},     // negative: 0
		{"offset=-0", wantPage(5, 0)},
		{"offset=abc", wantPage(5, 0)},
		{"offset=1.5", wantPage(5, 0)},
		{"offset=", wantPage(5, 0)},
		{"offset=%", wantPage(5, 0)}, // a malformed escape stays as it is
		{"offset=5&offset=x", wantPage(5, 0)},
		{"limit=20&offset=15", wantPage(20, 15)},
		{"limit=20&offset=44", wantPage(20, 44)},
		{"offset=44&limit=50", wantPage(50, 44)},
		// At or past the end: the original's empty page.
		{"limit=20&offset=45", empty(`{"count":45,"next":null,"previous":"` + base + `limit=20&offset=25","results":[]}`)},
		{"limit=20&offset=60", empty(`{"count":45,"next":null,"previous":"` + base + `limit=20&offset=40","results":[]}`)},
		{"offset=45", empty(`{"count":45,"next":null,"previous":"` + base + `limit=5&offset=40","results":[]}`)},
		{"limit=50&offset=46", empty(`{"count":45,"next":null,"previous":"` + base + `limit=50","results":[]}`)},
		{"limit=50&offset=50", empty(`{"count":45,"next":null,"previous":"` + base + `limit=50","results":[]}`)},
		{"limit=50&offset=51", empty(`{"count":45,"next":null,"previous":"` + base + `limit=50&offset=1","results":[]}`)},
		{"offset=" + huge, empty(`{"count":45,"next":null,"previous":"` + base + `limit=5&offset=999999999999999999999999999995","results":[]}`)},
		{"limit=" + huge + "&offset=" + huge, empty(`{"count":45,"next":null,"previous":"` + base + `limit=50&offset=999999999999999999999999999950","results":[]}`)},
		{"offset=0000000000000000000000000000000000045", empty(`{"count":45,"next":null,"previous":"` + base + `limit=5&offset=40","results":[]}`)},
		{"limit=7&offset=100", notFound},
	})
}

// TestQueryAligned covers a build with aligned offsets: only multiples of
// each limit exist, but any offset past the end answers 200.
func TestQueryAligned(t *testing.T) {
	sharedSites(t)
	checkQueries(t, alignSite.out, []struct {
		query string
		want  want
	}{
		{"", wantPage(5, 0)},
		{"offset=40", wantPage(5, 40)},
		{"offset=44", notFound},
		{"limit=20&offset=20", wantPage(20, 20)},
		{"limit=20&offset=40", wantPage(20, 40)},
		{"limit=20&offset=10", notFound},
		{"limit=20&offset=1", notFound},
		{"limit=20&offset=-10", wantPage(20, 0)},
		{"limit=50", wantPage(50, 0)},
		{"limit=1000000000000000000000000000000&offset=0", wantPage(50, 0)},
		{"limit=7", notFound},
		{"limit=7&offset=7", notFound},
		{"limit=20&offset=45", empty(`{"count":45,"next":null,"previous":"` + base + `limit=20&offset=25","results":[]}`)},
		{"limit=20&offset=47", empty(`{"count":45,"next":null,"previous":"` + base + `limit=20&offset=27","results":[]}`)},
		{"limit=20&offset=60", empty(`{"count":45,"next":null,"previous":"` + base + `limit=20&offset=40","results":[]}`)},
		{"offset=1000000000000000000000000000000", empty(`{"count":45,"next":null,"previous":"` + base + `limit=5&offset=999999999999999999999999999995","results":[]}`)},
	})
}

// TestQueryEmptyCollection covers a build without articles: count 0.
func TestQueryEmptyCollection(t *testing.T) {
	sharedSites(t)
	checkQueries(t, noneSite.out, []struct {
		query string
		want  want
	}{
		{"", wantPage(5, 0)},
		{"", empty(`{"count":0,"next":null,"previous":null,"results":[]}`)},
		{"limit=20", empty(`{"count":0,"next":null,"previous":null,"results":[]}`)},
		{"offset=3", empty(`{"count":0,"next":null,"previous":"` + base + `limit=5","results":[]}`)},
		{"limit=20&offset=45", empty(`{"count":0,"next":null,"previous":"` + base + `limit=20&offset=25","results":[]}`)},
		{"limit=7", notFound},
	})
}

// header is the expected value of one response header; "*" is any
// non-empty value.
type header map[string]string

// TestStatuses checks every status over a real connection, so that what
// net/http adds or removes (Date, the headers of a 304) is in the answer:
// the exact set of headers and the exact body of each.
func TestStatuses(t *testing.T) {
	sharedSites(t)
	s, _ := newServer(t, Options{Source: Folder(allSite.out)})
	addr := strings.TrimPrefix(serve(t, s), "http://")

	m := readManifest(t, allSite.out)
	etags := map[string]string{}
	for _, f := range m.Files {
		etags[f.Path] = `"` + f.SHA256 + `"`
	}
	lastMod := "Sun, 01 Nov 2026 12:00:00 GMT"
	page0 := string(file(t, allSite.out, 5, 0))
	etag0 := etags["articles/5/0.json"]
	pageHeaders := header{
		"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json",
		"Content-Length": strconv.Itoa(len(page0)), "Etag": etag0, "Last-Modified": lastMod, "Date": "*",
	}
	notModified := header{"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Etag": etag0, "Last-Modified": lastMod, "Date": "*"}
	listing404 := header{"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json", "Content-Length": "23", "Date": "*"}
	other404 := header{"Content-Type": "application/json", "Content-Length": "23", "Date": "*"}
	const notFoundBody = `{"detail":"Not found."}`
	const optionsBody = `{"name":"Article List","description":"","renders":["application/json","text/html"],"parses":["application/json","application/x-www-form-urlencoded","multipart/form-data"]}`
	emptyBody := `{"count":45,"next":null,"previous":"` + base + `limit=5&offset=95","results":[]}`
	method405 := func(method string) (header, string) {
		body := `{"detail":"Method \"` + method + `\" not allowed."}`
		return header{"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json", "Content-Length": strconv.Itoa(len(body)), "Date": "*"}, body
	}
	redirect := func(loc string) header {
		return header{"Location": loc, "Content-Type": "text/html; charset=utf-8", "Content-Length": "0", "Date": "*"}
	}
	h405, b405 := method405("POST")
	hPut, bPut := method405("PUT")
	hBrew, bBrew := method405("BREW")

	tests := []struct {
		name    string
		method  string
		target  string
		reqHdr  http.Header
		status  int
		headers header
		body    string
	}{
		{"GET", "GET", "/articles/", nil, 200, pageHeaders, page0},
		{"HEAD", "HEAD", "/articles/", nil, 200, pageHeaders, ""},
		{"GET past the end", "GET", "/articles/?offset=100", nil, 200, header{
			"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json",
			"Content-Length": strconv.Itoa(len(emptyBody)), "Etag": "*", "Last-Modified": lastMod, "Date": "*",
		}, emptyBody},
		{"OPTIONS", "OPTIONS", "/articles/?limit=7", nil, 200, header{
			"Allow": "GET, HEAD, OPTIONS", "Vary": "Accept", "Content-Type": "application/json",
			"Content-Length": strconv.Itoa(len(optionsBody)), "Date": "*",
		}, optionsBody},
		{"POST", "POST", "/articles/", nil, 405, h405, b405},
		{"PUT", "PUT", "/articles/?limit=20", nil, 405, hPut, bPut},
		{"unknown method", "BREW", "/articles/", nil, 405, hBrew, bBrew},
		{"301 no query", "GET", "/articles", nil, 301, redirect("/articles/"), ""},
		{"301 empty query", "GET", "/articles?", nil, 301, redirect("/articles/"), ""},
		{"301 query as sent", "GET", "/articles?limit=%2020&offset=+5;x=1&limit=7", nil, 301, redirect("/articles/?limit=%2020&offset=+5;x=1&limit=7"), ""},
		{"301 HEAD", "HEAD", "/articles?limit=20", nil, 301, redirect("/articles/?limit=20"), ""},
		{"301 POST", "POST", "/articles?limit=20", nil, 301, redirect("/articles/?limit=20"), ""},
		{"404 limit", "GET", "/articles/?limit=7", nil, 404, listing404, notFoundBody},
		{"404 HEAD", "HEAD", "/articles/?limit=7", nil, 404, listing404, ""},
		{"404 root", "GET", "/", nil, 404, other404, notFoundBody},
		{"404 page file", "GET", "/articles/20/0.json", nil, 404, other404, notFoundBody},
		{"404 folder", "GET", "/articles/20/", nil, 404, other404, notFoundBody},
		{"404 index file", "GET", "/articles/index.json", nil, 404, other404, notFoundBody},
		{"404 manifest", "GET", "/manifest.json", nil, 404, other404, notFoundBody},
		{"404 dot dot", "GET", "/articles/../manifest.json", nil, 404, other404, notFoundBody},
		{"404 double slash", "GET", "//articles/", nil, 404, other404, notFoundBody},
		{"404 POST elsewhere", "POST", "/other", nil, 404, other404, notFoundBody},
		{"304 If-None-Match", "GET", "/articles/", http.Header{"If-None-Match": {etag0}}, 304, notModified, ""},
		{"304 HEAD", "HEAD", "/articles/", http.Header{"If-None-Match": {etag0}}, 304, notModified, ""},
		{"304 weak", "GET", "/articles/", http.Header{"If-None-Match": {"W/" + etag0}}, 304, notModified, ""},
		{"304 list", "GET", "/articles/", http.Header{"If-None-Match": {`"abc", W/"def" ,` + etag0}}, 304, notModified, ""},
		{"304 two fields", "GET", "/articles/", http.Header{"If-None-Match": {`"abc"`, etag0}}, 304, notModified, ""},
		{"304 star", "GET", "/articles/", http.Header{"If-None-Match": {"*"}}, 304, notModified, ""},
		{"200 other etag", "GET", "/articles/", http.Header{"If-None-Match": {`"abc"`}}, 200, pageHeaders, page0},
		{"200 etag of another page", "GET", "/articles/", http.Header{"If-None-Match": {etags["articles/5/1.json"]}}, 200, pageHeaders, page0},
		{"200 unquoted etag", "GET", "/articles/", http.Header{"If-None-Match": {strings.Trim(etag0, `"`)}}, 200, pageHeaders, page0},
		{"304 If-Modified-Since same", "GET", "/articles/", http.Header{"If-Modified-Since": {lastMod}}, 304, notModified, ""},
		{"304 If-Modified-Since later", "GET", "/articles/", http.Header{"If-Modified-Since": {"Mon, 02 Nov 2026 00:00:00 GMT"}}, 304, notModified, ""},
		{"200 If-Modified-Since earlier", "GET", "/articles/", http.Header{"If-Modified-Since": {"Sun, 01 Nov 2026 11:59:59 GMT"}}, 200, pageHeaders, page0},
		{"200 If-Modified-Since bad", "GET", "/articles/", http.Header{"If-Modified-Since": {"yesterday"}}, 200, pageHeaders, page0},
		{"If-None-Match wins over If-Modified-Since", "GET", "/articles/", http.Header{"If-None-Match": {`"abc"`}, "If-Modified-Since": {lastMod}}, 200, pageHeaders, page0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp := rawRequest(t, addr, tt.method, tt.target, tt.reqHdr)
			body := readBody(t, resp)
			if resp.StatusCode != tt.status {
				t.Fatalf("got status %d, want %d", resp.StatusCode, tt.status)
			}
			if string(body) != tt.body {
				t.Errorf("got body %.200q, want %.200q", body, tt.body)
			}
			checkHeaders(t, resp.Header, tt.headers)
		})
	}
}

// rawRequest sends a request with the target exactly as written over a
// new connection, and reads the answer.
func rawRequest(t *testing.T, addr, method, target string, header http.Header) *http.Response {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	var b strings.Builder
	b.WriteString(method + " " + target + " HTTP/1.1\r\nHost: test\r\n")
	for k, vs := range header {
		for _, v := range vs {
			b.WriteString(k + ": " + v + "\r\n")
		}
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// checkHeaders checks that h has exactly the headers of want.
func checkHeaders(t *testing.T, h http.Header, want header) {
	t.Helper()
	var got, wanted []string
	for k := range h {
		got = append(got, k)
	}
	for k := range want {
		wanted = append(wanted, k)
	}
	slices.Sort(got)
	slices.Sort(wanted)
	if !slices.Equal(got, wanted) {
		t.Errorf("got headers %v, want %v", got, wanted)
	}
	for k, v := range want {
		if len(h[k]) != 1 {
			t.Errorf("got %d values of %s, want 1", len(h[k]), k)
			continue
		}
		if v != "*" && h[k][0] != v || v == "*" && h[k][0] == "" {
			t.Errorf("got %s: %q, want %q", k, h[k][0], v)
		}
	}
}

// TestETagStable checks that the ETag of a page is its SHA-256, the same
// after a rebuild that does not change its bytes, and that the answers of
// two builds of the same content are the same.
func TestETagStable(t *testing.T) {
	sharedSites(t)
	out := t.TempDir()
	allSite.build(t, out)
	s1, _ := newServer(t, Options{Source: Folder(allSite.out)})
	s2, _ := newServer(t, Options{Source: Folder(out)})
	for _, target := range []string{"/articles/", "/articles/?limit=20&offset=7", "/articles/?offset=99"} {
		r1 := request(s1, "GET", target, nil)
		r2 := request(s2, "GET", target, nil)
		if e1, e2 := r1.Header.Get("Etag"), r2.Header.Get("Etag"); e1 != e2 || len(e1) != 66 {
			t.Errorf("%s: got ETags %s and %s, want the same quoted SHA-256", target, e1, e2)
		}
		if b1, b2 := readBody(t, r1), readBody(t, r2); !bytes.Equal(b1, b2) {
			t.Errorf("%s: bodies differ", target)
		}
	}
}

func TestEscapeQuery(t *testing.T) {
	tests := []struct{ in, want string }{
		{"limit=20&offset=5", "limit=20&offset=5"},
		{"a=%20+b;c", "a=%20+b;c"},
		{`x="<y>"`, "x=%22%3Cy%3E%22"},
		{"q=\x7f\x80", "q=%7F%80"},
		{"q=я", "q=%D1%8F"},
		{"a|b^c`d{e}", "a%7Cb%5Ec%60d%7Be%7D"},
		{"~!$'()*,:@[]/?#", "~!$'()*,:@[]/?#"},
	}
	for _, tt := range tests {
		if got := escapeQuery(tt.in); got != tt.want {
			t.Errorf("escapeQuery(%q): got %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestETagListMatches(t *testing.T) {
	const e = `"abc"`
	tests := []struct {
		list string
		want bool
	}{
		{`"abc"`, true},
		{`W/"abc"`, true},
		{`"x","abc"`, true},
		{` "x" , W/"abc" `, true},
		{`*`, true},
		{``, false},
		{`"ab"`, false},
		{`abc`, false},
		{`"abc`, false},
		{`"x", bogus, "abc"`, false}, // parsing stops at a malformed element
		{`w/"abc"`, false},
	}
	for _, tt := range tests {
		if got := etagListMatches(tt.list, e); got != tt.want {
			t.Errorf("etagListMatches(%q): got %v, want %v", tt.list, got, tt.want)
		}
	}
}
