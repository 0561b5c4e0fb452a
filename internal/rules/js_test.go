package rules

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/syndication"
)

// The JavaScript targets, each on its real runtime over the sample build:
// nginx with njs, workerd for Cloudflare and for the Netlify edge
// function, node for the CloudFront Function (through the event and
// response objects CloudFront documents) and for Netlify's _redirects
// (netlify-redirector, Netlify's own rules engine).

func TestNginxNJS(t *testing.T) {
	base := runTarget(t, "nginx-njs", startNginxNJS(t))
	checkRaw(t, base, refBase, rawRequests(), false)
}

// startNginxNJS returns how to run the files of the nginx-njs target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startNginxNJS(t *testing.T) startFunc {
	t.Helper()
	nginx := needProgram(t, "nginx")
	return func(t *testing.T, out string, s *Site) string {
		module := StandaloneModules(njsTarget(), s)[0]
		if _, err := os.Stat(module); err != nil {
			missingRuntime(t, module+" (libnginx-mod-http-js)")
		}
		base := "http://" + s.Listen
		startProcess(t, base, nginxCommand(nginx, out))
		return base
	}
}

func TestCloudflareWorkerd(t *testing.T) {
	base := runTarget(t, "cloudflare", startWorkerd(t))
	checkRaw(t, base, refBase, rawRequests(), true)
}

// startWorkerd returns how to run the files of the cloudflare target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startWorkerd(t *testing.T) startFunc {
	t.Helper()
	workerd := needWorkerd(t)
	return func(t *testing.T, out string, s *Site) string {
		base := "http://" + s.Listen
		startProcess(t, base, exec.Command(workerd, "serve", filepath.Join(out, "workerd.capnp")))
		return base
	}
}

// netlifyChain runs the edge function as Netlify's chain does: a Worker
// calls it with a context whose next passes a request on to the
// published files (a disk service over the build).
const netlifyChain = `import handler, { config } from "./feedgen.js";

export default {
    async fetch(request, env) {
        if (config.path != "/*") {
            return new Response("config.path " + config.path, {status: 500});
        }
        return handler(request, {
            next: function (r) {
                return env.ORIGIN.fetch(r || request);
            }
        });
    }
};
`

func TestNetlifyEdgeFunction(t *testing.T) {
	runTarget(t, "netlify", startNetlifyEdge(t))
}

// startNetlifyEdge returns how to run the files of the netlify target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startNetlifyEdge(t *testing.T) startFunc {
	t.Helper()
	workerd := needWorkerd(t)
	return func(t *testing.T, out string, s *Site) string {
		dir := t.TempDir()
		fn, err := os.ReadFile(filepath.Join(out, netlifyEdgeFunction))
		if err != nil {
			t.Fatal(err)
		}
		capnp := fmt.Sprintf(`using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "edge", worker = (
      modules = [
        (name = "chain.js", esModule = embed "chain.js"),
        (name = "feedgen.js", esModule = embed "feedgen.js"),
      ],
      compatibilityDate = "%s",
      bindings = [(name = "ORIGIN", service = "origin")],
    )),
    (name = "origin", disk = (path = %q)),
  ],
  sockets = [(name = "http", address = %q, http = (), service = "edge")],
);
`, compatibilityDate, s.Root, s.Listen)
		for name, data := range map[string]string{"chain.js": netlifyChain, "feedgen.js": string(fn), "netlify.capnp": capnp} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		base := "http://" + s.Listen
		startProcess(t, base, exec.Command(workerd, "serve", filepath.Join(dir, "netlify.capnp")))
		return base
	}
}

// redirectsMatcher reads a JSON list of request targets on its standard
// input and prints, for each, the rule of _redirects (argv[3]) that
// netlify-redirector (argv[2]) matches: {to, status}, or null.
const redirectsMatcher = `const fs = require("fs");
const redirector = require(process.argv[2]);
const targets = JSON.parse(fs.readFileSync(0, "utf8"));
redirector.parsePlain(fs.readFileSync(process.argv[3], "utf8"), {}).then(function (m) {
    console.log(JSON.stringify(targets.map(function (t) {
        const i = t.indexOf("?");
        const r = m.match({scheme: "http", host: "localhost", path: i < 0 ? t : t.slice(0, i), query: i < 0 ? "" : t.slice(i + 1),
            getHeader: function () { return ""; }, getCookie: function () { return ""; }});
        return r ? {to: r.to, status: r.status} : null;
    })));
});
`

