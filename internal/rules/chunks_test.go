package rules

import (
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/syndication"
)

// The targets that run code (nginx-njs, cloudflare, netlify) put the
// pages of a build of layout: chunks together, each on its real runtime
// (Netlify's under workerd, the stand-in of its edge), and are held to
// feedgen serve on the same build: every row of the shared table, the
// rows below (limits no config lists, pages across chunks), and a sweep
// of limits and offsets, with the same status, headers, body and entity
// tag.

// chunkRequests are what the shared table does not ask of a chunks
// build: limits that are not pre-rendered anywhere, pages across chunks,
// the last article, clamping.
var chunkRequests = []request{
	{classCanonical, "GET", "/articles/?limit=7"},
	{classCanonical, "GET", "/articles/?limit=1&offset=65"},
	{classCanonical, "GET", "/articles/?limit=3&offset=19"},
	{classCanonical, "GET", "/articles/?limit=64&offset=1"},
	{classCanonical, "GET", "/articles/?limit=100&offset=65"},
	{classCanonical, "GET", "/articles/?limit=99&offset=0"},
	{classPastEnd, "GET", "/articles/?limit=7&offset=66"},
	{classFilters, "GET", "/articles/?limit=33&offset=30&section=news"},
	{classFilters, "GET", "/articles/?limit=99&offset=1&tag=API"},
	{classFilters, "GET", "/articles/?category=politics&limit=2&offset=1&section=news"},
	{classUnknown, "GET", "/articles/?limit=9&offset=3&tag=zzz"},
	{classLenient, "GET", "/articles/?limit=101&offset=2"},
	{classLenient, "GET", "/articles/?limit=0007&offset=+3"},
	{classMethods, "HEAD", "/articles/?limit=7&offset=3"},
	{classHidden, "GET", "/articles/chunks.json"},
	{classHidden, "GET", "/articles/section/news/chunks.json"},
}

// sweep returns requests for every offset (and one past the end) of the
// main listing and of two filtered collections, at limits around the
// chunks' sizes.
func sweep() []request {
	var rs []request
	for _, c := range []struct {
		filter string
		count  int
		limits []int
	}{
		{"", 66, []int{1, 2, 3, 7, 19, 20, 21, 33, 64, 100}},
		{"&tag=API", 0, []int{1, 7, 20}},
		{"&section=news", 0, []int{1, 5, 20}},
	} {
		count := c.count
		if count == 0 {
			count = countOf(c.filter)
		}
		for _, l := range c.limits {
			for o := 0; o <= count; o++ {
				rs = append(rs, request{classCanonical, "GET", fmt.Sprintf("/articles/?limit=%d&offset=%d%s", l, o, c.filter)})
			}
		}
	}
	return rs
}

// countOf returns the count of the collection filtered by filter
// ("&key=value") in the chunks build.
func countOf(filter string) int {
	k, v, _ := strings.Cut(strings.TrimPrefix(filter, "&"), "=")
	for _, c := range chunkMan.Collections {
		if len(c.Params) == 1 && c.Params[0].Key == k && c.Params[0].Value == v {
			return c.Count
		}
	}
	return 0
}

// isFeed reports whether target (path and query) asks for a reader feed.
func isFeed(target string) bool {
	p, _, _ := strings.Cut(target, "?")
	_, ok := syndication.FormatOfFile(strings.TrimPrefix(p, listing.Path))
	return ok && strings.HasPrefix(p, listing.Path)
}

