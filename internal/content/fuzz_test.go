package content

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
)

// FuzzParse feeds arbitrary files to the front matter parser: it must
// never panic, and must give either an article or at least one error, each
// naming the file and a line inside it.
func FuzzParse(f *testing.F) {
	addSeeds(f)
	cfg := testCfg(f)
	fp := &fileParser{cfg: cfg, md: newMarkdownParser()}
	const p = "content/news/politics/x.md"
	f.Fuzz(func(t *testing.T, data []byte) {
		r := fp.parse(p, "news", "politics", "x", data)
		// YAML, like most editors, ends a line at CR LF, LF or a lone CR.
		lines := strings.Count(strings.ReplaceAll(string(data), "\r\n", "\n"), "\n") + strings.Count(string(data), "\r") + 1
		switch {
		case r.article == nil && len(r.errs) == 0:
			t.Fatal("no article and no error")
		case r.article != nil && len(r.errs) > 0:
			t.Fatalf("an article and errors: %v", r.errs)
		}
		for _, d := range append(r.errs, r.warnings...) {
			if d.Path != p {
				t.Errorf("diagnostic for %q, want %q", d.Path, p)
			}
			if d.Line < 0 || d.Line > lines {
				t.Errorf("line %d outside the file's %d lines: %s", d.Line, lines, d)
			}
			if d.Msg == "" {
				t.Errorf("empty message")
			}
		}
		if a := r.article; a != nil {
			if a.ID <= 0 || strings.TrimSpace(a.Title) == "" || a.Published.IsZero() {
				t.Errorf("invalid article accepted: id %d, title %q, published %v", a.ID, a.Title, a.Published)
			}
			if a.Pageviews < 0 || a.Comments < 0 {
				t.Errorf("negative counters accepted: %d, %d", a.Pageviews, a.Comments)
			}
		}
	})
}

// FuzzSplit checks the front matter split of usual files against
// adrg/frontmatter's: the same front matter and body.
func FuzzSplit(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{"---\n---", "---\n---\n", "---\r\nid: 1\r\n---\r\nbody", "---\nid: 1\n ---\n---\n", "---\na: ---\n---\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		fm, body, ok := splitSimple(data)
		if !ok {
			return
		}
		var want []byte
		wantBody, err := frontmatter.MustParse(bytes.NewReader(data), &want, yamlFormat)
		if err != nil {
			t.Fatalf("split a file adrg/frontmatter rejects (%v)", err)
		}
		if !bytes.Equal(fm, want) || !bytes.Equal(body, wantBody) {
			t.Fatalf("got front matter %q body %q, want %q and %q", fm, body, want, wantBody)
		}
	})
}

// addSeeds adds the files of testdata/seeds to a fuzz test's corpus.
func addSeeds(f *testing.F) {
	f.Helper()
	seeds, err := filepath.Glob(filepath.Join("testdata", "seeds", "*.md"))
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seeds in testdata/seeds: %v", err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
}

// FuzzFirstParagraph checks that the announcement taken from the leading
// paragraph alone (leadingParagraph) is the one a parse of the whole body
// gives.
func FuzzFirstParagraph(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{
		"Text\n\nMore", "\n\n  \nText *a\nb* c\n\n# H", "Text [x][r]\n\n[r]: /u", "Text\n===\n", "Text\n- item\n",
		"Text\r\n\r\nMore", "Text\n    code\n\nMore", "Привет **мир**\n> quote\n", "Text `a\n\nb`",
		"# A heading that is long enough to pass the limit\n\nThen a paragraph [x] of text\n\n" + strings.Repeat("more ", 20) + "\n\n[x]: /u",
		"```\nfenced code, long enough to pass the limit of the test\n\nstill code\n```\n\nText",
		"<!-- a comment long enough to pass the limit of sixty-four bytes\n\n-->\n\nText",
	} {
		f.Add([]byte(s))
	}
	p := newMarkdownParser()
	f.Fuzz(func(t *testing.T, body []byte) {
		got, err := firstParagraphWithin(p, body, len(body)+1)
		if want := paragraphText(p, body); err != nil || got != want {
			t.Fatalf("from the leading paragraph %q, got %q (%v), want %q", leadingParagraph(body), got, err, want)
		}
		// Parsing no more than 64 bytes: the same paragraph, or an
		// error, never another paragraph.
		if got, err := firstParagraphWithin(p, body, 64); err == nil && got != paragraphText(p, body) {
			t.Fatalf("from the first 64 bytes, got %q, want %q", got, paragraphText(p, body))
		}
	})
}

// FuzzValidUTF8 checks validUTF8 against utf8.Valid.
func FuzzValidUTF8(f *testing.F) {
	addSeeds(f)
	for _, s := range []string{"", "привет, мир", "\xd0", "abcdefg\xd0\xbf", "\xc0\x80abcdefgh", "日本語 текст 😀 ok", "abcdefg\xd0\xd0\xbfxxxxxxx"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if got, want := validUTF8(data), utf8.Valid(data); got != want {
			t.Fatalf("validUTF8(%q) = %v, want %v", data, got, want)
		}
	})
}