// TestNetlifyRedirects checks _redirects on its own (as it answers when
// the edge function does not run) with Netlify's rules engine: every
// canonical request of the table for a page of the build, and every
// filtered one that a rule can hold, is mapped onto the file whose bytes
// feedgen serve answers; every other request of the table is mapped onto
// that very page too, or onto the JSON 404 (the probe's case: an unknown
// or unruly value fell through to the main listing's rule, 200 with the
// unfiltered listing). Netlify's own headers are not checked.
func TestNetlifyRedirects(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	redirector := needNodeModule(t, "netlify-redirector")
	out, s := writeTarget(t, "netlify", sampleMan, sampleRoot)
	published := t.TempDir()
	if err := os.CopyFS(published, os.DirFS(sampleRoot)); err != nil {
		t.Fatal(err)
	}
	notFound, err := os.ReadFile(filepath.Join(out, netlifyNotFound))
	if err != nil || string(notFound) != listing.NotFoundBody {
		t.Fatalf("%s: %q, %v", netlifyNotFound, notFound, err)
	}
	os.WriteFile(filepath.Join(published, netlifyNotFound), notFound, 0o644)
	var rows []request
	var targets []string
	extra := []request{
		{classUnknown, "GET", "/articles/?tag=nobody+has+it"},
		{classUnknown, "GET", "/articles/?limit=50&tag=100%25"},
		{classFilters, "GET", "/articles/?section=news&tag=releases"},
		{classFilters, "GET", "/articles/?category=zzz&section=news"},
		{classFilters, "GET", "/articles/?author=ivan-petrov&section=news&limit=50"},
	}
	for _, r := range append(slices.Clone(requests), extra...) {
		if r.method == "GET" && r.class != classRedirect {
			rows, targets = append(rows, r), append(targets, r.target)
		}
	}
	script := filepath.Join(out, "match.js")
	if err := os.WriteFile(script, []byte(redirectsMatcher), 0o644); err != nil {
		t.Fatal(err)
	}
	in, _ := json.Marshal(targets)
	cmd := exec.Command(node, script, redirector, filepath.Join(out, "_redirects"))
	cmd.Stdin = strings.NewReader(string(in))
	stdout, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var matches []*struct {
		To     string `json:"to"`
		Status int    `json:"status"`
	}
	if err := json.Unmarshal(stdout, &matches); err != nil || len(matches) != len(rows) {
		t.Fatalf("node printed %s (%v)", stdout, err)
	}
	exact := 0
	for i, r := range rows {
		m := matches[i]
		want := ask(t, refBase, r)
		if netlifyFallbackWrong[r.target] {
			continue // docs/deploying.md says so
		}
		if m == nil {
			path, _, _ := strings.Cut(r.target, "?")
			if body, err := os.ReadFile(filepath.Join(published, filepath.FromSlash(path))); err == nil && want.status == http.StatusOK && string(body) == want.body {
				exact++ // the file by its path: the main listing's feed
				continue
			}
			if r.class != classHidden || r.target == "/manifest.json" || strings.HasPrefix(r.target, "/articles/?") {
				t.Errorf("%s: no rule: Netlify would serve the file by its path, or its own page", r.target)
			}
			continue // a page by its path (the edge function reads them so), or Netlify's own 404
		}
		body, err := os.ReadFile(filepath.Join(published, filepath.FromSlash(m.To)))
		if err != nil {
			// A page the build does not have: Netlify's own 404, for
			// offsets past the end or not plain numbers.
			if r.class != classPastEnd && r.class != classLenient && !strings.Contains(want.body, `"results":[]`) {
				t.Errorf("%s: rule to %s, which the published folder does not have", r.target, m.To)
			}
			continue
		}
		switch {
		case m.Status == http.StatusOK && want.status == http.StatusOK && string(body) == want.body:
			exact++
		case m.Status == http.StatusNotFound && string(body) == listing.NotFoundBody:
			canonical := r.class == classCanonical || r.class == classFilters && !slices.ContainsFunc(
				listing.ParseQuery(strings.TrimPrefix(r.target, "/articles/?"), s.Paging, listing.FilterKeys()).Params, unruly)
			if canonical && want.status == http.StatusOK && !strings.Contains(want.body, `"results":[]`) {
				t.Errorf("%s: the JSON 404 for a canonical request of a page", r.target)
			}
		default:
			t.Errorf("%s: rule %+v, whose answer is neither feedgen serve's (%d) nor the JSON 404", r.target, m, want.status)
		}
	}
	if exact < 15 {
		t.Errorf("only %d requests answered exactly", exact)
	}
}

