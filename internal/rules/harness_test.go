package rules

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/publish/emulatortest"
	"github.com/feedgen/feedgen/internal/server"
)

var update = flag.Bool("update", false, "rewrite testdata/support.md from the table of what each target answers")

// The build all tests share: the sample site, with every filter, built
// once by TestMain, and feedgen serve over it, the reference.
var (
	sampleRoot string
	sampleMan  *manifest.Manifest
	refBase    string // http://127.0.0.1:PORT of feedgen serve
	// The same content in the chunks layout (pagination.layout: chunks
	// instead of offsets: all), in a site folder of its own, and feedgen
	// serve over it: the reference of the targets that assemble.
	chunkSite    string
	chunkRoot    string
	chunkMan     *manifest.Manifest
	chunkRefBase string
)

func TestMain(m *testing.M) {
	flag.Parse()
	os.Exit(runTests(m))
}

func runTests(m *testing.M) int {
	dir, err := os.MkdirTemp("", "feedgen-rules-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pagesSite := filepath.Join(dir, "pages")
	sampleRoot = filepath.Join(pagesSite, "public")
	now := func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	if sampleMan, err = buildSampleWithFeeds(pagesSite, "", now); err != nil {
		fmt.Fprintln(os.Stderr, "building the sample:", err)
		return 1
	}
	chunkSite = filepath.Join(dir, "chunks")
	if chunkMan, err = buildChunkSample(chunkSite, now); err != nil {
		fmt.Fprintln(os.Stderr, "building the sample in the chunks layout:", err)
		return 1
	}
	chunkRoot = filepath.Join(chunkSite, "public")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	for _, ref := range []struct {
		root string
		base *string
	}{{sampleRoot, &refBase}, {chunkRoot, &chunkRefBase}} {
		srv, err := server.New(ctx, server.Options{Source: server.Folder(ref.root)})
		if err != nil {
			fmt.Fprintln(os.Stderr, "starting feedgen serve:", err)
			return 1
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		go srv.Serve(ctx, ln)
		*ref.base = "http://" + ln.Addr().String()
	}
	return m.Run()
}

// buildChunkSample writes the sample site into folder site with
// pagination.layout: chunks (in place of offsets: all), builds it into
// site/public and returns the build's manifest.
func buildChunkSample(site string, now func() time.Time) (*manifest.Manifest, error) {
	return buildSampleWithFeeds(site, "\n  layout: chunks\n", now)
}

// sampleFeeds are the reader feeds the tests' builds of the sample have
// (the sample itself has none): every format, so that every target
// answers each of them.
const sampleFeeds = "\nfeeds:\n  title: Example News\n  description: The latest articles\n  formats: [rss, atom, json]\n"

// buildSampleWithFeeds writes the sample site into folder site with sampleFeeds
// and, when paging is not "", paging in place of its offsets: all line,
// builds it into site/public and returns the build's manifest.
func buildSampleWithFeeds(site, paging string, now func() time.Time) (*manifest.Manifest, error) {
	if err := os.CopyFS(site, feedgen.Sample()); err != nil {
		return nil, err
	}
	cfg := filepath.Join(site, "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		return nil, err
	}
	conf := string(data)
	if paging != "" {
		conf = strings.Replace(conf, "\n  offsets: all\n", paging, 1)
		if conf == string(data) {
			return nil, fmt.Errorf("the sample's config has no offsets: all line to replace")
		}
	}
	if err := os.WriteFile(cfg, []byte(conf+sampleFeeds), 0o644); err != nil {
		return nil, err
	}
	res, err := buildSite(site, now)
	if err != nil {
		return nil, err
	}
	return res.Manifest, nil
}

// buildSite builds the site in folder site into site/public.
func buildSite(site string, now func() time.Time) (*build.Result, error) {
	return build.New(build.Options{FS: os.DirFS(site), ConfigName: "config.yaml", Root: site, OutDir: filepath.Join(site, "public"),
		Now: now, Generator: "feedgen test"}).Build(context.Background())
}

// Request classes: what kind of request a row of the table is. A target
// answers every class exactly (as feedgen serve does) unless it is marked
// beyond that target in support.
const (
	classCanonical = "canonical"     // /articles/, limit and offset as plain decimals, pre-rendered
	classPastEnd   = "past the end"  // canonical, but an offset at or past the count
	classFilters   = "filters"       // filter parameters as links encode them
	classUnknown   = "unknown value" // a filter value no article has: count 0
	classLenient   = "lenient"       // what the original read leniently: leading zeros, white space, clamping, invalid values
	classMethods   = "methods"       // HEAD, OPTIONS, and 405 for the others
	classRedirect  = "redirect"      // /articles without the slash: 301
	classHidden    = "hidden"        // paths that must answer the JSON 404: files by their path, the manifest
	classFeeds     = "feeds"         // reader feeds: every format, filters as links encode them, limit and offset ignored
)

// classes in the order of the table of docs/deploying.md.
var classes = []string{classCanonical, classPastEnd, classFilters, classUnknown, classLenient, classMethods, classRedirect, classHidden, classFeeds}

// A request is one row of the shared table.
type request struct {
	class  string
	method string
	target string // path and query, as sent
}

// requests is the shared table: every target is asked each of them, and
// so is feedgen serve.
var requests = []request{
	{classCanonical, "GET", "/articles/"},
	{classCanonical, "GET", "/articles/?limit=20"},
	{classCanonical, "GET", "/articles/?limit=50"},
	{classCanonical, "GET", "/articles/?limit=100"},
	{classCanonical, "GET", "/articles/?offset=20"},
	{classCanonical, "GET", "/articles/?offset=7"},
	{classCanonical, "GET", "/articles/?limit=50&offset=10"},
	{classCanonical, "GET", "/articles/?offset=10&limit=50"},
	{classCanonical, "GET", "/articles/?limit=20&offset=40"},
	{classCanonical, "GET", "/articles/?limit=20&offset=65"},
	{classCanonical, "GET", "/articles/?limit=100&offset=0"},
	{classPastEnd, "GET", "/articles/?limit=20&offset=66"},
	{classPastEnd, "GET", "/articles/?offset=1000"},
	{classPastEnd, "GET", "/articles/?limit=50&offset=123456789012345678901234567890"},
	{classPastEnd, "GET", "/articles/?limit=20&offset=86"},
	{classFilters, "GET", "/articles/?section=news"},
	{classFilters, "GET", "/articles/?category=politics&section=news"},
	{classFilters, "GET", "/articles/?limit=20&offset=20&section=news"},
	{classFilters, "GET", "/articles/?limit=20&offset=5&section=news"},
	{classFilters, "GET", "/articles/?tag=releases"},
	{classFilters, "GET", "/articles/?tag=API"},
	{classFilters, "GET", "/articles/?limit=50&tag=%D0%BE+%D1%80%D0%B5%D0%B4%D0%B0%D0%BA%D1%86%D0%B8%D0%B8"},
	{classFilters, "GET", "/articles/?author=ivan-petrov"},
	{classFilters, "GET", "/articles/?author=ivan-petrov&limit=20&offset=3"},
	{classFilters, "GET", "/articles/?category=data&limit=100&section=features"},
	{classFilters, "GET", "/articles/?category=politics"},               // category alone: 404
	{classFilters, "GET", "/articles/?author=ivan-petrov&tag=releases"}, // not pre-rendered: 404
	{classUnknown, "GET", "/articles/?tag=zzz"},
	{classUnknown, "GET", "/articles/?limit=20&offset=40&tag=zzz"},
	{classUnknown, "GET", "/articles/?tag=Releases"},
	{classUnknown, "GET", "/articles/?section=sport"},
	{classUnknown, "GET", "/articles/?author=nobody&limit=50"},
	{classLenient, "GET", "/articles/?limit=020"},
	{classLenient, "GET", "/articles/?offset=0020"},
	{classLenient, "GET", "/articles/?limit=%2020%20"},
	{classLenient, "GET", "/articles/?limit=1000"},
	{classLenient, "GET", "/articles/?limit=99999999999999999999999"},
	{classLenient, "GET", "/articles/?limit=abc"},
	{classLenient, "GET", "/articles/?limit=0"},
	{classLenient, "GET", "/articles/?limit=-5"},
	{classLenient, "GET", "/articles/?offset=-1"},
	{classLenient, "GET", "/articles/?offset=abc&limit=50"},
	{classLenient, "GET", "/articles/?limit=%D9%A2%D9%A0"}, // Arabic-Indic 20
	{classLenient, "GET", "/articles/?limit=2_0"},
	{classLenient, "GET", "/articles/?offset=1_0"},
	{classLenient, "GET", "/articles/?limit=%2B20"},
	{classLenient, "GET", "/articles/?limit=20&limit=50"},
	{classLenient, "GET", "/articles/?limit=50&limit=abc"},
	{classLenient, "GET", "/articles/?limit=7"}, // not pre-rendered: 404
	{classLenient, "GET", "/articles/?limit=%1C20"},
	{classLenient, "GET", "/articles/?utm_source=x&limit=50"},
	{classLenient, "GET", "/articles/?tag="},
	{classLenient, "GET", "/articles/?t%61g=API"},
	{classLenient, "GET", "/articles/?tag=API&tag="},
	{classLenient, "GET", "/articles/?limit=20;offset=40"},
	{classLenient, "GET", "/articles/?&&limit=50&"},
	// Invalid UTF-8 in a value: each maximal subpart is one U+FFFD, echoed
	// in the previous link (two, three and one of them here).
	{classLenient, "GET", "/articles/?limit=20&offset=40&tag=%C0%AF"},
	{classLenient, "GET", "/articles/?offset=20&tag=%ED%A0%80x"},
	{classLenient, "GET", "/articles/?tag=%E2%82&offset=60"},
	{classMethods, "HEAD", "/articles/?limit=50"},
	{classMethods, "OPTIONS", "/articles/"},
	{classMethods, "POST", "/articles/"},
	{classMethods, "PUT", "/articles/?limit=20"},
	{classMethods, "DELETE", "/articles/"},
	{classMethods, "PATCH", "/articles/"},
	{classMethods, "TRACE", "/articles/"},
	{classMethods, "TRACE", "/articles/?limit=50"},
	{classMethods, "PROPFIND", "/articles/"},
	{classMethods, "TRACE", "/manifest.json"},
	{classMethods, "TRACE", "/articles?limit=50"},
	{classRedirect, "GET", "/articles"},
	{classRedirect, "GET", "/articles?limit=50&offset=10"},
	{classHidden, "GET", "/manifest.json"},
	{classHidden, "GET", "/articles/index.json"},
	{classHidden, "GET", "/articles/20/0.json"},
	{classHidden, "GET", "/articles/section/news/20/0.json"},
	{classHidden, "GET", "/articles/20/"},
	{classHidden, "GET", "/"},
	{classHidden, "GET", "/articles/x"},
	{classHidden, "GET", "/.feedgen-unfinished"},
	{classHidden, "GET", "/config.yaml"},
	{classHidden, "GET", "/articles/%2E%2E/manifest.json"},
	{classHidden, "GET", "/articles/tag/api/feed.rss"}, // a feed by its path
	{classHidden, "GET", "/articles/feed.xml"},
	{classHidden, "GET", "/articles/feed.rss/"},
	{classHidden, "GET", "/articles/FEED.RSS"},
	{classHidden, "GET", "/articles/feed.rss.gz"},
	{classHidden, "GET", "/.feedgen-feeds/articles/feed.rss"}, // nginx's internal location
	{classHidden, "GET", "/articles/feed.rss%0A"},             // a newline, which '$' matches before
	{classHidden, "GET", "/articles/%0A"},
	{classHidden, "GET", "/.feedgen-pages/articles/20/0.json"},
	{classFeeds, "GET", "/articles/feed.rss"},
	{classFeeds, "GET", "/articles/feed.atom"},
	{classFeeds, "GET", "/articles/feed.json"},
	{classFeeds, "GET", "/articles/feed.rss?section=news"},
	{classFeeds, "GET", "/articles/feed.atom?category=politics&section=news"},
	{classFeeds, "GET", "/articles/feed.json?section=features&category=data"},
	{classFeeds, "GET", "/articles/feed.rss?tag=API"},
	{classFeeds, "GET", "/articles/feed.atom?tag=%D0%BE+%D1%80%D0%B5%D0%B4%D0%B0%D0%BA%D1%86%D0%B8%D0%B8"},
	{classFeeds, "GET", "/articles/feed.json?author=ivan-petrov"},
	{classFeeds, "GET", "/articles/feed.rss?limit=7&offset=3&utm_source=x"}, // limit and offset ignored
	{classFeeds, "GET", "/articles/feed.atom?limit=abc&offset=-1&tag=releases"},
	{classFeeds, "GET", "/articles/feed.rss?tag=zzz"},                          // no such value: 404
	{classFeeds, "GET", "/articles/feed.json?section=sport"},                   // 404
	{classFeeds, "GET", "/articles/feed.rss?category=politics"},                // not a collection: 404
	{classFeeds, "GET", "/articles/feed.atom?author=ivan-petrov&tag=releases"}, // not pre-rendered: 404
	{classFeeds, "GET", "/articles/feed.rss?tag="},                             // no filter: the main listing's
	{classMethods, "HEAD", "/articles/feed.atom?tag=API"},
	{classMethods, "OPTIONS", "/articles/feed.rss"},
	{classMethods, "POST", "/articles/feed.json"},
	{classMethods, "DELETE", "/articles/feed.rss?tag=API"},
	{classLenient, "GET", "/articles/feed.rss?t%61g=API"},
	{classLenient, "GET", "/articles/feed.json?tag=API&tag="},
	{classLenient, "GET", "/articles/feed.atom?tag=%41PI"},
	{classLenient, "GET", "/articles/feed.rss?tag=%E2%82"},
	{classMethods, "TRACE", "/articles/feed.rss"},
	{classMethods, "TRACE", "/articles/feed.rss%0A"},
}

// answer is what a server answered, as far as the contract goes.
type answer struct {
	status int
	header map[string]string // the headers the contract names
	body   string
	etag   string // compared only where a target computes feedgen serve's
}

// contractHeaders are the headers compared: those docs/contract.md §5 names, but
// ETag and Last-Modified, which each platform computes its own way.
var contractHeaders = []string{"Content-Type", "Allow", "Vary", "Location", "Content-Length"}

// ask sends r to the server at base and reads its answer.
func ask(t *testing.T, base string, r request) answer {
	t.Helper()
	req, err := http.NewRequest(r.method, base+r.target, nil)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{
		Timeout:       10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", r.method, r.target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: reading the body: %v", r.method, r.target, err)
	}
	return answerOf(resp, r.method, body)
}

// answerOf is the answer of resp, whose body is body, to a request of
// method.
func answerOf(resp *http.Response, method string, body []byte) answer {
	a := answer{status: resp.StatusCode, header: map[string]string{}, body: string(body), etag: resp.Header.Get("ETag")}
	for _, h := range contractHeaders {
		if v := resp.Header.Values(h); len(v) > 0 {
			a.header[h] = strings.Join(v, ", ")
		}
	}
	if method == "HEAD" || resp.StatusCode == http.StatusMovedPermanently {
		a.body = "" // a redirect's body is the platform's own
	}
	if resp.StatusCode == http.StatusMovedPermanently {
		delete(a.header, "Content-Type")
		delete(a.header, "Content-Length")
	}
	return a
}

// diff says how got differs from want; "" when it does not.
func (want answer) diff(got answer) string {
	var d []string
	if got.status != want.status {
		d = append(d, fmt.Sprintf("status %d, want %d", got.status, want.status))
	}
	for _, h := range contractHeaders {
		if got.header[h] != want.header[h] {
			d = append(d, fmt.Sprintf("%s %q, want %q", h, got.header[h], want.header[h]))
		}
	}
	if got.body != want.body {
		d = append(d, fmt.Sprintf("body %.120q, want %.120q", got.body, want.body))
	}
	return strings.Join(d, "; ")
}

// checkTarget asks the target at base every request of the table and
// compares each answer with feedgen serve's: a difference fails the test
// unless the request's class is among beyond. It returns the classes in
// which some request differed.
func checkTarget(t *testing.T, base string, beyond []string) map[string]bool {
	t.Helper()
	differs := map[string]bool{}
	for _, r := range requests {
		want := ask(t, refBase, r)
		got := ask(t, base, r)
		if d := want.diff(got); d != "" {
			differs[r.class] = true
			if !slices.Contains(beyond, r.class) {
				t.Errorf("%s %s (%s): %s", r.method, r.target, r.class, d)
			}
			// Beyond the target: whatever it cannot compute must still be
			// the JSON 404, never a platform page or a file by its path.
			if slices.Contains(beyond, r.class) && got.status != want.status &&
				(got.status != http.StatusNotFound || got.body != `{"detail":"Not found."}` || got.header["Content-Type"] != "application/json") {
				t.Errorf("%s %s (%s, beyond the target): got %d %.80q %q, want the answer of feedgen serve or the JSON 404",
					r.method, r.target, r.class, got.status, got.body, got.header["Content-Type"])
			}
		}
	}
	return differs
}

// startFunc starts a platform on the files of its target, written in
// outDir for s, and returns its base URL; it stops it when the test ends.
type startFunc func(t *testing.T, outDir string, s *Site) string

// runTarget writes target name's files for the sample build, starts the
// platform with start, checks its answers, and returns its base URL.
func runTarget(t *testing.T, name string, start startFunc) string {
	t.Helper()
	s, err := NewSite(sampleMan, sampleRoot, "127.0.0.1:"+freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	base := startTarget(t, name, s, start)
	checkTarget(t, base, support[name])
	checkFeedRevalidates(t, base)
	return base
}

// checkFeedRevalidates checks that the target at base answers a reader
// feed asked again with the entity tag it sent (its own: a feed is a
// file) with 304, as feedgen serve does with its own. The stand-ins of
// the tests for a platform's files (workerd's disk service, the
// CloudFront origin's) send none: then there is nothing to check.
func checkFeedRevalidates(t *testing.T, base string) {
	t.Helper()
	url := base + "/articles/feed.atom?tag=API"
	got := ask(t, base, request{method: "GET", target: "/articles/feed.atom?tag=API"})
	if got.status != http.StatusOK {
		t.Fatalf("GET %s: %d, want 200", url, got.status)
	}
	if got.etag == "" {
		t.Logf("GET %s: no ETag, from the stand-in of the platform's files", url)
		return
	}
	if st := conditional(t, url, got.etag); st != http.StatusNotModified {
		t.Errorf("GET %s with If-None-Match %s: %d, want 304", url, got.etag, st)
	}
}

// startTarget writes target name's files for s and starts its platform
// with start: it returns the base URL. A server target that can write a
// complete config of its server writes it (--standalone), which the
// platform then runs as it is: the tests keep no main config of their
// own.
func startTarget(t *testing.T, name string, s *Site, start startFunc) string {
	t.Helper()
	target, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	s.Standalone = target.Standalone
	out := t.TempDir()
	if _, _, err := Write(target, s, out, false); err != nil {
		t.Fatal(err)
	}
	return start(t, out, s)
}

// writeTarget writes target name's files for the build of m in root
// into a folder of the test's, and returns it and the Site.
func writeTarget(t *testing.T, name string, m *manifest.Manifest, root string) (string, *Site) {
	t.Helper()
	target, err := Find(name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSite(m, root, "")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, _, err := Write(target, s, out, false); err != nil {
		t.Fatal(err)
	}
	return out, s
}

// serveReference starts feedgen serve over the build in root until the
// test ends, and returns its base URL: the answers a target's are
// compared with.
func serveReference(t *testing.T, root string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	srv, err := server.New(ctx, server.Options{Source: server.Folder(root)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ctx, ln)
	return "http://" + ln.Addr().String()
}

// freePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func freePort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	return port
}

// needProgram returns the path of the program a platform runs on: the
// first of name and also in $PATH or, as the documents' examples and the
// scripts' [runtime:NAME] find it, in /usr/sbin (where Debian keeps
// nginx and apache2, which a user's PATH may lack). When it is missing the
// test is skipped, unless FEEDGEN_RUNTIMES=required (make test sets it,
// having installed them): then it fails.
func needProgram(t *testing.T, name string, also ...string) string {
	t.Helper()
	for _, n := range append([]string{name}, also...) {
		for _, p := range []string{n, filepath.Join(sbin, n)} {
			if p, err := exec.LookPath(p); err == nil {
				return p
			}
		}
	}
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		t.Fatalf("%s not found: make test installs it (make runtimes)", name)
	}
	t.Skipf("%s not found: make runtimes installs it", name)
	return ""
}

// sbin is where Debian keeps the servers, out of a user's PATH.
const sbin = "/usr/sbin"

// startProcess starts a platform's server and stops it when the test
// ends; it waits until base answers. Its output is shown when the test
// fails.
//
// Most platforms say nothing when they listen (nginx, Apache, workerd), and
// none can be handed a socket made here: base is asked until it answers,
// for 30s at most, and the wait ends as soon as the server exits
// (emulatortest.WaitHTTP, which the emulators of the publish tests use).
func startProcess(t *testing.T, base string, cmd *exec.Cmd) {
	t.Helper()
	var out eventtest.Buffer // written by exec's goroutines while it runs
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", cmd.Path, err)
	}
	done, exited := make(chan struct{}), make(chan error, 1)
	go func() { exited <- cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("%s said:\n%s", filepath.Base(cmd.Path), out.String())
		}
	})
	if err := emulatortest.WaitHTTP(base+"/articles/", exited, 30*time.Second); err != nil {
		t.Fatalf("%s did not answer on %s: %v:\n%s", filepath.Base(cmd.Path), base, err, out.String())
	}
}

