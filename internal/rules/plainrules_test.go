package rules

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// rxEval computes the lookups of ls for a raw query, as a platform does:
// each variable by the first case its source matches.
func rxEval(t *testing.T, ls []rxLookup, query string) map[string]string {
	t.Helper()
	vars := map[string]string{rxQuery: query}
	for _, l := range ls {
		var src strings.Builder
		for _, p := range l.source {
			if strings.HasPrefix(p, "$") {
				v, ok := vars[p[1:]]
				if !ok {
					t.Fatalf("lookup %s uses %s before it is set", l.name, p)
				}
				src.WriteString(v)
			} else {
				src.WriteString(p)
			}
		}
		vars[l.name] = l.def
		for _, c := range l.cases {
			re := rxCompiled[c.re]
			if re == nil {
				re = regexp.MustCompile(c.re)
				rxCompiled[c.re] = re
			}
			if m := re.FindStringSubmatchIndex(src.String()); m != nil {
				vars[l.name] = string(re.ExpandString(nil, c.out, src.String(), m))
				break
			}
		}
	}
	return vars
}

// rxCompiled holds the regular expressions rxEval compiled.
var rxCompiled = map[string]*regexp.Regexp{}

// rxQueries are queries beyond the shared table, each value in forms a
// client may write it.
var rxQueries = []string{
	"limit=50", "limit=%35%30", "limit=0050", "limit=5_0", "limit=5__0", "limit=_50", "limit=50_",
	"limit=%2B50", "limit=+50+", "limit=%0950%0A", "limit=%C2%A050", "limit=%E3%80%8050", "limit=%1F50",
	"limit=-50", "limit=-0", "limit=%2D5", "limit=0", "limit=000", "limit=0_0", "limit=101", "limit=100",
	"limit=1_0_0", "limit=99", "limit=200", "limit=1000000", "limit=0101", "limit=7", "limit=", "limit",
	"limit=2%30", "limit=%D9%A2%D9%A0", "limit=%EF%BC%92%EF%BC%90", "limit=++", "limit=%2B", "limit=%2B-20",
	"limit=50&limit", "limit=50&limit=", "limit=abc&limit=50", "limit=50&limitx=20", "xlimit=50",
	"LIMIT=50", "%6Cimit=50", "%6cimit=50", "limit%3D50", "limit=50=50",
	"offset=0", "offset=00", "offset=0_0", "offset=10", "offset=010", "offset=1_0", "offset=1_0_0_0",
	"offset=1_0_0_0_0", "offset=1__0", "offset=+10", "offset=%2B10", "offset=%2010%20", "offset=%31%30",
	"offset=-10", "offset=-0", "offset=abc", "offset=", "offset", "offset=65", "offset=66", "offset=1e1",
	"offset=%D9%A1", "offset=999999999999999999", "offset=9999999999999999999",
	"offset=10&offset=20", "offset=20&offset=abc", "limit=50&offset=50", "limit=50&offset=49",
	"tag=API", "tag=%41PI", "tag=%41%50%49", "tag=api", "tag=Go", "tag=go", "tag=%47o", "tag=%47%6f",
	"tag=M%26A", "tag=M%26a", "tag=M&A", "tag=St+Petersburg", "tag=St%20Petersburg",
	"tag=%d0%be+%d1%80%d0%b5%d0%b4%d0%b0%d0%ba%d1%86%d0%b8%d0%b8", "tag=о+редакции", "tag=%D0о+редакции",
	"tag=zzz", "tag=%7A%7A%7A", "tag=%zz", "tag=100%", "tag=%", "tag=%FF", "tag=%C3%A9", "tag=é",
	"tag=releases&tag=API", "tag=API&tag=", "tag=&tag=API", "t%61g=API", "tag", "tag=API&limit=7",
	"section=news", "section=news&category=politics", "category=politics&section=news",
	"category=politics&section=features", "category=politics", "category=zzz&section=news",
	"section=zzz&category=zzz", "section=news&tag=API", "author=ivan-petrov", "author=ivan%2Dpetrov",
	"author=nobody", "author=nobody&offset=1", "author=nobody&offset=0_0", "tag=zzz&limit=100",
	"tag=zzz&limit=7", "author=ivan-petrov&tag=API", "section=news&offset=20", "section=news&offset=19",
	"section=site-news&limit=50&offset=3", "utm=1&&&limit=20&&", "limit=20;offset=40", "limit=20%26offset=40",
	"offset=1000&limit=20", "offset=100000&limit=50", "offset=10000000000000000000000000000&limit=100",
	"offset=101&limit=100", "offset=100&limit=100", "offset=99&limit=100", "offset=120&limit=100",
	"offset=1" + strings.Repeat("0", 40) + "&limit=20", "offset=1" + strings.Repeat("0", 44) + "&limit=20",
	"tag=zzz&offset=5", "tag=zzz&offset=20", "tag=zzz&offset=21", "tag=M%26A&offset=7", "tag=M%26a&offset=7",
	"tag=%4D%26A&offset=7", "tag=St+Petersburg&offset=3", "tag=%D0%B1%D0%B0%D0%BD%D0%BA%D0%B8&offset=5",
	"tag=%D0%B1%D0%B0%D0%BD%D0%BA%D0%B8%D0%B8&offset=5", "tag=%d0%b1&offset=5", "tag=%C0%80&offset=5",
	"author=nobody&offset=1000000", "category=politics&section=news&offset=5&limit=50",
	"offset=20&section=news&category=zzz", "section=news&offset=0020", "tag=a%7Cb&offset=30", "tag=a!b&offset=30",
}