// netlifyFallbackWrong are the requests that _redirects alone answers
// with another page than feedgen serve: Netlify's rules engine reads no
// parameter from a query that ends in '&', nor an escaped parameter name,
// and then the main listing's rule matches. docs/deploying.md says so; the edge
// function answers them exactly.
var netlifyFallbackWrong = map[string]bool{
	"/articles/?t%61g=API":         true,
	"/articles/?&&limit=50&":       true,
	"/articles/feed.rss?t%61g=API": true,
}

// cloudfrontViewer runs a CloudFront Function (argv[2]) as CloudFront
// does on viewer requests, on argv[4]:argv[5]: each request becomes the
// documented event object (the query string as a querystring object, keys
// and values as sent); a response the function returns is sent as it is;
// a request it returns goes to the origin, the build (argv[3]) served as
// an S3 bucket serves the objects feedgen publish uploads (403 for a
// missing key): with the Content-Type of its file's name in argv[6] (a
// JSON object: a reader feed's), else application/json, and the Allow and
// Vary headers of the response headers policy docs/deploying.md has the
// distribution add.
const cloudfrontViewer = `const fs = require("fs"), http = require("http"), path = require("path");
const [, , fnFile, root, host, port, typesJSON] = process.argv, types = JSON.parse(typesJSON);
const handler = new Function(fs.readFileSync(fnFile, "utf8") + "\nreturn handler;")();
http.createServer(function (req, res) {
    const i = req.url.indexOf("?"), qs = {}, headers = {};
    for (const pair of (i < 0 ? "" : req.url.slice(i + 1)).split("&")) {
        if (pair == "") continue;
        const j = pair.indexOf("="), k = j < 0 ? pair : pair.slice(0, j), v = j < 0 ? "" : pair.slice(j + 1);
        if (!Object.prototype.hasOwnProperty.call(qs, k)) {
            qs[k] = {value: v};
        } else {
            qs[k].multiValue = qs[k].multiValue || [{value: qs[k].value}];
            qs[k].multiValue.push({value: v});
        }
    }
    for (const k in req.headers) headers[k] = {value: req.headers[k]};
    const event = {version: "1.0", context: {eventType: "viewer-request"}, viewer: {ip: "127.0.0.1"},
        request: {method: req.method, uri: i < 0 ? req.url : req.url.slice(0, i), querystring: qs, headers: headers, cookies: {}}};
    const out = handler(event);
    if (out.statusCode) {
        const h = {}, body = out.body ? out.body.data : "";
        for (const k in out.headers) h[k] = out.headers[k].value;
        h["content-length"] = Buffer.byteLength(body);
        res.writeHead(out.statusCode, h);
        res.end(req.method == "HEAD" ? undefined : body);
        return;
    }
    fs.readFile(path.join(root, decodeURIComponent(out.uri)), function (err, data) {
        if (err) {
            res.writeHead(403, {"content-type": "application/xml"});
            res.end("<Error><Code>AccessDenied</Code></Error>");
            return;
        }
        const type = Object.prototype.hasOwnProperty.call(types, path.basename(out.uri)) ? types[path.basename(out.uri)] : "application/json";
        res.writeHead(200, {"content-type": type, "content-length": data.length, allow: "GET, HEAD, OPTIONS", vary: "Accept"});
        res.end(req.method == "HEAD" ? undefined : data);
    });
}).listen(+port, host);
`

func TestCloudFrontFunction(t *testing.T) {
	runTarget(t, "cloudfront", startCloudFront(t))
}

// startCloudFront returns how to run the files of the cloudfront target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startCloudFront(t *testing.T) startFunc {
	t.Helper()
	node := needProgram(t, "node", "nodejs")
	return func(t *testing.T, out string, s *Site) string {
		fn, err := os.ReadFile(filepath.Join(out, "cloudfront.js"))
		if err != nil {
			t.Fatal(err)
		}
		if len(fn) > cloudfrontMaxSize {
			t.Errorf("cloudfront.js is %d bytes, over %d", len(fn), cloudfrontMaxSize)
		}
		if s.Root == sampleRoot && strings.Contains(string(fn), "filters are left out") {
			t.Errorf("the sample's filters do not fit in cloudfront.js any more (%d bytes): the table's filter rows will fail", len(fn))
		}
		script := filepath.Join(t.TempDir(), "viewer.js")
		if err := os.WriteFile(script, []byte(cloudfrontViewer), 0o644); err != nil {
			t.Fatal(err)
		}
		base := "http://" + s.Listen
		types := map[string]string{}
		for _, f := range syndication.Formats() {
			types[f.File] = layout.ContentType(layout.FeedPath(listing.Dir, f))
		}
		typesJSON, _ := json.Marshal(types)
		startProcess(t, base, exec.Command(node, script, filepath.Join(out, "cloudfront.js"), s.Root, s.Host(), s.Port(), string(typesJSON)))
		return base
	}
}

