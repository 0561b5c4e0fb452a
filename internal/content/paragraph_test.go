package content

import (
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/heaptest"
)

// TestHugeFirstParagraph loads an article whose body is one paragraph of
// 30 MB with inline markup (the probe's case: 25 MB took 1.46 GB in the
// markdown parser, 200 MB 7.5 GB): it is refused with its size and line,
// without parsing it; the heap grows by about the file's bytes, not
// sixty times them. A long body whose first paragraph is short is parsed
// up to it, and gives the paragraph a whole parse gives.
func TestHugeFirstParagraph(t *testing.T) {
	const name, p = "news/politics/a.md", "content/news/politics/a.md"
	head := "---\nid: 1\ntitle: Hello\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n"
	huge := head + strings.Repeat("word *emphasis* [link](/u) `code` ", 30<<20/36) + "\n"
	var err error
	grew := heaptest.Growth(func() { _, err = load(t, map[string]string{name: huge}) })
	var dl diag.List
	want := p + ":7: the first paragraph is 29.7 MB, more than the 8.2 kB read for an announcement: write announcement: in the front matter, or start the body with a shorter paragraph"
	if !asDiag(err, &dl) || len(dl) != 1 || dl[0].String() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if limit := uint64(3 * len(huge)); grew > limit {
		t.Errorf("the heap grew by %d bytes for a file of %d", grew, len(huge))
	}
	t.Logf("a file of %d bytes: the heap grew by at most %d", len(huge), grew)

	long := head + "A *short* first paragraph.\n\n" + strings.Repeat("More text of the body.\n\n", 2<<20/24)
	site, err := load(t, map[string]string{name: long})
	if err != nil {
		t.Fatal(err)
	}
	if got := site.Articles[0].Announcement; got != "A short first paragraph." {
		t.Errorf("announcement %q", got)
	}
	// With an announcement in the front matter, the body is not read.
	ann := strings.Replace(huge, "author: ivan\n", "author: ivan\nannouncement: Given.\n", 1)
	if site, err := load(t, map[string]string{name: ann}); err != nil || site.Articles[0].Announcement != "Given." {
		t.Errorf("with an announcement: %v", err)
	}
}

func asDiag(err error, dl *diag.List) bool {
	l, ok := err.(diag.List)
	*dl = l
	return ok
}

// TestLaterReference checks a long body whose first paragraph uses a
// link reference: refused when the reference is defined after the part
// parsed, taken when it is not (a "]:" elsewhere, another label).
func TestLaterReference(t *testing.T) {
	p := newMarkdownParser()
	filler := strings.Repeat("More text.\n\n", 10)
	for _, tt := range []struct {
		name, body string
		refused    bool
	}{
		{"defined after", "See [the  Docs] now.\n\n" + filler + "[the docs]: /u\n", true},
		{"another label", "See [the docs] now.\n\n" + filler + "[other]: /u\n", false},
		{"in code", "See now.\n\n" + filler + "    a[i]: b\n", false},
		{"before the cut", "[x]: /u\n\nSee [x] now.\n\n" + filler, false},
	} {
		got, err := firstParagraphWithin(p, []byte(tt.body), 64)
		if refused := err != nil; refused != tt.refused {
			t.Errorf("%s: got %q, %v; want refused %v", tt.name, got, err, tt.refused)
		}
		if err == nil && got != paragraphText(p, []byte(tt.body)) {
			t.Errorf("%s: got %q, want %q", tt.name, got, paragraphText(p, []byte(tt.body)))
		}
	}
}

// TestPathologicalBodies loads articles whose bodies make the markdown
// parser take time with the square of their length (the probe's case: a
// body of 1 MB of ">" kept a build busy for minutes): each loads, or is
// refused, in well under a second.
func TestPathologicalBodies(t *testing.T) {
	head := "---\nid: 1\ntitle: Hello\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n"
	for _, unit := range []string{">", "1. ", "> - ", "[a](", "[", "*a"} {
		for _, n := range []int{maxParsed - 64, 1 << 20} {
			body := strings.Repeat(unit, n/len(unit))
			start := time.Now()
			_, err := load(t, map[string]string{"news/politics/a.md": head + body + "\n"})
			took := time.Since(start)
			t.Logf("%q × %d: %v (%v)", unit, n/len(unit), took.Round(time.Millisecond), err != nil)
			if took > 10*time.Second { // minutes, or hours, before the bound
				t.Errorf("%q × %d: %v", unit, n/len(unit), took)
			}
		}
	}
}