// TestPlainLookups checks the lookups of the plain targets against
// feedgen serve: every page they choose is the one feedgen serve answers,
// the empty page too; what they cannot read is the JSON 404; and every
// canonical request has its page.
func TestPlainLookups(t *testing.T) {
	s, err := NewSite(sampleMan, sampleRoot, "80")
	if err != nil {
		t.Fatal(err)
	}
	ls := append(append(rxLookups(s), rxPastLookups(s)...), rxBodyLookup(s))
	queries := append([]string(nil), rxQueries...)
	for _, r := range requests {
		if u, err := url.Parse(r.target); err == nil && r.method == "GET" && u.Path == "/articles/" {
			queries = append(queries, u.RawQuery)
		}
	}
	exact := 0
	for _, q := range queries {
		want := ask(t, refBase, request{method: "GET", target: "/articles/?" + q})
		vars := rxEval(t, ls, q)
		var body string
		switch page := vars["page"]; page {
		case "":
		case rxUnknown:
			body = rxEmptyPage(s)
		case rxPast:
			body = vars["body"]
		default:
			data, err := os.ReadFile(filepath.Join(sampleRoot, filepath.FromSlash(page)))
			if err != nil {
				body = vars["body"]
			} else {
				body = string(data)
			}
		}
		if body == "" {
			if want.status == 200 {
				t.Logf("?%s: the JSON 404, feedgen serve answers 200", q)
			}
			continue
		}
		if want.status != 200 || want.body != body {
			t.Errorf("?%s: %.100q is not feedgen serve's answer (%d %.100q)", q, body, want.status, want.body)
			continue
		}
		exact++
	}
	for _, r := range requests {
		u, _ := url.Parse(r.target)
		if r.class == classCanonical || r.class == classFilters && ask(t, refBase, r).status == 200 {
			if page := rxEval(t, ls, u.RawQuery)["page"]; page == "" || page == rxUnknown || page == rxPast {
				t.Errorf("%s (%s): no page", r.target, r.class)
			}
		}
	}
	t.Logf("%d of %d queries answered exactly", exact, len(queries))
}

// TestPlainPastEnd checks the previous links the past lookups compute
// against feedgen serve's, for offsets of many lengths, digits and zeros.
func TestPlainPastEnd(t *testing.T) {
	s, err := NewSite(sampleMan, sampleRoot, "80")
	if err != nil {
		t.Fatal(err)
	}
	ls := append(append(rxLookups(s), rxPastLookups(s)...), rxBodyLookup(s))
	rnd := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 300; i++ {
		var o strings.Builder
		o.WriteByte(byte('1' + rnd.IntN(9)))
		for j := rnd.IntN(30); j > 0; j-- {
			if rnd.IntN(3) == 0 {
				o.WriteByte('0')
			} else {
				o.WriteByte(byte('0' + rnd.IntN(10)))
			}
		}
		l := s.Paging.Limits[rnd.IntN(len(s.Paging.Limits))]
		q := fmt.Sprintf("limit=%d&offset=%s&tag=zzz", l, o.String())
		want := ask(t, refBase, request{method: "GET", target: "/articles/?" + q})
		if got := rxEval(t, ls, q)["body"]; got != want.body {
			t.Errorf("?%s: %q, want %q", q, got, want.body)
		}
	}
}