// TestCloudFrontTooBig checks that a site whose counts do not fit in
// CloudFront's 10 KB gets the function without its filters, which says
// so, and still under 10 KB.
func TestCloudFrontTooBig(t *testing.T) {
	s := &Site{Paging: testPagination(), Filters: []string{"tag"}, BaseURL: "https://api.example.com",
		Collections: []manifest.Collection{{Dir: listing.Dir, Count: 5000}}}
	for i := range 2000 {
		p := []listing.Param{{Key: "tag", Value: "tag-" + strconv.Itoa(i)}}
		s.Collections = append(s.Collections, manifest.Collection{Dir: listing.CollectionDir(p), Params: p, Count: 3})
	}
	out, err := cloudfrontGenerate(s)
	if err != nil {
		t.Fatal(err)
	}
	js := string(out.Files["cloudfront.js"])
	if len(js) > cloudfrontMaxSize || !strings.Contains(js, "The filters are left out") || strings.Contains(js, "tag-1") {
		t.Errorf("cloudfront.js of %d bytes, beginning %.300q", len(js), js)
	}
	d := decodeSiteData(t, out.Files["cloudfront.js"])
	if len(d.Kinds) != 0 || len(d.Collections) != 1 {
		t.Errorf("kinds %v, collections %v: want the main listing only", d.Kinds, d.Collections)
	}
	// Said on stderr (the command prints the warnings), and with --strict
	// an error, with nothing written.
	if len(out.Warnings) != 1 || !strings.HasPrefix(out.Warnings[0], "cloudfront.js: the filters are left out: with the counts of its 2001 collections the function would be ") {
		t.Errorf("warnings %q", out.Warnings)
	}
	target, _ := Find("cloudfront")
	s.Root, s.Listen = sampleRoot, "80"
	dir := filepath.Join(t.TempDir(), "out")
	written, warnings, err := Write(target, s, dir, true)
	var se *StrictError
	if !errors.As(err, &se) || len(written) != 0 || len(warnings) != 1 || !strings.HasSuffix(err.Error(), "(--strict): nothing was written") {
		t.Errorf("strict: got %v, %v, %v", written, warnings, err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("strict: the folder was made (%v)", err)
	}
}

func testPagination() listing.Pagination {
	return listing.Pagination{DefaultLimit: 20, MaxLimit: 100, Limits: []int{20, 50, 100}, Offsets: listing.OffsetsAll}
}

// decodeSiteData reads back the data of a script made by script.
func decodeSiteData(t *testing.T, js []byte) *siteData {
	t.Helper()
	_, rest, ok := strings.Cut(string(js), "JSON.parse('")
	var b strings.Builder
	for i := 0; ok; i++ {
		switch {
		case i == len(rest):
			t.Fatalf("no end to the data in %.200q", js)
		case rest[i] == '\\' && i+1 < len(rest):
			i++
			b.WriteByte(rest[i])
		case rest[i] == '\'':
			ok = false
		default:
			b.WriteByte(rest[i])
		}
	}
	data := b.String()
	if data == "" {
		t.Fatalf("no data in %.200q", js)
	}
	var d siteData
	if err := json.Unmarshal([]byte(data), &d); err != nil {
		t.Fatalf("data %.200q: %v", data, err)
	}
	return &d
}

// TestSiteDataRoundTrip reads the collections back from the data of a
// script: every collection of the site with its count and folder, and no
// other; the kinds of the filters, also those without a collection.
func TestSiteDataRoundTrip(t *testing.T) {
	long := strings.Repeat("Д", 120)
	odd := []string{"con", "Go", long, "__proto__", "a'b\\c\"d", "x\u2028y", "о редакции"}
	tests := []struct {
		name string
		site *Site
	}{
		{"sample", &Site{Paging: sampleMan.Pagination, Filters: sampleMan.Filters, BaseURL: sampleMan.BaseURL, Collections: sampleMan.Collections}},
		{"odd values", func() *Site {
			s := &Site{Paging: testPagination(), Filters: []string{"tag", "category", "author"},
				BaseURL: "https://x.example/a'b", Collections: []manifest.Collection{{Dir: listing.Dir, Count: 9}}}
			for i, v := range odd {
				for _, p := range [][]listing.Param{{{Key: "tag", Value: v}}, {{Key: "category", Value: v}, {Key: "section", Value: "s" + strconv.Itoa(i%2)}}} {
					s.Collections = append(s.Collections, manifest.Collection{Dir: listing.CollectionDir(p), Params: p, Count: i + 1})
				}
			}
			return s
		}()},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := tt.site
			d0, err := newSiteData(s, true)
			if err != nil {
				t.Fatal(err)
			}
			js, err := script("", d0, "")
			if err != nil {
				t.Fatal(err)
			}
			d := decodeSiteData(t, js)
			got := map[string]int{}
			var walk func(kind []string, node any, values []string)
			walk = func(kind []string, node any, values []string) {
				if len(values) == len(kind) {
					var params []listing.Param
					for i, k := range kind {
						params = append(params, listing.Param{Key: k, Value: values[len(values)-1-i]})
					}
					dir := plainDir(params)
					count := node
					if leaf, ok := node.([]any); ok {
						count, dir = leaf[0], leaf[1].(string)
					}
					got[dir+" "+fmt.Sprint(params)] = int(count.(float64))
					return
				}
				for v, next := range node.(map[string]any) {
					walk(kind, next, append(slices.Clone(values), v))
				}
			}
			for kind, node := range d.Collections {
				if kind == "" {
					got[listing.Dir+" []"] = int(node.(float64))
					continue
				}
				walk(strings.Split(kind, "&"), node, nil)
			}
			want := map[string]int{}
			for _, c := range s.Collections {
				params := slices.Clone(c.Params)
				slices.SortFunc(params, func(a, b listing.Param) int { return strings.Compare(a.Key, b.Key) })
				want[c.Dir+" "+fmt.Sprint(params)] = c.Count
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("collections read back:\n%v\nwant\n%v", got, want)
			}
			for _, f := range s.Filters {
				if d.Kinds[listing.FilterKind(f)] != 1 {
					t.Errorf("kind of filter %s missing from %v", f, d.Kinds)
				}
			}
			prefix := listing.AppendString(nil, s.BaseURL+listing.Path+"?")
			if `"`+d.LinkPrefix+`"` != string(prefix) {
				t.Errorf("link prefix %q, want %s", d.LinkPrefix, prefix)
			}
		})
	}
}