// TestReferenceAnswers checks the table against feedgen serve itself, as
// a platform would be: every answer is its own, so nothing may differ;
// and a few rows have the answers docs/contract.md §5 and §7 call for.
func TestReferenceAnswers(t *testing.T) {
	if d := checkTarget(t, refBase, nil); len(d) > 0 {
		t.Errorf("feedgen serve differs from itself in %v", d)
	}
	for _, tc := range []struct {
		target string
		status int
	}{
		{"/articles/?category=politics", 404},
		{"/articles/?tag=zzz", 200},
		{"/manifest.json", 404},
		{"/articles/?limit=7", 404},
		{"/articles", 301},
		{"/articles/feed.rss?tag=API", 200},
		{"/articles/feed.json?tag=zzz", 404},
		{"/articles/feed.atom?category=politics", 404},
	} {
		if got := ask(t, refBase, request{method: "GET", target: tc.target}); got.status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.target, got.status, tc.status)
		}
	}
}

// support says, for each target, the request classes it does not answer
// exactly (it answers them with the JSON 404). Each target's test holds
// it to that; TestSupportTable turns it into the table of docs/deploying.md.
var support = map[string][]string{
	"nginx-njs":  nil,
	"cloudflare": nil,
	"netlify":    nil,
	"cloudfront": nil,
	"nginx":      {classLenient},
	"caddy":      {classLenient},
	"apache":     {classLenient, classMethods, classRedirect},
}

// TestSupportTable checks testdata/support.md, the table of docs/deploying.md of
// which classes each target answers exactly, against support (go test
// -update rewrites it).
func TestSupportTable(t *testing.T) {
	var b strings.Builder
	b.WriteString("| request |")
	var names []string
	for _, tg := range Targets() {
		names = append(names, tg.Name)
		b.WriteString(" `" + tg.Name + "` |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(names)) + "\n")
	for _, c := range classes {
		b.WriteString("| " + c + " |")
		for _, n := range names {
			mark := " exact |"
			if slices.Contains(support[n], c) {
				mark = " partly |"
			}
			b.WriteString(mark)
		}
		b.WriteString("\n")
	}
	golden := filepath.Join("testdata", "support.md")
	if *update {
		os.MkdirAll("testdata", 0o755)
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("%v (go test ./internal/rules -run TestSupportTable -update)", err)
	}
	if string(want) != b.String() {
		t.Errorf("testdata/support.md is not the table of support (go test ./internal/rules -run TestSupportTable -update):\n%s", b.String())
	}
}