// checkPlain asks the plain target at base the queries of rxQueries and
// of past the end, and a few with HEAD: each answer must be feedgen
// serve's or the JSON 404. headLength false leaves out the Content-Length
// of the answers to HEAD that are not files (Apache sends none).
func checkPlain(t *testing.T, base string, headLength bool) {
	t.Helper()
	queries := append([]string(nil), rxQueries...)
	for _, o := range []string{"66", "67", "86", "100", "1000", "1020", "100000", "123456789012345678901234567890"} {
		for _, l := range []string{"20", "50", "100"} {
			queries = append(queries, "limit="+l+"&offset="+o, "limit="+l+"&offset="+o+"&tag=zzz", "limit="+l+"&offset="+o+"&author=ivan-petrov")
		}
	}
	var rs []request
	for _, q := range queries {
		rs = append(rs, request{method: "GET", target: "/articles/?" + q})
	}
	for _, q := range []string{"limit=20&offset=66", "tag=zzz", "tag=zzz&offset=30", "limit=7", "offset=%D9%A1"} {
		rs = append(rs, request{method: "HEAD", target: "/articles/?" + q})
	}
	exact := 0
	for _, r := range rs {
		q := r.method + " " + r.target
		want, got := ask(t, refBase, r), ask(t, base, r)
		if r.method == "HEAD" && !headLength && got.header["Content-Length"] == "" {
			delete(want.header, "Content-Length")
		}
		switch {
		case want.diff(got) == "":
			exact++
		case got.status != 404 || r.method == "GET" && got.body != listing.NotFoundBody || got.header["Content-Type"] != listing.ContentType:
			t.Errorf("%s: %s", q, want.diff(got))
		}
	}
	t.Logf("%d of %d requests answered exactly, the others with the JSON 404", exact, len(rs))
}

// TestPlainAligned checks the lookups on a build of the sample with
// offsets: aligned, limits [10, 25] and the category and tag filters alone
// (a section is then no collection of its own), against feedgen serve
// over that build.
func TestPlainAligned(t *testing.T) {
	root, m := buildSample(t, map[string]string{
		"offsets: all": "offsets: aligned", "filters: [section, category, tag, author]": "filters: [category, tag]",
		"default_limit: 20": "default_limit: 10", "max_limit: 100": "max_limit: 25", "limits: [20, 50, 100]": "limits: [10, 25]",
	})
	ref := serveReference(t, root)
	s, err := NewSite(m, root, "80")
	if err != nil {
		t.Fatal(err)
	}
	ls := append(append(rxLookups(s), rxPastLookups(s)...), rxBodyLookup(s))
	var queries []string
	for _, o := range []string{"", "0", "5", "10", "15", "20", "25", "50", "60", "65", "66", "70", "75", "100", "1000", "12345678901234567890"} {
		for _, l := range []string{"", "10", "25", "20", "30"} {
			for _, f := range []string{"", "tag=releases", "tag=zzz", "category=politics&section=news", "category=politics", "section=news", "category=politics&section=sport"} {
				q := strings.Join(slices.DeleteFunc([]string{"limit=" + l, "offset=" + o, f}, func(p string) bool { return strings.HasSuffix(p, "=") || p == "" }), "&")
				queries = append(queries, q)
			}
		}
	}
	exact := 0
	for _, q := range queries {
		want := ask(t, ref, request{method: "GET", target: "/articles/?" + q})
		vars := rxEval(t, ls, q)
		var body string
		switch page := vars["page"]; page {
		case "":
		case rxUnknown:
			body = rxEmptyPage(s)
		case rxPast:
			body = vars["body"]
		default:
			if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(page))); err == nil {
				body = string(data)
			} else {
				body = vars["body"]
			}
		}
		switch {
		case body == "" && want.status == 200:
			t.Errorf("?%s: the JSON 404, feedgen serve answers %.100q", q, want.body)
		case body != "" && (want.status != 200 || want.body != body):
			t.Errorf("?%s: %.100q, feedgen serve answers %d %.100q", q, body, want.status, want.body)
		case body != "":
			exact++
		}
	}
	t.Logf("%d of %d queries answered with a page, as feedgen serve answers them", exact, len(queries))
}