// TestDigitZeros reads the zeros back and checks them against Go's table
// of decimal digits: each zero starts a run of ten digits whose values
// Go's ParseInt reads, and every digit past ASCII is in one.
func TestDigitZeros(t *testing.T) {
	var zeros []rune
	z := int64(0)
	for d := range strings.SplitSeq(digitZeros(), ",") {
		n, err := strconv.ParseInt(d, 36, 64)
		if err != nil {
			t.Fatal(err)
		}
		z += n
		zeros = append(zeros, rune(z))
	}
	for r := rune(0x80); r <= unicode.MaxRune; r++ {
		in := slices.ContainsFunc(zeros, func(z rune) bool { return r >= z && r < z+10 })
		if in != unicode.Is(unicode.Nd, r) {
			t.Fatalf("%U: in a run %v, a digit %v", r, in, !in)
		}
	}
	for _, z := range zeros {
		for i := range rune(10) {
			if _, digits, ok := listing.ParseInt("1" + string(z+i)); !ok || digits != "1"+strconv.Itoa(int(i)) {
				t.Fatalf("ParseInt(1%c) = %q, %v", z+i, digits, ok)
			}
		}
	}
}

// parseDriver prints what listing.js makes of each raw query of its
// standard input (one JSON list): [limit, offset, [[key, value], ...]].
const parseDriver = `
var input = JSON.parse(require("fs").readFileSync(0, "utf8")), out = [];
for (var i = 0; i < input.length; i++) {
    var q = parse(input[i]), p = [];
    for (var j = 0; j < q.p.length; j++) {
        p.push([q.p[j][0], text(q.p[j][1])]);
    }
    out.push([q.l, q.o, p]);
}
console.log(JSON.stringify(out));
`

