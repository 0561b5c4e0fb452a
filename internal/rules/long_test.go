package rules

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/listing"
)

// longValues are filter values about and past the platforms' limits: a
// regular expression of 1,000 repetitions (Go's, Caddy's), the 3,000
// bytes of a regular expression the plain targets write (nginx reads no
// longer token), and request lines of 8 kB (nginx's and Apache's default
// buffers).
var longValues = []struct{ name, value string }{
	{"1,200 Latin letters", strings.Repeat("a", 1200)},
	{"3,000 Latin letters", strings.Repeat("b", 3000)},
	{"1,100 Cyrillic letters (6,600 bytes escaped)", strings.Repeat("я", 1100)},
	{"9,000 Latin letters", strings.Repeat("c", 9000)},
}

// longSite builds a site whose articles carry longValues as tags, and
// starts feedgen serve over it: the build's folder, its Site for
// listen, and the reference's base URL.
func longSite(t *testing.T, listen string) (*Site, string) {
	t.Helper()
	dir := t.TempDir()
	var tags strings.Builder
	for _, v := range longValues {
		fmt.Fprintf(&tags, "  - %s\n", v.value)
	}
	files := map[string]string{
		"config.yaml": "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {politics: Politics}}\n" +
			"authors: {ivan: {name: Ivan, url: /a/}}\nfilters: [tag]\npagination: {default_limit: 20, limits: [20, 50]}\n",
	}
	for i := 1; i <= 3; i++ {
		files[fmt.Sprintf("content/news/politics/a%d.md", i)] = fmt.Sprintf("---\nid: %d\ntitle: A%d\npublished: 2025-01-0%dT10:00:00\nauthor: ivan\ntags:\n  - short\n%s---\n", i, i, i, tags.String())
	}
	for name, data := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	root := filepath.Join(dir, "public")
	res, err := build.New(build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, OutDir: root,
		Now: func() time.Time { return time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC) }}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSite(res.Manifest, root, listen)
	if err != nil {
		t.Fatal(err)
	}
	return s, serveReference(t, root)
}

// longOutcome is what a target answered to the requests of one value.
type longOutcome string

const (
	longExact    longOutcome = "exact"
	longNotFound longOutcome = "404"           // the JSON 404
	longTooLong  longOutcome = "414 (its own)" // the platform's own answer to a request line too long
)

// longSupport is what each target answers to the canonical links of each
// value of longValues; TestLongValues holds every target to it, on its
// platform, and writes it as the table of docs/deploying.md.
var longSupport = map[string][]longOutcome{
	"nginx-njs":  {longExact, longExact, longExact, longTooLong},
	"cloudflare": {longExact, longExact, longExact, longExact},
	"netlify":    {longExact, longExact, longExact, longExact},
	"cloudfront": {longNotFound, longNotFound, longNotFound, longNotFound}, // the counts do not fit in 10 KB
	"nginx":      {longExact, longNotFound, longNotFound, longTooLong},
	"caddy":      {longExact, longNotFound, longNotFound, longNotFound},
	"apache":     {longExact, longNotFound, longNotFound, longTooLong},
}

// starters are the platforms of the targets, for tests beyond the shared
// table.
func starters(t *testing.T) map[string]func(t *testing.T) startFunc {
	return map[string]func(t *testing.T) startFunc{
		"nginx-njs": startNginxNJS, "cloudflare": startWorkerd, "netlify": startNetlifyEdge, "cloudfront": startCloudFront,
		"nginx": startNginx, "caddy": startCaddy, "apache": startApache,
	}
}

// TestLongValues runs every target on its platform over a build whose
// filter values are about and past each platform's limits, and checks
// what each answers to their canonical links (the probe's case: Caddy
// refused the whole Caddyfile for a value of 3,000 characters, and the
// plain targets' 404 for long values was not in the README): feedgen
// serve's page, the JSON 404, or the platform's own 414 for a request
// line longer than it reads. It writes testdata/long.md, docs/deploying.md's
// table, with -update.
func TestLongValues(t *testing.T) {
	var names []string
	for _, tg := range Targets() {
		names = append(names, tg.Name)
	}
	got := map[string][]longOutcome{}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			start := starters(t)[name](t)
			s, ref := longSite(t, "127.0.0.1:"+freePort(t))
			base := startTarget(t, name, s, start)
			for _, v := range longValues {
				outcome := longOutcome("")
				for _, q := range []string{"tag=" + url.QueryEscape(v.value), "limit=20&offset=1&tag=" + url.QueryEscape(v.value)} {
					r := request{method: "GET", target: "/articles/?" + q}
					want, have := ask(t, ref, r), ask(t, base, r)
					var o longOutcome
					switch {
					case want.diff(have) == "":
						o = longExact
					case have.status == http.StatusNotFound && have.body == listing.NotFoundBody && have.header["Content-Type"] == listing.ContentType:
						o = longNotFound
					case have.status == http.StatusRequestURITooLong:
						o = longTooLong
					default:
						t.Errorf("%s, %s: %s", v.name, q[:min(len(q), 40)], want.diff(have))
					}
					if outcome == "" || o != longExact {
						outcome = o
					}
				}
				got[name] = append(got[name], outcome)
			}
			if want := longSupport[name]; !slices.Equal(got[name], want) {
				t.Errorf("answers %v, want %v (longSupport)", got[name], want)
			}
		})
	}
	var b strings.Builder
	b.WriteString("| filter value |")
	for _, n := range names {
		b.WriteString(" `" + n + "` |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---|", len(names)) + "\n")
	for i, v := range longValues {
		b.WriteString("| " + v.name + " |")
		for _, n := range names {
			b.WriteString(" " + string(longSupport[n][i]) + " |")
		}
		b.WriteString("\n")
	}
	golden := filepath.Join("testdata", "long.md")
	if *update {
		if err := os.WriteFile(golden, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	if want, err := os.ReadFile(golden); err != nil || string(want) != b.String() {
		t.Errorf("testdata/long.md is not the table of longSupport (go test ./internal/rules -run TestLongValues -update):\n%s", b.String())
	}
}