// checkChunkTarget asks the target at base the shared table, the chunk
// rows and the sweep, and compares each answer with feedgen serve's on
// the same chunks build, entity tag included.
func checkChunkTarget(t *testing.T, base string) {
	t.Helper()
	all := append(append(append([]request{}, requests...), chunkRequests...), sweep()...)
	failed := 0
	for _, r := range all {
		want, got := ask(t, chunkRefBase, r), ask(t, base, r)
		d := want.diff(got)
		// A feed is a file, which a platform sends with its own entity
		// tag, as it sends a page file of the pages layout.
		if d == "" && got.etag != want.etag && r.class != classRedirect && !isFeed(r.target) {
			d = fmt.Sprintf("ETag %q, want %q", got.etag, want.etag)
		}
		if d != "" {
			if failed++; failed <= 20 {
				t.Errorf("%s %s (%s): %s", r.method, r.target, r.class, d)
			}
		}
	}
	if failed > 20 {
		t.Errorf("and %d more of %d requests differ", failed-20, len(all))
	}
	checkFeedRevalidates(t, base)
	// A client that has the page: 304, as feedgen serve answers.
	page := ask(t, chunkRefBase, request{method: "GET", target: "/articles/?limit=7&offset=3"})
	for _, inm := range []string{page.etag, `"x", W/` + page.etag, "*"} {
		for _, b := range []string{chunkRefBase, base} {
			if st := conditional(t, b+"/articles/?limit=7&offset=3", inm); st != http.StatusNotModified {
				t.Errorf("%s with If-None-Match %s: %d, want 304", b, inm, st)
			}
		}
	}
	if st := conditional(t, base+"/articles/?limit=7&offset=4", page.etag); st != http.StatusOK {
		t.Errorf("another page with the first's tag: %d, want 200", st)
	}
	// What the edge does not do (docs/deploying.md): Last-Modified is
	// feedgen serve's only, so If-Modified-Since alone gets the page.
	req, err := http.NewRequest("GET", base+"/articles/?limit=7&offset=3", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-Modified-Since", time.Now().Add(time.Hour).UTC().Format(http.TimeFormat))
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Last-Modified") != "" {
		t.Errorf("If-Modified-Since alone: %d, Last-Modified %q; want 200 and none, as docs/deploying.md says", resp.StatusCode, resp.Header.Get("Last-Modified"))
	}
}