// TestParseMatchesGo runs listing.js's parse on node over many queries,
// lenient and odd ones, and compares each result with listing.ParseQuery:
// the one reading of a query that feedgen serve and every JavaScript
// target share.
func TestParseMatchesGo(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	queries := []string{"", "limit=20&offset=40", "limit=%2020", "limit=٢٠", "offset=1_000", "limit=7;offset=14",
		"a=%zz&limit=+5", "limit=%1C5", "limit=%C2%A05", "limit=%E2%80%8A50%E3%80%80", "limit=%F0%9D%9F%92%F0%9D%9F%8E",
		"limit=-0", "offset=-0", "limit=+", "limit=1__0", "limit=_10", "limit=10_", "offset=00000000000000000000000000012",
		"offset=123456789012345678901234567890", "limit=100000000000000000000", "limit=99", "limit=%ff", "tag=%ff%fe&tag=",
		"tag=%ff%fe", "tag=a%ffb%c3%28", "tag=%ED%A0%80", "tag=%F4%90%80%80", "tag=%E0%80%AF", "tag=%C0%80", "tag=%F0%9F%8E%89",
		"tag=C%2B%2B+x", "t%61g=Go&TAG=x", "section=news&category=politics&limit=50", "author=ivan&tag=Go",
		"tag=a&tag=b", "tag=&tag=Go", "tag=Go&tag=", "limit=20&limit=abc", "limit=abc&limit=20", "&&limit=50&", "limit",
		"limit=", "offset", "=20", "limit=%", "limit=%2", "limit=%%3520", "limit=2%30", "offset=%D9%A3%DB%B5%DF%80",
		"limit=5%E2%80%A8", "limit=%E1%A0%8E5", "limit=%EF%BC%95%EF%BC%90", "tag=%E2%80%A8&limit=20", "tag=%22%5C%2F",
		"tag=~-._%20*'()!", "offset=1e3", "offset=0x10", "limit=+-1", "limit=%C2%B2", "limit=%E2%85%A0"}
	// Values of random bytes, most of them about the edges of UTF-8's
	// ranges, percent-encoded or raw: the replacement of ill-formed
	// sequences by U+FFFD (maximal subparts) is the same in both.
	rng := rand.New(rand.NewPCG(25, 8))
	edges := []byte{0x00, 0x41, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xa0, 0xbf, 0xc0, 0xc1, 0xc2, 0xdf, 0xe0, 0xe1, 0xec, 0xed, 0xee, 0xef, 0xf0, 0xf1, 0xf3, 0xf4, 0xf5, 0xff}
	for range 3000 {
		var q strings.Builder
		q.WriteString("tag=")
		for range 1 + rng.IntN(8) {
			c := edges[rng.IntN(len(edges))]
			if rng.IntN(4) == 0 {
				c = byte(rng.IntN(256))
			}
			fmt.Fprintf(&q, "%%%02X", c)
		}
		queries = append(queries, q.String())
	}
	filters := listing.FilterKeys()
	var want []string
	for _, q := range queries {
		p := listing.ParseQuery(q, testPagination(), filters)
		params := [][2]string{}
		for _, x := range p.Params {
			params = append(params, [2]string{x.Key, x.Value})
		}
		w, _ := json.Marshal([]any{p.Limit, p.Offset, params})
		want = append(want, string(w))
	}
	d, err := newSiteData(&Site{Paging: testPagination(), Collections: []manifest.Collection{{Dir: listing.Dir}}}, true)
	if err != nil {
		t.Fatal(err)
	}
	js, err := script("", d, parseDriver)
	if err != nil {
		t.Fatal(err)
	}
	for _, form := range []struct {
		name string
		js   []byte
	}{{"as written", js}, {"minified", minify(compact(js))}} {
		file := filepath.Join(t.TempDir(), "parse.js")
		if err := os.WriteFile(file, form.js, 0o644); err != nil {
			t.Fatal(err)
		}
		in, _ := json.Marshal(queries)
		cmd := exec.Command(node, file)
		cmd.Stdin = strings.NewReader(string(in))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s: node: %v\n%s", form.name, err, out)
		}
		var got []json.RawMessage
		if err := json.Unmarshal(out, &got); err != nil || len(got) != len(queries) {
			t.Fatalf("%s: node printed %s (%v)", form.name, out, err)
		}
		for i, q := range queries {
			var g any
			json.Unmarshal(got[i], &g)
			norm, _ := json.Marshal(g)
			if string(norm) != want[i] {
				t.Errorf("%s: %q: listing.js %s, ParseQuery %s", form.name, q, norm, want[i])
			}
		}
	}
}

// needWorkerd returns the path of workerd: on PATH, or the binary of the
// npm package make runtimes installs.
func needWorkerd(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("workerd"); err == nil {
		return p
	}
	for _, pkg := range []string{"@cloudflare/workerd-linux-64", "@cloudflare/workerd-linux-arm64", "@cloudflare/workerd-darwin-64", "@cloudflare/workerd-darwin-arm64"} {
		if p, ok := findNodeModule(pkg + "/bin/workerd"); ok {
			return p
		}
	}
	missingRuntime(t, "workerd (npm package workerd)")
	return ""
}

// needNodeModule returns the folder of an npm package that make runtimes
// installs.
func needNodeModule(t *testing.T, pkg string) string {
	t.Helper()
	p, ok := findNodeModule(pkg)
	if !ok {
		missingRuntime(t, "npm package "+pkg)
	}
	return p
}

