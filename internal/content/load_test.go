package content

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

const testConfig = `site_url: https://www.example.com
base_url: https://api.example.com
media_url: https://media.example.com
timezone: Europe/Moscow
default_avatar: /static/avatar.png
sections:
  news:
    politics: Политика
authors:
  ivan: {name: Иван Петров, url: /authors/ivan/}
`

func testCfg(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Parse("config.yaml", "", []byte(testConfig))
	if err != nil {
		t.Fatalf("config: %v", err)
	}
	return cfg
}

var now = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)

func load(t testing.TB, files map[string]string) (*Site, error) {
	t.Helper()
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return NewLoader(testCfg(t)).Load(context.Background(), fsys, Options{Now: now, Root: "content"})
}

const good = "---\nid: 1\ntitle: Hello\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\nBody.\n"

func TestLoadErrors(t *testing.T) {
	const p = "content/news/politics/a.md"
	tests := []struct {
		name string
		file string
		want string
	}{
		{"malformed yaml", "---\nid: 1\ntitle: [unclosed\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + ":3: invalid YAML: did not find expected ',' or ']'"},
		{"colon in the title", "---\nid: 1\ntitle: Election: night\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:3: the value of title has a colon followed by a space; quote it: title: "Election: night"`},
		{"no front matter", "Just a body.\n", p + ":1: no front matter: start the file with a line ---, the keys id, title and published, then a line ---"},
		{"no closing", "---\nid: 1\ntitle: x\n", p + ":1: front matter is not closed: add a line --- after its last key"},
		{"empty file", "", p + ": file is empty: start it with front matter between --- lines (id, title, published)"},
		{"blank file", "\n \n", p + ": file is empty: start it with front matter between --- lines (id, title, published)"},
		{"missing id", "---\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + ":1: missing required key id: add e.g. id: 123 (a positive number, unique across the site)"},
		{"missing title", "---\nid: 1\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + ":1: missing required key title: add e.g. title: Your headline"},
		{"missing published", "---\nid: 1\ntitle: x\nauthor: ivan\n---\n",
			p + ":1: missing required key published: add e.g. published: 2025-01-31T09:30:00"},
		{"id zero", "---\nid: 0\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:2: id: want a positive whole number, got "0"`},
		{"id negative", "---\nid: -4\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:2: id: want a positive whole number, got "-4"`},
		{"id text", "---\nid: abc\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:2: id: want a positive whole number, got "abc"`},
		{"id float", "---\nid: 1.5\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:2: id: want a positive whole number, got "1.5"`},
		{"empty title", "---\nid: 1\ntitle: \"  \"\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + ":3: title is empty: give the article a headline"},
		{"bad date", "---\nid: 1\ntitle: x\npublished: 2025-13-02T10:00:00\nauthor: ivan\n---\n",
			p + `:4: published: "2025-13-02T10:00:00": month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2025-02-13T10:00:00?`},
		{"quoted as written", "---\nid: 1\ntitle: x\npublished: \" 2025-01-02 25:00\"\nauthor: ivan\n---\n",
			p + `:4: published: " 2025-01-02 25:00": hour 25 is out of range: hours are 00 to 23 (midnight is 00:00:00 of the next day)`},
		{"date only, no such day", "---\nid: 1\ntitle: x\npublished: 2025-02-30\nauthor: ivan\n---\n",
			p + `:4: published: "2025-02-30": day 30 is out of range: the days of February 2025 are 01 to 28`},
		{"unknown author", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: nobody\n---\n",
			p + `:5: unknown author "nobody": add it to authors in config.yaml, or use author_name and author_url`},
		{"no author", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\n---\n",
			p + ":1: no author: set author (a key of authors in config.yaml) or both author_name and author_url"},
		{"half inline author", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor_name: X\n---\n",
			p + ":1: an inline author needs both author_name and author_url"},
		{"negative pageviews", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\npageviews: -3\n---\n",
			p + ":6: pageviews: -3 is negative: counters are 0 or more"},
		{"negative comments", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\ncomments_count: -1\n---\n",
			p + ":6: comments_count: -1 is negative: counters are 0 or more"},
		{"tags not a list", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\ntags: a, b\n---\n",
			p + `:6: tags: want a list of texts like [a, b], got "a, b"`},
		{"tags not strings", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\ntags:\n  - a\n  - {b: c}\n---\n",
			p + ":8: tags: want a list of texts, item is a mapping"},
		{"invalid utf-8", "---\nid: 1\ntitle: \xff\xfe\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + ":3: invalid UTF-8: save the file with UTF-8 encoding"},
		{"duplicate key", "---\nid: 1\ntitle: x\nid: 2\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n",
			p + `:4: front matter: key "id" given twice (first at line 2): keep one`},
		{"front matter not a mapping", "---\n- a\n- b\n---\n",
			p + ":2: front matter: want a mapping of key: value lines, got a list"},
		{"relative image", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\nimg_big: images/x.jpg\n---\n",
			p + `:6: img_big: "images/x.jpg" is neither a path starting with / nor an http(s) URL`},
		{"bad draft", "---\nid: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\ndraft: maybe\n---\n",
			p + `:6: draft: want true or false, got "maybe"`},
		{"leading blank lines keep numbering", "\n\n---\nid: 1\ntitle: x\npublished: nope\nauthor: ivan\n---\n",
			p + `:6: published: "nope" is not a date and time: write YYYY-MM-DDTHH:MM:SS, e.g. 2025-01-31T09:30:00, or a date alone, 2025-01-31 (midnight)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"news/politics/a.md": tt.file})
			if got := errString(err); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestPublishedOutOfRange checks that a published time of the right
// shape with a number out of range says which number, its range, and
// (for a month that is a day) the date meant; other shapes get the
// general message.
func TestPublishedOutOfRange(t *testing.T) {
	const general = "is not a date and time: write YYYY-MM-DDTHH:MM:SS, e.g. 2025-01-31T09:30:00, or a date alone, 2025-01-31 (midnight)"
	tests := []struct{ published, want string }{
		{"2026-13-01T10:00:00", "month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2026-01-13T10:00:00?"},
		{"2026-13-01T10:00", "month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2026-01-13T10:00:00?"},
		{"2026-13-01T10:00+02:00", "month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2026-01-13T10:00:00+02:00?"},
		{"2026-13-01T10:00:00 tomorrow", "month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD)"},
		{"2026-13-20T10:00:00", "month 13 is out of range: months are 01 to 12 (YYYY-MM-DD)"},
		{"2026-31-12", "month 31 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2026-12-31?"},
		{"2026-31-11", "month 31 is out of range: months are 01 to 12 (YYYY-MM-DD)"}, // no November 31st
		{"2026-00-10T10:00:00", "month 00 is out of range: months are 01 to 12 (YYYY-MM-DD)"},
		{"2026-04-31T10:00:00", "day 31 is out of range: the days of April 2026 are 01 to 30"},
		{"2026-04-00", "day 00 is out of range: the days of April 2026 are 01 to 30"},
		{"2025-02-29T10:00:00", "day 29 is out of range: the days of February 2025 are 01 to 28"},
		{"2100-02-29T10:00:00", "day 29 is out of range: the days of February 2100 are 01 to 28"},
		{"2026-01-31T24:00:00", "hour 24 is out of range: hours are 00 to 23 (midnight is 00:00:00 of the next day)"},
		{"2026-01-31 10:60:00", "minute 60 is out of range: minutes are 00 to 59"},
		{"2026-01-31T10:59:60", "second 60 is out of range: seconds are 00 to 59"},
		{"2026-01-31T10:59:99+03:00", "second 99 is out of range: seconds are 00 to 59"},
		{"2026-01-31T10:30", "no seconds: write HH:MM:SS, e.g. 10:30:00"},
		{"2026-01-10T10:00Z", "no seconds: write HH:MM:SS, e.g. 10:00:00Z"},
		{"2026-01-10T10:00+02:00", "no seconds: write HH:MM:SS, e.g. 10:00:00+02:00"},
		{"2026-01-10T10:00-05:30", "no seconds: write HH:MM:SS, e.g. 10:00:00-05:30"},
		{"2026-01-10T10:00+2", general},
		{"31.01.2026", general},
		{"2026-1-31", general},
		{"2026-01-31T10:00:00 tomorrow", general},
	}
	const p = "content/news/politics/a.md"
	for _, tt := range tests {
		t.Run(tt.published, func(t *testing.T) {
			_, err := load(t, map[string]string{"news/politics/a.md": "---\nid: 1\ntitle: x\nauthor: ivan\npublished: " + tt.published + "\n---\n"})
			sep := ": "
			if tt.want == general {
				sep = " "
			}
			if got, want := errString(err), fmt.Sprintf("%s:5: published: %q%s%s", p, tt.published, sep, tt.want); got != want {
				t.Errorf("got  %s\nwant %s", got, want)
			}
		})
	}
	// Leap years: February 29th is a day of 2024 and 2000.
	for _, d := range []string{"2024-02-29T10:00:00", "2000-02-29"} {
		if _, err := load(t, map[string]string{"news/politics/a.md": "---\nid: 1\ntitle: x\nauthor: ivan\npublished: " + d + "\n---\n"}); err != nil {
			t.Errorf("%s: %v", d, err)
		}
	}
}

// TestForeignKeys checks the front matter keys of Hugo and other
// generators that have an equivalent here: each warning says what to
// write; a date: without published: is the error of the missing key, at
// the date: line, saying to rename it, and only that (one message a
// line); a second such key gets its warning.
func TestForeignKeys(t *testing.T) {
	const p = "content/news/politics/a.md"
	base := "---\nid: 1\ntitle: x\nauthor: ivan\n"
	tests := []struct{ front, warning, err string }{
		{"published: 2025-01-02T10:00:00\ndate: 2025-01-02\n", `:6: unknown front matter key "date" is ignored: write published: (the publication time, YYYY-MM-DDTHH:MM:SS in the site's timezone)`, ""},
		{"date: 2025-01-02\n", "", `:5: missing required key published: rename date: to published: (feedgen's name for the publication time)`},
		{"publishDate: 2025-01-02\n", "", `:5: missing required key published: rename publishDate: to published: (feedgen's name for the publication time)`},
		{"published_at: 2025-01-02\n", "", `:5: missing required key published: rename published_at: to published: (feedgen's name for the publication time)`},
		{"date: 2025-01-02\nlastmod: 2025-01-03\npubdate: 2025-01-02\n", `:6: unknown front matter key "lastmod" is ignored` + "\n" + p + `:7: unknown front matter key "pubdate" is ignored: write published: (the publication time, YYYY-MM-DDTHH:MM:SS in the site's timezone)`,
			`:5: missing required key published: rename date: to published: (feedgen's name for the publication time)`},
		{"published: 2025-01-02\ndescription: Lead\n", `:6: unknown front matter key "description" is ignored: write announcement: (the text under the title in the listing; without it, the body's first paragraph)`, ""},
		{"published: 2025-01-02\nSummary: Lead\n", `:6: unknown front matter key "Summary" is ignored: write announcement: (the text under the title in the listing; without it, the body's first paragraph)`, ""},
		{"published: 2025-01-02\nslug: other\n", `:6: unknown front matter key "slug" is ignored: an article's slug is its file name: rename the file to SLUG.md`, ""},
		{"published: 2025-01-02\ncategories: [politics]\n", `:6: unknown front matter key "categories" is ignored: an article's category is its folder: move the file to content/SECTION/CATEGORY/, with CATEGORY one of sections in config.yaml`, ""},
		{"published: 2025-01-02\nauthors: [ivan]\n", `:6: unknown front matter key "authors" is ignored: write author: KEY (one key of authors in config.yaml), or author_name: and author_url:`, ""},
		{"published: 2025-01-02\nimages: [/a.jpg]\n", `:6: unknown front matter key "images" is ignored: write img_big: (one URL; and img_small: for the small picture)`, ""},
		{"published: 2025-01-02\nlastmod: 2025-01-03\n", `:6: unknown front matter key "lastmod" is ignored`, ""},
		{"published: 2025-01-02\ntag: [a]\n", `:6: unknown front matter key "tag" is ignored: did you mean "tags"?`, ""},
	}
	for _, tt := range tests {
		t.Run(tt.front, func(t *testing.T) {
			fp := &fileParser{cfg: testCfg(t), md: newMarkdownParser()}
			r := fp.parse(p, "news", "politics", "a", []byte(base+tt.front+"---\n"))
			r.warnings.Sort()
			want := "<nil>"
			if tt.warning != "" {
				want = p + tt.warning
			}
			if got := errString(r.warnings.Err()); got != want {
				t.Errorf("warning:\ngot  %s\nwant %s", got, want)
			}
			want = "<nil>"
			if tt.err != "" {
				want = p + tt.err
			}
			if got := errString(r.errs.Err()); got != want {
				t.Errorf("error:\ngot  %s\nwant %s", got, want)
			}
		})
	}
}

// TestCasedKeys checks that a key of feedgen's written in another case,
// as Hugo takes it (Draft:, Tags:), is an error saying to write it in
// lowercase: ignored, the draft would be published, the tags dropped.
// A required key so written gets that error only, not the missing key's.
func TestCasedKeys(t *testing.T) {
	const p = "content/news/politics/a.md"
	const base = "---\nid: 1\nauthor: ivan\npublished: 2025-01-02T10:00:00\n"
	tests := []struct{ front, err string }{
		{"title: x\nDraft: true\n", `:6: front matter key "Draft" is draft in another case: write draft: (keys are lowercase; Hugo reads them in any case, feedgen does not)`},
		{"title: x\nTAGS: [a]\n", `:6: front matter key "TAGS" is tags in another case: write tags: (keys are lowercase; Hugo reads them in any case, feedgen does not)`},
		{"Title: x\n", `:5: front matter key "Title" is title in another case: write title: (keys are lowercase; Hugo reads them in any case, feedgen does not)`},
		{"title: x\ndraft: false\nDraft: true\n", `:7: front matter key "Draft" is draft in another case: write draft: (keys are lowercase; Hugo reads them in any case, feedgen does not)`},
	}
	for _, tt := range tests {
		t.Run(tt.front, func(t *testing.T) {
			fp := &fileParser{cfg: testCfg(t), md: newMarkdownParser()}
			r := fp.parse(p, "news", "politics", "a", []byte(base+tt.front+"---\n"))
			if got, want := errString(r.errs.Err()), p+tt.err; got != want {
				t.Errorf("error:\ngot  %s\nwant %s", got, want)
			}
			if r.article != nil || len(r.warnings) > 0 {
				t.Errorf("an article (%v) or warnings: %v", r.article != nil, r.warnings)
			}
		})
	}
}

func errString(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func TestLoadErrorsAcrossFiles(t *testing.T) {
	for _, slim := range []bool{false, true} {
		t.Run(fmt.Sprintf("slim=%v", slim), func(t *testing.T) { testLoadErrorsAcrossFiles(t, slim) })
	}
}

// testLoadErrorsAcrossFiles is TestLoadErrorsAcrossFiles, with every
// article slimmed as soon as it is parsed when slim is set (a build that
// bounds its memory): the checks across articles say the same.
func testLoadErrorsAcrossFiles(t *testing.T, slim bool) {
	dup := "---\nid: 7\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n"
	files := map[string]string{
		"news/politics/a.md":  dup,
		"news/politics/b.md":  dup,
		"news/politics/A2.md": strings.Replace(good, "id: 1", "id: 8", 1),
		"news/politics/a2.md": strings.Replace(good, "id: 1", "id: 9", 1),
		"news/sport/c.md":     good,
		"sport/x/d.md":        good,
		"news/e.md":           good,
		"news/politics/f.md":  "no front matter",
	}
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	opt := Options{Now: now, Root: "content"}
	var mu sync.Mutex
	var parsed []string
	if slim {
		opt.Parsed = func(a *Article) {
			mu.Lock()
			parsed = append(parsed, a.Path)
			mu.Unlock()
			a.Slim(0)
		}
	}
	_, err := NewLoader(testCfg(t)).Load(context.Background(), fsys, opt)
	if want := []string{"content/news/politics/A2.md", "content/news/politics/a.md", "content/news/politics/a2.md", "content/news/politics/b.md"}; slim && !slices.Equal(sorted(parsed), want) {
		t.Errorf("Parsed got %v, want %v", parsed, want)
	}
	want := []string{
		`content/news/e.md: article outside a category folder: put it at content/<section>/<section_slug>/<slug>.md`,
		`content/news/politics/a2.md: duplicate article URL https://www.example.com/news/politics/a2/: content/news/politics/A2.md has it too (URLs that differ only in letter case are one page on many hosts); rename one file`,
		`content/news/politics/b.md:2: duplicate id 7: content/news/politics/a.md:2 has it too; ids must be unique across the site`,
		`content/news/politics/f.md:1: no front matter: start the file with a line ---, the keys id, title and published, then a line ---`,
		`content/news/sport/c.md: category news/sport is not in config.yaml: add sport: <display name> under sections.news (config.yaml)`,
		`content/sport/x/d.md: section "sport" is not in config.yaml: add it under sections (config.yaml)`,
	}
	if got := errString(err); got != strings.Join(want, "\n") {
		t.Errorf("got\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
	var dl diag.List
	if !errors.As(err, &dl) || len(dl) != len(want) {
		t.Errorf("got %d diagnostics, want %d", len(dl), len(want))
	}
}

func TestLoadArticle(t *testing.T) {
	site, err := load(t, map[string]string{
		"news/politics/full.md": `---
id: 10
title: "«Выборы» & \"quotes\""
published: 2025-01-02T10:00:00+00:00
tags: [выборы, "a, b"]
pageviews: 1_000
comments_count: 3
author_name: Гость
author_url: https://guest.example.org/
img_big: /images/нонфикшн обложка.jpg
img_big_2x: https://cdn.example.com/x.jpg?v=2&size=big
img_small: /img/a%20b.jpg
---
# Heading

First **bold** [link](https://x.example) and ` + "`code`" + ` &amp; \*stars\*
continues here.

Second paragraph.
`,
		"news/politics/min.md":   good,
		"news/politics/draft.md": strings.Replace(good, "id: 1", "id: 2\ndraft: true", 1),
		"news/politics/later.md": strings.Replace(strings.Replace(good, "id: 1", "id: 3", 1), "2025-01-02", "2031-01-02", 1),
		"news/politics/_skip.md": "not parsed",
		"news/.hidden/x.md":      "not parsed",
		"news/politics/img.png":  "binary",
		"news/politics/typo.md":  strings.Replace(strings.Replace(good, "id: 1", "id: 4", 1), "author: ivan", "author: ivan\ntitel: x", 1),
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(site.Articles), 3; got != want {
		t.Fatalf("%d articles, want %d", got, want)
	}
	if site.Drafts != 1 || site.Scheduled != 1 {
		t.Errorf("drafts %d, scheduled %d; want 1 and 1", site.Drafts, site.Scheduled)
	}
	if got, want := errString(site.Warnings.Err()), `content/news/politics/typo.md:6: unknown front matter key "titel" is ignored: did you mean "title"?`; got != want {
		t.Errorf("warnings:\ngot  %s\nwant %s", got, want)
	}
	byID := map[int64]*Article{}
	for _, a := range site.Articles {
		byID[a.ID] = a
	}
	a := byID[10]
	checks := []struct{ name, got, want string }{
		{"title", a.Title, `«Выборы» & "quotes"`},
		{"url", a.URL, "https://www.example.com/news/politics/full/"},
		{"category", a.Category, "Политика"},
		{"category_url", a.CategoryURL, "https://www.example.com/news/politics/"},
		{"announcement", a.Announcement, "First bold link and code & *stars* continues here."},
		{"tags", strings.Join(a.Tags, "|"), "выборы|a, b"},
		{"img_big", a.ImgBig, "https://media.example.com/images/нонфикшн обложка.jpg"},
		{"img_big_2x", a.ImgBig2x, "https://cdn.example.com/x.jpg?v=2&size=big"},
		{"img_small", a.ImgSmall, "https://media.example.com/img/a%20b.jpg"},
		{"img_small_2x defaults to img_small", a.ImgSmall2x, "https://media.example.com/img/a%20b.jpg"},
		{"author_name", a.AuthorName, "Гость"},
		{"author_url", a.AuthorURL, "https://guest.example.org/"},
		{"published converted to Moscow", a.Published.Format(PublishedLayout), "2025-01-02T13:00:00"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if a.Pageviews != 1000 || a.Comments != 3 {
		t.Errorf("counters = %d, %d; want 1000, 3", a.Pageviews, a.Comments)
	}
	m := byID[1]
	for _, c := range []struct{ name, got, want string }{
		{"default avatar", m.ImgSmall, "https://media.example.com/static/avatar.png"},
		{"default avatar 2x", m.ImgSmall2x, "https://media.example.com/static/avatar.png"},
		{"img_big empty", m.ImgBig, ""},
		{"author from config", m.AuthorName, "Иван Петров"},
		{"author url prefixed with site_url", m.AuthorURL, "https://www.example.com/authors/ivan/"},
		{"announcement from body", m.Announcement, "Body."},
	} {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestFuture(t *testing.T) {
	fsys := fstest.MapFS{"news/politics/later.md": {Data: []byte(strings.Replace(good, "2025-01-02", "2031-01-02", 1))}}
	site, err := NewLoader(testCfg(t)).Load(context.Background(), fsys, Options{Now: now, Future: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(site.Articles) != 1 || site.Scheduled != 0 {
		t.Errorf("with Future: %d articles, %d scheduled; want 1, 0", len(site.Articles), site.Scheduled)
	}
}

func TestSymlinks(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cat, "real.md"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"loop-a.md": "loop-b.md", "loop-b.md": "loop-a.md", // file loop
		"up":        "..",      // folder loop
		"linked.md": "real.md", // a link to a file is followed
		"broken.md": "missing.md",
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(cat, name)); err != nil {
			t.Fatal(err)
		}
	}
	done := make(chan struct{})
	var err error
	go func() {
		defer close(done)
		_, err = NewLoader(testCfg(t)).Load(context.Background(), os.DirFS(dir), Options{Now: now, Root: "content"})
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("load did not finish: symlink loop followed")
	}
	want := strings.Join([]string{
		"content/news/politics/broken.md: broken symbolic link: no such file or directory",
		"content/news/politics/loop-a.md: symbolic link loop: the link points back to itself; remove or fix it",
		"content/news/politics/loop-b.md: symbolic link loop: the link points back to itself; remove or fix it",
		"content/news/politics/real.md:2: duplicate id 1: content/news/politics/linked.md:2 has it too; ids must be unique across the site",
		"content/news/politics/up: symbolic link to a folder: folders are not followed (they can loop); move the folder here or link its files one by one",
	}, "\n")
	if got := errString(err); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}

func TestLoaderCache(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	os.MkdirAll(cat, 0o755)
	for _, n := range []string{"a", "b", "c"} {
		os.WriteFile(filepath.Join(cat, n+".md"), []byte(strings.Replace(good, "id: 1", "id: 1"+string(rune('0'+n[0]-'a')), 1)), 0o644)
	}
	l := NewLoader(testCfg(t))
	l.Cache = true
	site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if site.Reparsed != 3 {
		t.Errorf("first load parsed %d files, want 3", site.Reparsed)
	}
	edited := strings.Replace(strings.Replace(good, "id: 1", "id: 11", 1), "Hello", "Hello again", 1)
	os.WriteFile(filepath.Join(cat, "b.md"), []byte(edited), 0o644)
	future := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(cat, "b.md"), future, future)
	site, err = l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	if site.Reparsed != 1 {
		t.Errorf("second load parsed %d files, want 1", site.Reparsed)
	}
	found := false
	for _, a := range site.Articles {
		found = found || a.Title == "Hello again"
	}
	if !found {
		t.Errorf("edited title not loaded")
	}
}

func TestLoaderChanged(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	os.MkdirAll(cat, 0o755)
	os.WriteFile(filepath.Join(cat, "a.md"), []byte(good), 0o644)
	os.WriteFile(filepath.Join(cat, "b.md"), []byte(strings.Replace(good, "id: 1", "id: 2", 1)), 0o644)
	l := NewLoader(testCfg(t))
	l.Cache = true
	if _, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	// b.md changes and c.md is new; the watcher reports them; a.md is
	// taken from the cache unread, even though its contents changed
	// behind the watcher's back.
	os.WriteFile(filepath.Join(cat, "a.md"), []byte(strings.Replace(good, "Hello", "Unseen", 1)), 0o644)
	os.WriteFile(filepath.Join(cat, "b.md"), []byte(strings.Replace(strings.Replace(good, "id: 1", "id: 2", 1), "Hello", "Seen", 1)), 0o644)
	os.WriteFile(filepath.Join(cat, "c.md"), []byte(strings.Replace(good, "id: 1", "id: 3", 1)), 0o644)
	site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now, Changed: []string{"news/politics/b.md", "news/politics/c.md"}})
	if err != nil {
		t.Fatal(err)
	}
	titles := map[int64]string{}
	for _, a := range site.Articles {
		titles[a.ID] = a.Title
	}
	if titles[1] != "Hello" || titles[2] != "Seen" || titles[3] != "Hello" || site.Reparsed != 2 {
		t.Errorf("titles %v, reparsed %d; want 1 Hello (cached), 2 Seen, 3 Hello (new), 2 reparsed", titles, site.Reparsed)
	}
	// A full load (no Changed list) stats every file and sees a.md.
	site, err = l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range site.Articles {
		if a.ID == 1 && a.Title != "Unseen" {
			t.Errorf("full load kept stale a.md: %q", a.Title)
		}
	}
}

// TestParseKeepsNoReference checks what the loader relies on to reuse its
// read buffer: an article shares no memory with the bytes it was parsed from.
func TestParseKeepsNoReference(t *testing.T) {
	for _, file := range []string{
		"---\nid: 7\ntitle: \"Заголовок \\\"в кавычках\\\"\"\npublished: 2025-01-02T10:00:00\nauthor: ivan\ntags: [a, 'b c']\nimg_big: /i/big.jpg\n---\nFirst *paragraph* with [a link](http://x) &amp; more.\n\nSecond.\n",
		"---\nid: 8\ntitle: Plain\npublished: 2025-01-02T10:00:00\nauthor_name: Guest\nauthor_url: https://guest.example.org/\nannouncement: Given.\ntags:\n  - one\n  - two\n---\n",
		"\n---\nid: 9\ntitle: 'Library split'\npublished: 2025-01-02 10:00:00\nauthor: ivan\n---\nBody line one\nline two.\n",
	} {
		fp := &fileParser{cfg: testCfg(t), md: newMarkdownParser()}
		data := []byte(file)
		r := fp.parse("content/news/politics/x.md", "news", "politics", "x", data)
		if r.article == nil {
			t.Fatalf("parse: %v", r.errs)
		}
		show := func(a *Article) string { return fmt.Sprintf("%+v %+v", *a, *a.Shown) }
		want := show(r.article)
		for i := range data {
			data[i] = 'X'
		}
		if got := show(r.article); got != want {
			t.Errorf("article changed with its source bytes:\ngot  %s\nwant %s", got, want)
		}
	}
}

// TestLoaderChangedFolder replaces a category folder by moving in another
// with the same file names: the watcher reports only the folder, and every
// file in it is read again.
func TestLoaderChangedFolder(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	os.MkdirAll(cat, 0o755)
	os.WriteFile(filepath.Join(cat, "a.md"), []byte(good), 0o644)
	l := NewLoader(testCfg(t))
	l.Cache = true
	if _, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	staging := filepath.Join(t.TempDir(), "politics")
	os.MkdirAll(staging, 0o755)
	os.WriteFile(filepath.Join(staging, "a.md"), []byte(strings.Replace(good, "Hello", "Replaced", 1)), 0o644)
	os.RemoveAll(cat)
	if err := os.Rename(staging, cat); err != nil {
		t.Fatal(err)
	}
	site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now, Changed: []string{"news/politics"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(site.Articles) != 1 || site.Articles[0].Title != "Replaced" {
		t.Errorf("got %d articles, first %q; want the replaced one", len(site.Articles), site.Articles[0].Title)
	}
}

// TestFileNameURLs checks the URL an article's file name makes: a
// character that cannot stand in a URL is an error, white space and
// capitals a warning, and a special file named .md an error.
func TestFileNameURLs(t *testing.T) {
	tests := []struct {
		name        string
		wantErr     string
		wantWarning string
	}{
		{"plain-name", "<nil>", ""},
		{"новость", "<nil>", ""},
		{`q"uo<te>&%20?#`, `content/news/politics/q"uo<te>&%20?#.md: file name makes an invalid URL https://www.example.com/news/politics/q"uo<te>&%20?#/: '"' cannot stand in a URL; rename the file with letters, digits and -`, ""},
		{"with space name", "<nil>", "content/news/politics/with space name.md: file name makes a URL with white space, https://www.example.com/news/politics/with space name/: rename the file with - instead"},
		{"Capital", "<nil>", "content/news/politics/Capital.md: file name makes a URL with capitals, https://www.example.com/news/politics/Capital/: most sites use lowercase URLs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, err := load(t, map[string]string{"news/politics/" + tt.name + ".md": good})
			if got := errString(err); got != tt.wantErr {
				t.Errorf("got error %q, want %q", got, tt.wantErr)
			}
			var warnings string
			if site != nil {
				warnings = site.Warnings.Error()
			}
			if warnings != tt.wantWarning {
				t.Errorf("got warnings %q, want %q", warnings, tt.wantWarning)
			}
		})
	}

	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	testfiles.FIFO(t, filepath.Join(cat, "pipe.md"))
	_, err := NewLoader(testCfg(t)).Load(context.Background(), os.DirFS(dir), Options{Now: now, Root: "content"})
	want := "content/news/politics/pipe.md: not a regular file (p---------): an article is a plain file; remove it or rename it without .md"
	if got := errString(err); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestLoaderCacheSameSizeAndTime checks that a file replaced by one of the
// same size and modification time (cp -p, a folder moved in over another)
// is read again: on Linux, its inode or change time tells.
func TestLoaderCacheSameSizeAndTime(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("size and modification time are all other systems tell")
	}
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	os.MkdirAll(cat, 0o755)
	name := filepath.Join(cat, "a.md")
	os.WriteFile(name, []byte(good), 0o644)
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	os.Chtimes(name, old, old)
	l := NewLoader(testCfg(t))
	l.Cache = true
	if _, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	same := strings.Replace(good, "Hello", "Jello", 1) // same length
	for _, replace := range []func(){
		func() { os.WriteFile(name, []byte(same), 0o644) },
		func() {
			tmp := filepath.Join(dir, "new.md")
			os.WriteFile(tmp, []byte(same), 0o644)
			os.Rename(tmp, name)
		},
	} {
		os.WriteFile(name, []byte(good), 0o644)
		os.Chtimes(name, old, old)
		l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
		replace()
		os.Chtimes(name, old, old)
		site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if got := site.Articles[0].Title; !strings.Contains(got, "Jello") {
			t.Errorf("title %q: the file replaced with the same size and time was not read again", got)
		}
	}
}

// TestDateOnly checks that a published date without a time is midnight
// of that day in the site's time zone.
func TestDateOnly(t *testing.T) {
	loc, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Skip(err)
	}
	wall, instant, err := parseTime("2026-01-10", loc)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := wall.Format(PublishedLayout), "2026-01-10T00:00:00"; got != want {
		t.Errorf("wall clock %s, want %s", got, want)
	}
	if got, want := instant.UTC().Format(time.RFC3339), "2026-01-09T21:00:00Z"; got != want {
		t.Errorf("instant %s, want %s", got, want)
	}
}

// TestDrafts checks that drafts are left out and counted, unless
// Options.Drafts publishes them.
func TestDrafts(t *testing.T) {
	fsys := fstest.MapFS{
		"news/politics/a.md": {Data: []byte(good)},
		"news/politics/b.md": {Data: []byte(strings.Replace(good, "id: 1", "id: 2\ndraft: true", 1))},
	}
	for _, drafts := range []bool{false, true} {
		site, err := NewLoader(testCfg(t)).Load(context.Background(), fsys, Options{Now: now, Drafts: drafts})
		if err != nil {
			t.Fatal(err)
		}
		wantArticles, wantDrafts := 1, 1
		if drafts {
			wantArticles, wantDrafts = 2, 0
		}
		if len(site.Articles) != wantArticles || site.Drafts != wantDrafts {
			t.Errorf("Drafts=%t: %d articles, %d drafts; want %d, %d", drafts, len(site.Articles), site.Drafts, wantArticles, wantDrafts)
		}
	}
}

// sorted returns s sorted.
func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestLoadIndex checks Article.Index: the place of each file in the order
// walked, set before Parsed sees the article, and set again on articles
// a caching Loader takes from its cache when files before them come or go.
func TestLoadIndex(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	write := func(name string, id int) {
		t.Helper()
		data := strings.Replace(good, "id: 1", fmt.Sprintf("id: %d", id), 1)
		if err := os.WriteFile(filepath.Join(cat, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("b.md", 2)
	write("c.md", 3)
	write("d.md", 4)
	l := NewLoader(testCfg(t))
	l.Cache = true
	var got0 map[string]int // of the load before
	for _, step := range []struct {
		name string
		add  string // file added before the load
		want map[string]int
	}{
		{"first", "", map[string]int{"b": 0, "c": 1, "d": 2}},
		{"one before the cached", "a.md", map[string]int{"a": 0, "b": 1, "c": 2, "d": 3}},
	} {
		if step.add != "" {
			write(step.add, 1)
		}
		var mu sync.Mutex
		seen := map[string]int{}
		site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now, Parsed: func(a *Article) {
			mu.Lock()
			seen[a.Slug] = a.Index
			mu.Unlock()
		}})
		if err != nil {
			t.Fatal(err)
		}
		if want := len(step.want) - len(got0); site.Reparsed != want {
			t.Fatalf("%s: parsed %d files, want %d (the others from the cache)", step.name, site.Reparsed, want)
		}
		got0 = step.want
		got := map[string]int{}
		for _, a := range site.Articles {
			got[a.Slug] = a.Index
		}
		if !maps.Equal(got, step.want) {
			t.Errorf("%s: got indexes %v, want %v", step.name, got, step.want)
		}
		for slug, i := range seen {
			if i != step.want[slug] {
				t.Errorf("%s: Parsed saw %s at index %d, want %d", step.name, slug, i, step.want[slug])
			}
		}
	}
}

// TestSlim checks that Slim keeps what orders and filters articles and
// drops what only their JSON shows, and the tags and author key when no
// filter uses them.
func TestSlim(t *testing.T) {
	tests := []struct {
		filters    []string
		wantTags   []string
		wantAuthor string
	}{
		{nil, nil, ""},
		{[]string{"section", "category"}, nil, ""},
		{[]string{"tag"}, []string{"a", "b"}, ""},
		{[]string{"author"}, nil, "ivan"},
		{listing.FilterNames(), []string{"a", "b"}, "ivan"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.filters), func(t *testing.T) {
			a := &Article{ID: 7, URL: "u", Tags: []string{"a", "b"}, AuthorKey: "ivan", Shown: &Shown{Title: "t"}, Section: "news", SectionSlug: "politics", Slug: "x", Index: 3}
			a.Slim(listing.Reads(tt.filters))
			if a.Shown != nil {
				t.Error("Shown kept")
			}
			if !slices.Equal(a.Tags, tt.wantTags) || a.AuthorKey != tt.wantAuthor {
				t.Errorf("got tags %q and author %q, want %q and %q", a.Tags, a.AuthorKey, tt.wantTags, tt.wantAuthor)
			}
			if a.ID != 7 || a.URL != "u" || a.Section != "news" || a.SectionSlug != "politics" || a.Slug != "x" || a.Index != 3 {
				t.Errorf("got %+v: what orders and checks articles changed", a)
			}
		})
	}
}

// TestLoaderCacheEpoch checks that a file modified at 1970-01-01 00:00:00
// UTC exactly (touch -d @0, some archives) is a known time: a caching
// Loader takes it from its cache rather than parse it again each time.
func TestLoaderCacheEpoch(t *testing.T) {
	dir := t.TempDir()
	cat := filepath.Join(dir, "news", "politics")
	if err := os.MkdirAll(cat, 0o755); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(cat, "a.md")
	if err := os.WriteFile(name, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(name, time.Unix(0, 0), time.Unix(0, 0)); err != nil {
		t.Fatal(err)
	}
	l := NewLoader(testCfg(t))
	l.Cache = true
	for i, want := range []int{1, 0} {
		site, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		if site.Reparsed != want {
			t.Errorf("load %d: parsed %d files, want %d", i+1, site.Reparsed, want)
		}
	}
}