// conditional asks url with If-None-Match inm and returns the status.
func conditional(t *testing.T, url, inm string) int {
	t.Helper()
	req, err := http.NewRequest("GET", url, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("If-None-Match", inm)
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// runChunkTarget writes target name's files for the chunks build of the
// sample in folder root (chunkRoot, or a copy), starts its platform and
// holds it to feedgen serve on the build.
func runChunkTarget(t *testing.T, name, root string, start startFunc) {
	t.Helper()
	s, err := NewSite(chunkMan, root, "127.0.0.1:"+freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	checkChunkTarget(t, startTarget(t, name, s, start))
}

// smallLeaves returns a copy of the chunks build of the sample, in a
// folder of the test's, whose every index is cut into leaves of one
// chunk (chunktest.TreeOf): a page runs across leaves, as one does in a
// build of more than some 4,000 articles a collection. feedgen serve
// answers it as it does the build: a page's bytes and entity tag are
// made of its chunks, not of its index.
func smallLeaves(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "public")
	if err := os.CopyFS(root, os.DirFS(chunkRoot)); err != nil {
		t.Fatal(err)
	}
	for _, c := range chunkMan.Collections {
		if _, err := os.Stat(filepath.Join(root, chunk.IndexPath(c.Dir))); errors.Is(err, fs.ErrNotExist) {
			continue
		}
		ix, _ := readTree(t, root, c.Dir)
		data, leaves := chunktest.TreeOf(ix, 1)
		for p, leaf := range leaves {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, p), leaf, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(root, chunk.IndexPath(c.Dir)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// The pages of 100 run across every leaf of the main listing, and
	// the sweep's pages across the boundaries of each.
	if _, r := readTree(t, root, listing.Dir); len(r.Leaves) < 2 {
		t.Fatalf("the main listing has %d leaf of one chunk", len(r.Leaves))
	}
	return root
}

// withWindows starts nginx-njs with start, its feedgen.js changed to read
// every root and leaf by windows of 64 bytes, shorter than a line, as it
// reads one over 256 kB.
func withWindows(start startFunc) startFunc {
	return func(t *testing.T, out string, s *Site) string {
		js := filepath.Join(out, "feedgen.js")
		data, err := os.ReadFile(js)
		if err != nil {
			t.Fatal(err)
		}
		const from, to = "var WINDOW = 4096, WHOLE = 256 << 10;", "var WINDOW = 64, WHOLE = 0;"
		if !strings.Contains(string(data), from) {
			t.Fatalf("feedgen.js has no %q", from)
		}
		if err := os.WriteFile(js, []byte(strings.Replace(string(data), from, to, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		return start(t, out, s)
	}
}

func TestNginxNJSChunks(t *testing.T) {
	start := startNginxNJS(t)
	t.Run("whole", func(t *testing.T) {
		s, err := NewSite(chunkMan, chunkRoot, "127.0.0.1:"+freePort(t))
		if err != nil {
			t.Fatal(err)
		}
		base := startTarget(t, "nginx-njs", s, start)
		checkChunkTarget(t, base)
		checkRaw(t, base, chunkRefBase, rawUTF8, false)
	})
	// Pages across leaves: each leaf read whole, then each by windows.
	t.Run("leaves", func(t *testing.T) { runChunkTarget(t, "nginx-njs", smallLeaves(t), start) })
	t.Run("windows", func(t *testing.T) { runChunkTarget(t, "nginx-njs", smallLeaves(t), withWindows(start)) })
}

// TestNginxNJSChunksCached holds nginx-njs with --cache (a server that
// keeps each page for a second in front of the one that assembles it) to
// feedgen serve, as without it; then builds the site again in place, one
// article more: every answer is a page of one build or the other, whole,
// and the new build is answered within a few seconds.
func TestNginxNJSChunksCached(t *testing.T) {
	start := startNginxNJS(t)
	site, s := copyChunkSite(t)
	s.Cache = t.TempDir()
	base := startTarget(t, "nginx-njs", s, start)
	checkChunkTarget(t, base)
	checkChunkTarget(t, base) // again, from the cache
	cached := 0
	filepath.WalkDir(filepath.Join(s.Cache, "pages"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			cached++
		}
		return nil
	})
	if cached == 0 {
		t.Fatalf("nginx kept no page in %s", s.Cache)
	}
	r := request{method: "GET", target: "/articles/?limit=5"}
	before := ask(t, base, r)
	addArticle(t, site, "")
	after := ask(t, serveReference(t, s.Root), r)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got := ask(t, base, r)
		if before.diff(got) != "" && after.diff(got) != "" {
			t.Fatalf("an answer of neither build: %d %.200s", got.status, got.body)
		}
		if after.diff(got) == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the new build is not answered 10s after it was written")
		}
		runtime.Gosched()
	}
}

// TestNginxNJSCacheRefused checks what --cache refuses: a pages build,
// and a path nginx.conf cannot hold.
func TestNginxNJSCacheRefused(t *testing.T) {
	tg, err := Find("nginx-njs")
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		man  string
		root string
		dir  string
		want string
	}{
		{"pages", sampleRoot, t.TempDir(), "--cache is for a build of layout: chunks"},
		{"chunks", chunkRoot, filepath.Join(tmp, "a{b"), "generating the nginx-njs rules: the cache folder (--cache) \"" + filepath.Join(tmp, "a{b") + "\" has '{', which nginx.conf cannot hold: use a folder without it"},
	} {
		m := sampleMan
		if tc.man == "chunks" {
			m = chunkMan
		}
		s, err := NewSite(m, tc.root, "8080")
		if err != nil {
			t.Fatal(err)
		}
		s.Cache = tc.dir
		if _, _, err := Write(tg, s, t.TempDir(), false); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s build, cache %q: %v, want an error with %q", tc.man, tc.dir, err, tc.want)
		}
	}
}

func TestCloudflareWorkerdChunks(t *testing.T) {
	start := startWorkerd(t)
	t.Run("whole", func(t *testing.T) { runChunkTarget(t, "cloudflare", chunkRoot, start) })
	t.Run("leaves", func(t *testing.T) { runChunkTarget(t, "cloudflare", smallLeaves(t), start) })
}

func TestNetlifyEdgeFunctionChunks(t *testing.T) {
	start := startNetlifyEdge(t)
	t.Run("whole", func(t *testing.T) { runChunkTarget(t, "netlify", chunkRoot, start) })
	t.Run("leaves", func(t *testing.T) { runChunkTarget(t, "netlify", smallLeaves(t), start) })
}

// TestChunksAcrossBuilds runs each assembling target on a chunks build
// in a folder of its own, then builds the site again there with one more
// article: the target answers the new build at once, with the files it
// was written for (a build does not make them stale). Then a chunk the
// index names is deleted: the pages that need it answer 503, as feedgen
// serve's do, and the others are still answered; and so does a page
// whose root or leaf names a file outside the build's chunks.
func TestChunksAcrossBuilds(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*testing.T) startFunc
	}{
		{"nginx-njs", startNginxNJS},
		{"cloudflare", startWorkerd},
		{"netlify", startNetlifyEdge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := tc.start(t)
			site, s := copyChunkSite(t)
			base := startTarget(t, tc.name, s, start)
			first := ask(t, base, request{method: "GET", target: "/articles/?limit=1"})
			if first.status != 200 || !strings.HasPrefix(first.body, `{"count":66,`) {
				t.Fatalf("before: %d %.80s", first.status, first.body)
			}
			addArticle(t, site, "tags: [API]\n")
			ref := serveReference(t, filepath.Join(site, "public"))
			for _, target := range []string{"/articles/?limit=1", "/articles/?limit=5&offset=60", "/articles/?tag=API&limit=3", "/articles/?section=news&limit=50"} {
				r := request{method: "GET", target: target}
				want, got := ask(t, ref, r), ask(t, base, r)
				if d := want.diff(got); d != "" || got.etag != want.etag {
					t.Errorf("after a build, %s: %s (ETag %s, want %s)", target, d, got.etag, want.etag)
				}
			}
			if got := ask(t, base, request{method: "GET", target: "/articles/?limit=1"}); !strings.HasPrefix(got.body, `{"count":67,`) {
				t.Errorf("after a build: %.80s, want count 67", got.body)
			}
			// Delete the chunk of the last article of the main listing.
			ix, _ := readTree(t, filepath.Join(site, "public"), listing.Dir)
			if err := os.Remove(filepath.Join(site, "public", ix.Chunks[len(ix.Chunks)-1].Path)); err != nil {
				t.Fatal(err)
			}
			checkUnavailable(t, base, "/articles/?limit=1&offset=66", "a page whose chunk is gone")
			if got := ask(t, base, request{method: "GET", target: "/articles/?limit=1"}); got.status != 200 {
				t.Errorf("a page whose chunks are there: %d", got.status)
			}
			// A root or leaf that names a file outside the chunks, or a
			// root cut short: 503, never that file, nor the platform's
			// error page.
			public := filepath.Join(site, "public")
			apiDir := listing.CollectionDir([]listing.Param{{Key: "tag", Value: "API"}})
			apiIndex := filepath.Join(public, chunk.IndexPath(apiDir))
			data, err := os.ReadFile(apiIndex)
			if err != nil {
				t.Fatal(err)
			}
			apiIx, apiRoot := readTree(t, public, apiDir)
			leafPath, chunkPath := apiRoot.Leaves[0].Path, apiIx.Chunks[0].Path
			leaf, err := os.ReadFile(filepath.Join(public, leafPath))
			if err != nil {
				t.Fatal(err)
			}
			// A path of the shape and length of a leaf's or chunk's but for
			// "..": it names site/secret.json, which is long enough for
			// any range.
			if err := os.WriteFile(filepath.Join(site, "secret.json"), []byte(`"`+strings.Repeat("secret ", 10000)+`"`), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(public, chunk.Dir, "00", "00"), 0o755); err != nil {
				t.Fatal(err) // so that the path resolves, but for the check
			}
			outsideOf := func(p string) string {
				up := "../../../../../secret.json"
				return "articles/chunks/00/00/" + strings.Repeat("/", len(p)-22-len(up)) + up
			}
			// The leaf naming it as its first chunk, at the path of its
			// SHA-256, as a leaf is named, and a root that names that leaf.
			badLeaf := mustReplace(t, string(leaf), `"`+chunkPath+`"`, `"`+outsideOf(chunkPath)+`"`)
			badLeafPath := chunk.LeafPath(sha256.Sum256([]byte(badLeaf)))
			if err := os.MkdirAll(filepath.Dir(filepath.Join(public, badLeafPath)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(public, badLeafPath), []byte(badLeaf), 0o644); err != nil {
				t.Fatal(err)
			}
			for name, body := range map[string]string{
				"a root naming a leaf outside":  mustReplace(t, string(data), `"`+leafPath+`"`, `"`+outsideOf(leafPath)+`"`),
				"a leaf naming a chunk outside": mustReplace(t, string(data), `"`+leafPath+`"`, `"`+badLeafPath+`"`),
				"a root cut short":              string(data[:len(data)/2]),
			} {
				if err := os.WriteFile(apiIndex, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				checkUnavailable(t, base, "/articles/?limit=3&tag=API", name)
			}
		})
	}
}

// copyChunkSite copies the chunks site of the sample into a folder of the
// test's, and returns it, with the Site of its build for a server on a
// free port.
func copyChunkSite(t *testing.T) (site string, s *Site) {
	t.Helper()
	site = filepath.Join(t.TempDir(), "site")
	if err := os.CopyFS(site, os.DirFS(chunkSite)); err != nil {
		t.Fatal(err)
	}
	s, err := NewSite(chunkMan, filepath.Join(site, "public"), "127.0.0.1:"+freePort(t))
	if err != nil {
		t.Fatal(err)
	}
	return site, s
}

// addArticle writes one more article into site, the newest (it joins
// the main listing's first chunk, and tags if given), and builds the site
// again in place.
func addArticle(t *testing.T, site, tags string) {
	t.Helper()
	article := "---\nid: 9001\ntitle: One more\nannouncement: Added after the rules were written.\nauthor: ivan-petrov\npublished: 2026-10-31T10:00:00\n" + tags + "---\nBody.\n"
	if err := os.WriteFile(filepath.Join(site, "content", "news", "politics", "one-more.md"), []byte(article), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := buildSite(site, func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }); err != nil {
		t.Fatal(err)
	}
}

// checkUnavailable checks that target answers feedgen serve's 503: its
// body, Retry-After and the listing's headers.
func checkUnavailable(t *testing.T, base, target, what string) {
	t.Helper()
	resp, err := (&http.Client{Timeout: 10 * time.Second}).Get(base + target)
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusServiceUnavailable || string(body) != listing.UnavailableBody ||
		resp.Header.Get("Content-Type") != listing.ContentType || resp.Header.Get("Retry-After") != listing.RetryAfter ||
		resp.Header.Get("Allow") != listing.Allow || resp.Header.Get("Vary") != listing.Vary {
		t.Errorf("%s: %d %q %v (%v), want 503 %q with Retry-After %s", what, resp.StatusCode, body, resp.Header, err, listing.UnavailableBody, listing.RetryAfter)
	}
}

// TestRefusesChunks gives every target a build of layout: chunks: those
// that only map a request onto a file refuse it, naming the targets that
// run code, and write nothing; those write their files.
func TestRefusesChunks(t *testing.T) {
	const cannot = "only maps a request onto a file; the targets that run code to do it are cloudflare, netlify and nginx-njs (and feedgen serve does it), or build with pagination.layout: pages"
	tests := []struct {
		target string
		want   string // the message after "TARGET: " and ErrChunks; "" when it assembles
	}{
		{"apache", "its pages are put together per request from chunks, and apache " + cannot},
		{"caddy", "its pages are put together per request from chunks, and caddy " + cannot},
		{"cloudflare", ""},
		{"cloudfront", "its pages are put together per request from chunks, and cloudfront " + cannot},
		{"netlify", ""},
		{"nginx", "its pages are put together per request from chunks, and nginx " + cannot},
		{"nginx-njs", ""},
	}
	if len(tests) != len(Targets()) {
		t.Fatalf("%d targets tested, of %d", len(tests), len(Targets()))
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			tg, err := Find(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			if tg.Serves(layout.Chunks()) != (tt.want == "") || !tg.Serves(layout.Pages()) {
				t.Fatalf("Layouts are %v", tg.Layouts)
			}
			s, err := NewSite(chunkMan, chunkRoot, "127.0.0.1:8080")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			written, _, err := Write(tg, s, out, false)
			if tt.want == "" {
				if err != nil || len(written) != len(tg.Files) {
					t.Errorf("wrote %v, %v", written, err)
				}
				return
			}
			want := tt.target + ": " + ErrChunks.Error() + ": " + tt.want
			if !errors.Is(err, ErrChunks) || err.Error() != want {
				t.Errorf("got %v\nwant %s", err, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("wrote %s (%v)", out, err)
			}
		})
	}
}

// assetsStandIn stands in for Cloudflare's asset server in front of the
// build's folder (DISK): the index gets an ETag (its SHA-256) and the
// Cache-Control of the text binding CC, and If-None-Match a 304, as
// Cloudflare's assets do (they say max-age=0); ranges pass through. It
// counts, by path, the indexes it sent (full) and the 304s (nm), which
// GET /__count/PATH answers.
const assetsStandIn = `
var counts = {};
export default {
    async fetch(request, env) {
        var u = new URL(request.url);
        if (u.pathname.startsWith("/__count/")) {
            return Response.json(counts[u.pathname.slice(8)] || {full: 0, nm: 0});
        }
        var range = request.headers.get("Range");
        var res = await env.DISK.fetch(new Request(request.url, {headers: range ? {Range: range} : {}}));
        if (range || res.status != 200) {
            return res;
        }
        var body = await res.arrayBuffer(), sum = new Uint8Array(await crypto.subtle.digest("SHA-256", body)), tag = "\"";
        for (var i = 0; i < sum.length; i++) {
            tag += (sum[i] < 16 ? "0" : "") + sum[i].toString(16);
        }
        tag += "\"";
        var c = counts[u.pathname] = counts[u.pathname] || {full: 0, nm: 0};
        var h = new Headers({"ETag": tag, "Cache-Control": env.CC, "Content-Type": "application/json"});
        if (request.headers.get("If-None-Match") == tag) {
            c.nm++;
            return new Response(null, {status: 304, headers: h});
        }
        c.full++;
        return new Response(body, {headers: h});
    }
};
`

// TestCloudflareKeepsIndex runs the Worker of a chunks build on workerd
// with assets that say how long an index may be kept: with max-age=60 it
// reads the main listing's index once for three pages; with max-age=0
// (Cloudflare's) it asks again each time and gets 304s. Then the site is
// built again in place, one article more: while its index is kept, the
// Worker answers the previous build's pages whose chunks are still there,
// whole, and a page whose chunk the build deleted from the new build's
// index, read again: never a page of the two builds mixed. A reader feed
// asked again with the assets' ETag is a 304.
func TestCloudflareKeepsIndex(t *testing.T) {
	workerd := needWorkerd(t)
	target, err := Find("cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		maxAge   string
		full, nm int
		rebuild  bool
	}{
		{"public, max-age=60", 1, 0, true},
		{"public, max-age=0, must-revalidate", 1, 3, false},
	} {
		t.Run(tc.maxAge, func(t *testing.T) {
			site, s := copyChunkSite(t)
			root := s.Root
			out := t.TempDir()
			if _, _, err := Write(target, s, out, false); err != nil {
				t.Fatal(err)
			}
			countAddr := "127.0.0.1:" + freePort(t)
			capnp := fmt.Sprintf(`using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "feedgen", worker = (
      modules = [(name = "worker.js", esModule = embed "worker.js")],
      compatibilityDate = "%s",
      bindings = [(name = "ASSETS", service = "assets")],
    )),
    (name = "assets", worker = (
      modules = [(name = "assets.js", esModule = embed "assets.js")],
      compatibilityDate = "%[1]s",
      bindings = [(name = "DISK", service = "disk"), (name = "CC", text = %q)],
    )),
    (name = "disk", disk = (path = %q)),
  ],
  sockets = [
    (name = "http", address = %q, http = (), service = "feedgen"),
    (name = "count", address = %q, http = (), service = "assets"),
  ],
);
`, compatibilityDate, tc.maxAge, root, s.Listen, countAddr)
			for name, data := range map[string]string{"assets.js": assetsStandIn, "kept.capnp": capnp} {
				if err := os.WriteFile(filepath.Join(out, name), []byte(data), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			base := "http://" + s.Listen
			startProcess(t, base, exec.Command(workerd, "serve", filepath.Join(out, "kept.capnp")))
			// startProcess asked /articles/ once (its first answer ends
			// its wait): three more, four in all.
			for _, target := range []string{"/articles/?limit=5", "/articles/?limit=5&offset=60", "/articles/?limit=7&offset=3"} {
				r := request{method: "GET", target: target}
				if d := ask(t, chunkRefBase, r).diff(ask(t, base, r)); d != "" {
					t.Errorf("%s: %s", target, d)
				}
			}
			var n struct{ Full, NM int }
			resp, err := http.Get("http://" + countAddr + "/__count/articles/chunks.json")
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(resp.Body).Decode(&n)
			resp.Body.Close()
			if err != nil || n.Full != tc.full || n.NM != tc.nm {
				t.Errorf("the main index was sent %d times and 304 %d times (%v); want %d and %d", n.Full, n.NM, err, tc.full, tc.nm)
			}
			// A feed is read with the request's If-None-Match, and the
			// assets' 304 passed on.
			checkFeedRevalidates(t, base)
			if !tc.rebuild {
				return
			}
			addArticle(t, site, "")
			ref := serveReference(t, root)
			// The last page's chunk did not change: the kept index
			// answers the previous build, whole.
			r := request{method: "GET", target: "/articles/?limit=5&offset=60"}
			if d := ask(t, chunkRefBase, r).diff(ask(t, base, r)); d != "" {
				t.Errorf("a page of the previous build, its index kept: %s", d)
			}
			// The first page's chunk is gone: the index is read again.
			r = request{method: "GET", target: "/articles/?limit=5"}
			if d := ask(t, ref, r).diff(ask(t, base, r)); d != "" {
				t.Errorf("a page whose chunk the build deleted: %s", d)
			}
		})
	}
}

// TestNetlifyRedirectsChunks checks _redirects of a chunks build with
// Netlify's rules engine: without the edge function, every request of the
// listing is the JSON 404 (404) and so is the manifest, while the
// indexes' roots and leaves and the chunks the edge function reads
// through Netlify's chain match no rule: they are the published files.
func TestNetlifyRedirectsChunks(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	redirector := needNodeModule(t, "netlify-redirector")
	out, _ := writeTarget(t, "netlify", chunkMan, chunkRoot)
	ix, root := readTree(t, chunkRoot, listing.Dir)
	notFound := &struct {
		To     string `json:"to"`
		Status int    `json:"status"`
	}{"/" + netlifyNotFound, http.StatusNotFound}
	tests := map[string]any{
		"/articles/":                         notFound,
		"/articles/?limit=7&offset=3":        notFound,
		"/articles/?tag=API":                 notFound,
		"/manifest.json":                     notFound,
		"/" + chunk.IndexPath(listing.Dir):   nil,
		"/" + ix.Chunks[0].Path:              nil,
		"/" + root.Leaves[0].Path:            nil,
		"/articles/section/news/chunks.json": nil,
	}
	var targets []string
	for k := range tests {
		targets = append(targets, k)
	}
	script := filepath.Join(t.TempDir(), "match.js")
	if err := os.WriteFile(script, []byte(redirectsMatcher), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(targets)
	cmd := exec.CommandContext(t.Context(), node, script, redirector, filepath.Join(out, "_redirects"))
	cmd.Stdin = strings.NewReader(string(in))
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var got []json.RawMessage
	if err := json.Unmarshal(stdout, &got); err != nil || len(got) != len(targets) {
		t.Fatalf("node printed %s (%v)", stdout, err)
	}
	for i, target := range targets {
		want, _ := json.Marshal(tests[target])
		if string(got[i]) != string(want) {
			t.Errorf("%s: %s, want %s", target, got[i], want)
		}
	}
}

// mustReplace returns s with its first old replaced by new, and fails
// the test when s has no old.
func mustReplace(t *testing.T, s, old, new string) string {
	t.Helper()
	if !strings.Contains(s, old) {
		t.Fatalf("no %s in %.200s", old, s)
	}
	return strings.Replace(s, old, new, 1)
}

// readTree reads the index of the collection in folder dir of the build
// in folder public: its root, and the index it makes with its leaves.
func readTree(t *testing.T, public, dir string) (*chunk.Index, *chunk.Root) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(public, chunk.IndexPath(dir)))
	if err != nil {
		t.Fatal(err)
	}
	root, err := chunk.ParseRoot(data)
	if err != nil {
		t.Fatal(err)
	}
	ix, err := chunk.ReadIndex(data, func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(public, p)) })
	if err != nil {
		t.Fatal(err)
	}
	return ix, root
}