// findNodeModule looks for path inside node_modules: FEEDGEN_NODE_MODULES,
// or the repository's .cache/npm/node_modules, where make runtimes
// installs the npm packages.
func findNodeModule(path string) (string, bool) {
	for _, dir := range []string{os.Getenv("FEEDGEN_NODE_MODULES"), filepath.Join("..", "..", ".cache", "npm", "node_modules")} {
		if dir == "" {
			continue
		}
		p, err := filepath.Abs(filepath.Join(dir, path))
		if err != nil {
			continue
		}
		if _, err := os.Stat(p); err == nil {
			return p, true
		}
	}
	return "", false
}

// missingRuntime skips the test for lack of what, or fails it when make
// test requires the runtimes (as needProgram does).
func missingRuntime(t *testing.T, what string) {
	t.Helper()
	if os.Getenv("FEEDGEN_RUNTIMES") == "required" {
		t.Fatalf("%s not found: make test installs it (make runtimes)", what)
	}
	t.Skipf("%s not found: make runtimes installs it", what)
}

// answerDriver prints listing.js's answer to each [method, path, query]
// of its standard input: [status, page file, body].
const answerDriver = `
var input = JSON.parse(require("fs").readFileSync(0, "utf8")), out = [];
for (var i = 0; i < input.length; i++) {
    var a = answer(input[i][0], input[i][1], input[i][2]);
    out.push([a.s, a.f || "", a.b || a.h || ""]);
}
console.log(JSON.stringify(out));
`

// TestAnswer runs listing.js's answer on node for what the shared table
// does not reach: aligned offsets, collections whose folders the data
// names (a device name of Windows, a value hashed for its length) or
// whose value is a name JavaScript objects hold themselves, and a build
// with some of the feed formats.
func TestAnswer(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	long := strings.Repeat("Ж", 120)
	p := testPagination()
	p.Offsets = listing.OffsetsAligned
	s := &Site{Paging: p, Filters: []string{"tag"}, BaseURL: "https://api.example.com",
		Collections: []manifest.Collection{{Dir: listing.Dir, Count: 66}}}
	for _, v := range []string{"con", long, "__proto__", "constructor", "Go"} {
		prm := []listing.Param{{Key: "tag", Value: v}}
		s.Collections = append(s.Collections, manifest.Collection{Dir: listing.CollectionDir(prm), Params: prm, Count: 30})
	}
	longQuery := "tag=" + strings.Repeat("%D0%96", 120)
	tests := []struct {
		method, path, query string
		status              int
		file, body          string
	}{
		{"GET", "/articles/", "", 200, "articles/20/0.json", ""},
		{"GET", "/articles/", "offset=40", 200, "articles/20/40.json", ""},
		{"GET", "/articles/", "offset=7", 404, "", listing.NotFoundBody},
		{"GET", "/articles/", "limit=50&offset=50", 200, "articles/50/50.json", ""},
		{"GET", "/articles/", "offset=66", 200, "", `{"count":66,"next":null,"previous":"https://api.example.com/articles/?limit=20&offset=46","results":[]}`},
		{"GET", "/articles/", "offset=67", 200, "", `{"count":66,"next":null,"previous":"https://api.example.com/articles/?limit=20&offset=47","results":[]}`},
		{"GET", "/articles/", "tag=con&offset=20", 200, "articles/tag/co_6e/20/20.json", ""},
		{"GET", "/articles/", "tag=con", 200, "articles/tag/co_6e/20/0.json", ""},
		{"GET", "/articles/", longQuery + "&offset=20", 200, listing.CollectionDir([]listing.Param{{Key: "tag", Value: long}}) + "/20/20.json", ""},
		{"GET", "/articles/", "tag=__proto__", 200, "articles/tag/_5f_5fproto_5f_5f/20/0.json", ""},
		{"GET", "/articles/", "tag=constructor&limit=100", 200, "articles/tag/constructor/100/0.json", ""},
		{"GET", "/articles/", "tag=toString", 200, "", `{"count":0,"next":null,"previous":null,"results":[]}`},
		{"GET", "/articles/", "tag=go&offset=5", 200, "", `{"count":0,"next":null,"previous":"https://api.example.com/articles/?limit=20&tag=go","results":[]}`},
		{"GET", "/articles/", "section=news", 404, "", listing.NotFoundBody},
		{"DELETE", "/articles/", "", 405, "", `{"detail":"Method \"DELETE\" not allowed."}`},
		{"GET", "/articles", "a=%zz&b={\"'}", 301, "", `/articles/?a=%zz&b=%7B%22'%7D`},
		// The build has RSS feeds only: another format's path is none.
		{"GET", "/articles/feed.rss", "limit=7&offset=3", 200, "articles/feed.rss", ""},
		{"GET", "/articles/feed.rss", "tag=con", 200, "articles/tag/co_6e/feed.rss", ""},
		{"GET", "/articles/feed.rss", "tag=toString", 404, "", listing.NotFoundBody},
		{"GET", "/articles/feed.rss", "section=news", 404, "", listing.NotFoundBody},
		{"POST", "/articles/feed.rss", "", 405, "", `{"detail":"Method \"POST\" not allowed."}`},
		{"GET", "/articles/feed.atom", "", 404, "", listing.NotFoundBody},
		{"POST", "/articles/feed.atom", "", 404, "", listing.NotFoundBody},
		{"GET", "/articles/tag/co_6e/feed.rss", "", 404, "", listing.NotFoundBody},
	}
	rss, _ := syndication.FormatNamed("rss")
	s.Feeds = []syndication.Format{rss}
	d, err := newSiteData(s, true)
	if err != nil {
		t.Fatal(err)
	}
	js, err := script("", d, answerDriver)
	if err != nil {
		t.Fatal(err)
	}
	var in [][3]string
	for _, tt := range tests {
		in = append(in, [3]string{tt.method, tt.path, tt.query})
	}
	file := filepath.Join(t.TempDir(), "answer.js")
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(in)
	cmd := exec.Command(node, file)
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%s", err, out)
	}
	var got [][3]any
	if err := json.Unmarshal(out, &got); err != nil || len(got) != len(tests) {
		t.Fatalf("node printed %s (%v)", out, err)
	}
	for i, tt := range tests {
		status, file, body := int(got[i][0].(float64)), got[i][1].(string), got[i][2].(string)
		if status != tt.status || file != tt.file || tt.file == "" && body != tt.body {
			t.Errorf("%s %s?%s: %d %q %q; want %d %q %q", tt.method, tt.path, tt.query, status, file, body, tt.status, tt.file, tt.body)
		}
	}
}

