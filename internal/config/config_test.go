package config

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/syndication"
)

const minimal = "site_url: https://www.example.com\nbase_url: https://api.example.com\n"

func TestParseErrors(t *testing.T) {
	tests := []struct {
		name, yaml, want string
	}{
		{"missing site_url", "base_url: https://api.example.com\n",
			"config.yaml: site_url is missing: add e.g. site_url: https://www.example.com"},
		{"missing base_url", "site_url: https://www.example.com\n",
			"config.yaml: base_url is missing: add the address /articles/ is served from, e.g. base_url: https://api.example.com"},
		{"base_url with a space", "site_url: https://www.example.com\nbase_url: https://api.example.com/my api\n",
			`config.yaml:2: base_url: "https://api.example.com/my api" has " ", which cannot stand in a URL: percent-encode it (a space is %20)`},
		{"relative base_url", "site_url: https://www.example.com\nbase_url: /api\n",
			`config.yaml:2: base_url: "/api" is not an absolute URL: write it with its scheme and host, e.g. https://www.example.com`},
		{"default_limit not in limits", minimal + "pagination:\n  default_limit: 25\n  limits: [20, 50]\n",
			"config.yaml:4: pagination.default_limit 25 is not one of pagination.limits [20 50]: add it to limits"},
		{"max_limit not in limits", minimal + "pagination:\n  limits: [20, 50]\n  max_limit: 70\n",
			"config.yaml:5: pagination.max_limit 70 is not one of pagination.limits [20 50]: add it to limits"},
		{"zero limit", minimal + "pagination:\n  limits: [20, 0]\n",
			"config.yaml:4: pagination.limits: page size 0 must be a positive whole number"},
		{"negative default", minimal + "pagination:\n  default_limit: -5\n",
			"config.yaml:4: pagination.default_limit: page size -5 must be a positive whole number"},
		{"unknown timezone", minimal + "timezone: Mars/Olympus\n",
			`config.yaml:3: timezone: unknown time zone "Mars/Olympus": use an IANA name such as Europe/Moscow or UTC`},
		{"unknown key with suggestion", minimal + "site_ulr: x\n",
			`config.yaml:3: unknown key "site_ulr": did you mean "site_url"?`},
		{"unknown nested key", minimal + "pagination:\n  limit: 20\n",
			`config.yaml:4: unknown key "pagination.limit": did you mean "pagination.limits"?`},
		{"typo of default_limit, one error", minimal + "pagination:\n  default_limt: 30\n  limits: [30, 50]\n",
			`config.yaml:4: unknown key "pagination.default_limt": did you mean "pagination.default_limit"?`},
		{"bad offsets", minimal + "pagination:\n  offsets: some\n",
			`config.yaml:4: pagination.offsets: want "all" or "aligned", got "some"`},
		{"bad layout", minimal + "pagination:\n  layout: chunk\n",
			`config.yaml:4: pagination.layout: want "pages" or "chunks", got "chunk"`},
		{"chunks with aligned offsets", minimal + "pagination:\n  offsets: aligned\n  layout: chunks\n",
			`config.yaml:4: pagination.offsets: aligned has no meaning with layout: chunks, which answers every offset: remove it`},
		{"bad size", minimal + "pagination:\n  max_output_bytes: lots\n",
			`config.yaml:4: pagination.max_output_bytes: "lots" is not a size: write e.g. 4GiB, 500MB or 1000000`},
		{"malformed yaml", minimal + "sections: [\n",
			"config.yaml:3: invalid YAML: did not find expected node content"},
		{"indented key far below the mapping's start", "# a comment\n\n# another\n" + minimal + strings.Repeat("# more\n", 25) + " pagination:\n  default_limit: 20\n",
			"config.yaml:31: invalid YAML: did not find expected key: indent this line as the keys of its mapping above it, or quote the whole value before it"},
		{"colon in a value", minimal + "sections:\n  news:\n    weekly: Digest: the week\n",
			`config.yaml:5: the value of weekly has a colon followed by a space; quote it: weekly: "Digest: the week"`},
		{"not a mapping", "- a\n", "config.yaml:1: want a mapping of key: value lines, got a list"},
		{"empty", "", "config.yaml: config is empty: set at least site_url and base_url"},
		{"author without name", minimal + "authors:\n  ivan: {url: /a/}\n",
			"config.yaml:4: authors.ivan: name is missing"},
		{"bad section name", minimal + "sections:\n  \"a b\": {x: X}\n",
			`config.yaml:4: sections: "a b" is not a valid URL segment: use letters, digits, '-', '_', '.'`},
		{"filters not a list", minimal + "filters: tag\n",
			"config.yaml:3: filters: want a list of texts like [a, b], got \"tag\""},
		{"filters a mapping", minimal + "filters:\n  tag: true\n",
			"config.yaml:4: filters: want a list of texts like [a, b], got a mapping"},
		{"filter not a text", minimal + "filters:\n  - tag\n  - [author]\n",
			"config.yaml:5: filters: want a list of texts, item is a list"},
		{"unknown filter with suggestion", minimal + "filters: [section, tags]\n",
			`config.yaml:3: unknown filter "tags": did you mean "tag"?`},
		{"unknown filter in block list", minimal + "filters:\n  - tag\n  - Author\n",
			`config.yaml:5: unknown filter "Author": did you mean "author"?`},
		{"unknown filter without suggestion", minimal + "filters: [year]\n",
			`config.yaml:3: unknown filter "year": known filters are section, category, tag, author`},
		{"empty filter", minimal + "filters: [\"\"]\n",
			`config.yaml:3: unknown filter "": known filters are section, category, tag, author`},
		{"filter twice", minimal + "filters:\n  - tag\n  - author\n  - tag\n",
			`config.yaml:6: filter "tag" is listed twice: list each filter once`},
		{"several filter errors", minimal + "filters:\n  - tag\n  - tag\n  - secton\n  - tag\n", strings.Join([]string{
			`config.yaml:5: filter "tag" is listed twice: list each filter once`,
			`config.yaml:6: unknown filter "secton": did you mean "section"?`,
			`config.yaml:7: filter "tag" is listed twice: list each filter once`,
		}, "\n")},
		{"filter twice through an alias", minimal + "filters:\n  - &t tag\n  - *t\n",
			`config.yaml:5: filter "tag" is listed twice: list each filter once`},
		{"unknown key near filters", minimal + "filter: [tag]\n",
			`config.yaml:3: unknown key "filter": did you mean "filters"?`},
		{"publish not a mapping", minimal + "publish: no-cache\n",
			`config.yaml:3: publish: want a mapping of key: value lines, got "no-cache"`},
		{"unknown publish key with suggestion", minimal + "publish:\n  cache-control: no-cache\n",
			`config.yaml:4: unknown key "publish.cache-control": did you mean "publish.cache_control"?`},
		{"unknown publish key without suggestion", minimal + "publish:\n  bucket: s3://x\n",
			`config.yaml:4: unknown key "publish.bucket": known keys are cache_control`},
		{"empty cache_control", minimal + "publish:\n  cache_control: \"\"\n",
			`config.yaml:4: publish.cache_control: empty: leave it out for "public, max-age=60", or write e.g. "public, max-age=300"`},
		{"cache_control on two lines", minimal + "publish:\n  cache_control: \"no-cache\\nx: y\"\n",
			`config.yaml:4: publish.cache_control: "no-cache\nx: y" has "\n": a header value is one line of printable ASCII`},
		{"cache_control a list", minimal + "publish:\n  cache_control: [public]\n",
			`config.yaml:4: publish.cache_control: want a text value, got a list`},
		{"feeds empty", minimal + "feeds:\n",
			`config.yaml:3: feeds: empty: give at least title and description, or leave feeds out for no feeds`},
		{"feeds without title and description", minimal + "feeds:\n  items: 5\n", strings.Join([]string{
			`config.yaml:4: feeds.title is missing: add the feeds' title, e.g. title: Example News`,
			`config.yaml:4: feeds.description is missing: add what the feeds are, e.g. description: The latest articles`,
		}, "\n")},
		{"feeds title empty", minimal + "feeds:\n  title: \"\"\n  description: d\n",
			`config.yaml:4: feeds.title: empty: write what readers see, e.g. title: Example News`},
		{"feeds unknown key", minimal + "feeds:\n  title: t\n  description: d\n  limit: 5\n",
			`config.yaml:6: unknown key "feeds.limit": known keys are title, description, items, language, formats`},
		{"feeds items zero", minimal + "feeds:\n  title: t\n  description: d\n  items: 0\n",
			`config.yaml:6: feeds.items: 0: a feed holds at least one article; leave items out for pagination.default_limit`},
		{"feeds items past max_limit", minimal + "pagination:\n  limits: [20, 50]\nfeeds:\n  title: t\n  description: d\n  items: 60\n",
			`config.yaml:8: feeds.items: 60 is more than pagination.max_limit (50): a feed holds at most a page of the largest size`},
		{"feeds unknown format", minimal + "feeds:\n  title: t\n  description: d\n  formats: [rss, atom1]\n",
			`config.yaml:6: unknown feed format "atom1": did you mean "atom"?`},
		{"feeds format twice", minimal + "feeds:\n  title: t\n  description: d\n  formats:\n    - rss\n    - rss\n",
			`config.yaml:8: feeds.formats: "rss" is listed twice: list each format once`},
		{"feeds no format", minimal + "feeds:\n  title: t\n  description: d\n  formats: []\n",
			`config.yaml:6: feeds.formats: empty: list at least one of rss, atom, json, or leave formats out for all`},
		{"several errors at once", "site_url: nope\nbase_url: nope\nextra: 1\n", strings.Join([]string{
			`config.yaml:1: site_url: "nope" is not an absolute URL: write it with its scheme and host, e.g. https://www.example.com`,
			`config.yaml:2: base_url: "nope" is not an absolute URL: write it with its scheme and host, e.g. https://www.example.com`,
			`config.yaml:3: unknown key "extra": known keys are site_url, base_url, media_url, timezone, default_avatar, sections, authors, pagination, filters, publish, feeds, content_dir, output_dir`,
		}, "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("config.yaml", "", []byte(tt.yaml))
			got := "<nil>"
			if err != nil {
				got = err.Error()
			}
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestParseChunks checks that the chunks layout takes a max_limit that
// is not one of limits: it answers every limit up to it.
func TestParseChunks(t *testing.T) {
	c, err := Parse("config.yaml", "", []byte(minimal+"pagination:\n  max_limit: 77\n  layout: chunks\n"))
	if err != nil {
		t.Fatal(err)
	}
	if !layout.Of(c.Pagination).Assembled || c.Pagination.MaxLimit != 77 || !layout.Of(c.Pagination).Answers(c.Pagination, 33) || layout.Of(c.Pagination).Answers(c.Pagination, 78) {
		t.Errorf("pagination %+v", c.Pagination)
	}
}

func TestParseDefaults(t *testing.T) {
	c, err := Parse("site/config.yaml", "site", []byte(minimal+"site_url: https://www.example.com/\n"[0:0]))
	if err != nil {
		t.Fatal(err)
	}
	p := c.Pagination
	checks := []struct {
		name      string
		got, want any
	}{
		{"media_url", c.MediaURL, "https://www.example.com"},
		{"timezone", c.Location.String(), "UTC"},
		{"default_limit", p.DefaultLimit, 20},
		{"limits", len(p.Limits), 1},
		{"max_limit", p.MaxLimit, 20},
		{"offsets", p.Offsets, listing.OffsetsAll},
		{"max_output_bytes", c.MaxOutputBytes, int64(4 << 30)},
		{"content_dir", c.ContentDir, "site/content"},
		{"output_dir", c.OutputDir, "site/public"},
	}
	for _, ch := range checks {
		if ch.got != ch.want {
			t.Errorf("%s = %v, want %v", ch.name, ch.got, ch.want)
		}
	}
}

func TestParseFull(t *testing.T) {
	c, err := Parse("config.yaml", "", []byte(`site_url: https://www.example.com/
base_url: https://api.example.com
media_url: https://media.example.com/
timezone: Europe/Moscow
pagination:
  default_limit: 20
  limits: [100, 20, 50, 20]
  offsets: aligned
  max_output_bytes: 1GiB
output_dir: /srv/public
`))
	if err != nil {
		t.Fatal(err)
	}
	if c.SiteURL != "https://www.example.com" || c.MediaURL != "https://media.example.com" {
		t.Errorf("trailing slash kept: %q %q", c.SiteURL, c.MediaURL)
	}
	if got := c.Pagination.Limits; len(got) != 3 || got[0] != 20 || got[2] != 100 {
		t.Errorf("limits = %v, want [20 50 100]", got)
	}
	if c.Pagination.MaxLimit != 100 || c.MaxOutputBytes != 1<<30 || c.OutputDir != "/srv/public" {
		t.Errorf("got max_limit %d, max_output_bytes %d, output_dir %q", c.Pagination.MaxLimit, c.MaxOutputBytes, c.OutputDir)
	}
}

func TestParsePublish(t *testing.T) {
	tests := []struct{ name, yaml, want string }{
		{"not set", "", DefaultCacheControl},
		{"null", "publish:\n", DefaultCacheControl},
		{"empty mapping", "publish: {}\n", DefaultCacheControl},
		{"set", "publish:\n  cache_control: public, max-age=300\n", "public, max-age=300"},
		{"quoted, spaces trimmed", "publish: {cache_control: \" no-cache \"}\n", "no-cache"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("config.yaml", "", []byte(minimal+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Publish.CacheControl; got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}

// TestParseFeeds checks feeds: with its defaults and with every key set.
func TestParseFeeds(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       *Feeds
	}{
		{"not set", "", nil},
		{"defaults", "feeds:\n  title: Example News\n  description: The latest\n",
			&Feeds{Title: "Example News", Description: "The latest", Items: 20, Language: "en-us", Formats: syndication.Formats()}},
		{"every key", "pagination:\n  limits: [20, 50]\nfeeds:\n  title: Новости\n  description: d\n  items: 50\n  language: ru\n  formats: [json, rss]\n",
			&Feeds{Title: "Новости", Description: "d", Items: 50, Language: "ru", Formats: []syndication.Format{syndication.Formats()[0], syndication.Formats()[2]}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("config.yaml", "", []byte(minimal+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			got, want := c.Feeds, tt.want
			if (got == nil) != (want == nil) {
				t.Fatalf("got %+v, want %+v", got, want)
			}
			if got == nil {
				return
			}
			names := func(fs []syndication.Format) (s []string) {
				for _, f := range fs {
					s = append(s, f.Name)
				}
				return s
			}
			if got.Title != want.Title || got.Description != want.Description || got.Items != want.Items || got.Language != want.Language ||
				!slices.Equal(names(got.Formats), names(want.Formats)) {
				t.Errorf("got %+v, want %+v", got, want)
			}
		})
	}
}

func TestParseFilters(t *testing.T) {
	tests := []struct {
		name, yaml string
		want       []string
	}{
		{"not set", "", nil},
		{"null", "filters:\n", nil},
		{"empty", "filters: []\n", nil},
		{"one", "filters: [tag]\n", []string{"tag"}},
		{"category alone", "filters: [category]\n", []string{"category"}},
		{"canonical order", "filters: [author, tag, category, section]\n",
			[]string{"section", "category", "tag", "author"}},
		{"block list", "filters:\n  - author\n  - section\n", []string{"section", "author"}},
		{"quoted", "filters: [\"tag\", 'author']\n", []string{"tag", "author"}},
		{"anchored item", "filters: [&t tag, author]\n", []string{"tag", "author"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse("config.yaml", "", []byte(minimal+tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(c.Filters, tt.want) {
				t.Errorf("got %q, want %q", c.Filters, tt.want)
			}
		})
	}
}

func TestParseSize(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"4GiB", 4 << 30, true}, {"500MB", 500e6, true}, {"1000", 1000, true}, {"2 kib", 2048, true},
		{"", 0, false}, {"1.5GB", 0, false}, {"10PB", 0, false}, {"99999999999999999999", 0, false},
	}
	for _, tt := range tests {
		got, err := ParseSize(tt.in)
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d, ok %v", tt.in, got, err, tt.want, tt.ok)
		}
	}
}

func TestCheckContentDir(t *testing.T) {
	dir := t.TempDir()
	os.MkdirAll(filepath.Join(dir, "content"), 0o755)
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	base := "site_url: https://www.example.com\nbase_url: https://api.example.com\n"
	tests := []struct{ yaml, want string }{
		{base, ""},
		{base + "content_dir: content\n", ""},
		{base + "content_dir: contnt\n", `config.yaml:3: content_dir: folder "contnt" does not exist (relative to the config's folder: ` + filepath.Join(dir, "contnt") + `): did you mean "content"?`},
		{base + "content_dir: file\n", `config.yaml:3: content_dir: "file" is not a folder (` + filepath.Join(dir, "file") + `)`},
	}
	for _, tt := range tests {
		cfg, err := Parse("config.yaml", dir, []byte(tt.yaml))
		if err != nil {
			t.Fatal(err)
		}
		got := ""
		if err := cfg.CheckContentDir(); err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q: got %q, want %q", tt.yaml, got, tt.want)
		}
	}
}