// TestSpace checks rxSpace against listing.ParseInt: it matches the
// percent-encoding of a character (hex digits in either case) when int()
// strips the character around a number.
func TestSpace(t *testing.T) {
	re := regexp.MustCompile("^" + rxSpace + "$")
	for r := rune(0); r <= 0x10000; r++ {
		if unicode.IsDigit(r) || strings.ContainsRune("+-_", r) || !utf8.ValidRune(r) {
			continue
		}
		_, _, want := listing.ParseInt(string(r) + "1" + string(r))
		var b strings.Builder
		for _, c := range []byte(string(r)) {
			fmt.Fprintf(&b, "%%%02X", c)
		}
		for _, enc := range []string{b.String(), strings.ToLower(b.String())} {
			if got := re.MatchString(enc); got != want {
				t.Errorf("%U as %s: matched %v, want %v", r, enc, got, want)
			}
		}
	}
	if !re.MatchString("+") {
		t.Error("'+' is no space")
	}
}

// TestPlainLongValues checks the cases of values too long for a regular
// expression of their every form: a value is matched as links write it,
// or when even that is too long, it cannot be told (the JSON 404); no
// regular expression is longer than nginx reads.
func TestPlainLongValues(t *testing.T) {
	medium, long := strings.Repeat("я", 200), strings.Repeat("я", 1000)
	s := &Site{
		Paging: sampleMan.Pagination, Filters: []string{"tag"}, BaseURL: "https://api.example.com",
		Collections: []manifest.Collection{{Dir: "articles", Count: 2}},
	}
	for _, v := range []string{"short", medium, long} {
		p := []listing.Param{{Key: "tag", Value: v}}
		s.Collections = append(s.Collections, manifest.Collection{Dir: listing.CollectionDir(p), Params: p, Count: 1})
	}
	ls := rxLookups(s)
	for _, l := range ls {
		for _, c := range l.cases {
			if len(c.re) > 4000 {
				t.Errorf("lookup %s: a regular expression of %d bytes", l.name, len(c.re))
			}
		}
	}
	for _, tc := range []struct{ tag, seg string }{
		{"short", "/tag/short"},
		{"%73hort", "/tag/short"},
		{url.QueryEscape(medium), "/tag/" + listing.EncodeValue(medium)},
		{strings.ToLower(url.QueryEscape(medium)), "/tag/" + rxUnsure}, // may be medium
		{url.QueryEscape(long), "/tag/" + rxUnsure},
		{strings.Repeat("z", 999), "/tag/" + rxUnknown},
		{strings.Repeat("z", 1000), "/tag/" + rxUnsure}, // may be long, as far as a regular expression tells
		{"zzz", "/tag/" + rxUnknown},
		{"%7a%7a%7a", "/tag/" + rxUnsure}, // may be medium, as far as a regular expression tells
	} {
		if got := rxEval(t, ls, "tag="+tc.tag)["seg_tag"]; got != tc.seg {
			t.Errorf("tag=%.40s: %q, want %q", tc.tag, got, tc.seg)
		}
	}
}

// buildSample builds the sample site with its config.yaml edited (each
// key of edits replaced by its value, once), and returns the build's
// folder and manifest.
func buildSample(t *testing.T, edits map[string]string) (string, *manifest.Manifest) {
	t.Helper()
	files := fstest.MapFS{}
	err := fs.WalkDir(feedgen.Sample(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := fs.ReadFile(feedgen.Sample(), p)
		files[p] = &fstest.MapFile{Data: data}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	conf := string(files["config.yaml"].Data)
	for old, new := range edits {
		if !strings.Contains(conf, old) {
			t.Fatalf("the sample's config.yaml has no %q", old)
		}
		conf = strings.Replace(conf, old, new, 1)
	}
	files["config.yaml"] = &fstest.MapFile{Data: []byte(conf)}
	root := filepath.Join(t.TempDir(), "public")
	now := func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	res, err := build.New(build.Options{FS: files, ConfigName: "config.yaml", OutDir: root, Now: now, Generator: "feedgen test"}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return root, res.Manifest
}