// TestFilterKeysInScript checks that listing.js stands for the filters'
// parameters once, where script writes the table's (the edge code has no
// copy by hand), and that each JavaScript target's script carries them.
func TestFilterKeysInScript(t *testing.T) {
	if n := strings.Count(listingJS, filterKeysJS); n != 1 {
		t.Fatalf("listing.js has %s %d times, want once", filterKeysJS, n)
	}
	d, err := newSiteData(&Site{Paging: sampleMan.Pagination, Filters: sampleMan.Filters, BaseURL: sampleMan.BaseURL, Collections: sampleMan.Collections}, true)
	if err != nil {
		t.Fatal(err)
	}
	js, err := script("", d, "")
	if err != nil {
		t.Fatal(err)
	}
	want := "var FILTERS = " + filterKeysLiteral() + ";"
	if !strings.Contains(string(js), want) || strings.Contains(string(js), filterKeysJS) {
		t.Errorf("the script does not hold %q in place of %s", want, filterKeysJS)
	}
	for _, k := range listing.FilterKeys() {
		if !strings.Contains(filterKeysLiteral(), `"`+k+`"`) {
			t.Errorf("filter parameter %q is not in the script's FILTERS", k)
		}
	}
}

// TestMinify checks what minify leaves out and rewrites, and what it
// must leave alone.
func TestMinify(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"var a = 1;\nif (a) {\n    b();\n}\n", "var a=1;if(a){b()}"},
		{"function f(x) {\n    return x + +1;\n}\n", "function f(x){return x+ +1}"},
		{"while (g());}", "while(g());}"}, // a loop's empty statement
		{"if (f(x)) {\n    g();\n} else;}", "if(f(x)){g()}else;}"},
		{"for (i = 0; i < n; i++);}", "for(i=0;i<n;i++);}"},
		{"for (;;) {\n    h();\n}", "for(;;){h()}"},
		{`s = ";} 0x10";`, `s=";} 0x10";`}, // in a string
		{"c = 0x80 | 0xbf & 0x10000;", "c=128|191&65536;"},
		{"c = 0xfffd;", "c=65533;"},
		{"c = 0x1f;", "c=31;"},
		{"c = 0xd800;", "c=55296;"},
		{"c = 0x7;", "c=7;"},
		{"c = 0x10.toString(16);", "c=0x10.toString(16);"}, // a '.' after
		{"c = a0x10;", "c=a0x10;"},                         // a name
		{"c = 0xFF_FF;", "c=0xFF_FF;"},                     // a separator
		{"c = 0;", "c=0;"},
	} {
		if got := string(minify([]byte(tc.in))); got != tc.want {
			t.Errorf("minify(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
