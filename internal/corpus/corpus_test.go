package corpus

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"gopkg.in/yaml.v3"
)

type frontMatter struct {
	ID            *int     `yaml:"id"`
	Title         string   `yaml:"title"`
	Published     string   `yaml:"published"`
	Announcement  *string  `yaml:"announcement"`
	Tags          []string `yaml:"tags"`
	Pageviews     *int     `yaml:"pageviews"`
	CommentsCount *int     `yaml:"comments_count"`
	Author        string   `yaml:"author"`
	AuthorName    string   `yaml:"author_name"`
	AuthorURL     string   `yaml:"author_url"`
	ImgBig        string   `yaml:"img_big"`
	ImgBig2x      string   `yaml:"img_big_2x"`
	ImgSmall      string   `yaml:"img_small"`
	ImgSmall2x    string   `yaml:"img_small_2x"`
}

type config struct {
	SiteURL       string                       `yaml:"site_url"`
	BaseURL       string                       `yaml:"base_url"`
	MediaURL      string                       `yaml:"media_url"`
	Timezone      string                       `yaml:"timezone"`
	DefaultAvatar string                       `yaml:"default_avatar"`
	Sections      map[string]map[string]string `yaml:"sections"`
	Authors       map[string]struct {
		Name string `yaml:"name"`
		URL  string `yaml:"url"`
	} `yaml:"authors"`
	Pagination struct {
		DefaultLimit   int    `yaml:"default_limit"`
		MaxLimit       int    `yaml:"max_limit"`
		Limits         []int  `yaml:"limits"`
		Offsets        string `yaml:"offsets"`
		MaxOutputBytes string `yaml:"max_output_bytes"`
	} `yaml:"pagination"`
	Filters    []string `yaml:"filters"`
	ContentDir string   `yaml:"content_dir"`
	OutputDir  string   `yaml:"output_dir"`
}

// decodeStrict decodes YAML into v, failing on keys v does not declare.
func decodeStrict(data []byte, v any) error {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	return dec.Decode(v)
}

// splitArticle returns the front matter and the body of a markdown file.
func splitArticle(data []byte) (fm, body []byte, err error) {
	rest, ok := bytes.CutPrefix(data, []byte("---\n"))
	if !ok {
		return nil, nil, fmt.Errorf("no opening --- line")
	}
	fm, body, ok = bytes.Cut(rest, []byte("\n---\n"))
	if !ok {
		return nil, nil, fmt.Errorf("no closing --- line")
	}
	return fm, body, nil
}

func parseArticle(t *testing.T, p string, data []byte) frontMatter {
	t.Helper()
	fm, body, err := splitArticle(data)
	if err != nil {
		t.Fatalf("%s: %v", p, err)
	}
	var m frontMatter
	if err := decodeStrict(fm, &m); err != nil {
		t.Fatalf("%s: front matter: %v\n%s", p, err, fm)
	}
	if n := len(bytes.TrimSpace(body)); n < 900 || n > 4000 {
		t.Errorf("%s: body is %d bytes, want about 1-3 KB", p, n)
	}
	return m
}

func TestFilesDeterministic(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"defaults", Options{Articles: 50, Seed: 1}},
		{"aligned", Options{Articles: 50, Seed: 7, Limits: []int{20, 50, 100}, Offsets: "aligned"}},
		{"negative seed", Options{Articles: 10, Seed: -3, MaxOutputBytes: "1GiB"}},
		{"filters", Options{Articles: 20, Seed: 2, Filters: []string{"section", "category", "tag", "author"}}},
		{"empty", Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a, b := Files(tt.opt), Files(tt.opt)
			if !reflect.DeepEqual(a, b) {
				t.Fatal("two calls with the same options gave different files")
			}
			other := tt.opt
			other.Seed++
			c := Files(other)
			if tt.opt.Articles > 0 && reflect.DeepEqual(a, c) {
				t.Error("a different seed gave the same files")
			}
		})
	}
}

func TestFilesCountAndPaths(t *testing.T) {
	pathRE := regexp.MustCompile(`^content/[a-z-]+/[a-z-]+/[a-z0-9-]+\.md$`)
	for _, n := range []int{0, 1, 2, 137} {
		t.Run(fmt.Sprint(n), func(t *testing.T) {
			files := Files(Options{Articles: n, Seed: 42})
			if len(files) != n+1 {
				t.Fatalf("got %d files, want %d", len(files), n+1)
			}
			if _, ok := files[ConfigPath]; !ok {
				t.Fatalf("no %s", ConfigPath)
			}
			for p := range files {
				if p != ConfigPath && !pathRE.MatchString(p) {
					t.Errorf("bad path %q", p)
				}
			}
		})
	}
}

func TestFrontMatter(t *testing.T) {
	const n = 2000
	opt := Options{Articles: n, Seed: 99}
	files := Files(opt)

	var cfg config
	if err := decodeStrict(files[ConfigPath], &cfg); err != nil {
		t.Fatalf("config: %v", err)
	}

	ids := make(map[int]string)
	published := make(map[string]int)
	var noAnnouncement, inlineAuthor, withImages, withQuotes, withAmp int
	dateRE := regexp.MustCompile(`^20(1[5-9]|2[0-5])-\d\d-\d\dT\d\d:\d\d:\d\d$`)
	for p, data := range files {
		if p == ConfigPath {
			continue
		}
		m := parseArticle(t, p, data)
		parts := strings.Split(p, "/")
		if _, ok := cfg.Sections[parts[1]][parts[2]]; !ok {
			t.Errorf("%s: category %s/%s is not in config", p, parts[1], parts[2])
		}
		switch {
		case m.ID == nil || *m.ID <= 0:
			t.Errorf("%s: id missing or not positive", p)
		case ids[*m.ID] != "":
			t.Errorf("%s: id %d also used by %s", p, *m.ID, ids[*m.ID])
		default:
			ids[*m.ID] = p
		}
		if m.Title == "" {
			t.Errorf("%s: no title", p)
		}
		if strings.Contains(m.Title, `"`) {
			withQuotes++
		}
		if strings.Contains(m.Title, "&") {
			withAmp++
		}
		if !dateRE.MatchString(m.Published) {
			t.Errorf("%s: published %q", p, m.Published)
		} else if _, err := time.Parse("2006-01-02T15:04:05", m.Published); err != nil {
			t.Errorf("%s: published: %v", p, err)
		}
		published[m.Published]++
		if m.Announcement == nil {
			noAnnouncement++
		} else if *m.Announcement == "" {
			t.Errorf("%s: empty announcement", p)
		}
		if len(m.Tags) > 6 {
			t.Errorf("%s: %d tags", p, len(m.Tags))
		}
		if m.Pageviews == nil || *m.Pageviews < 0 || m.CommentsCount == nil || *m.CommentsCount < 0 {
			t.Errorf("%s: pageviews or comments_count missing or negative", p)
		}
		switch {
		case m.Author != "" && (m.AuthorName != "" || m.AuthorURL != ""):
			t.Errorf("%s: both author and author_name/author_url", p)
		case m.Author != "":
			if _, ok := cfg.Authors[m.Author]; !ok {
				t.Errorf("%s: unknown author %q", p, m.Author)
			}
		case m.AuthorName != "" && m.AuthorURL != "":
			inlineAuthor++
		default:
			t.Errorf("%s: no author", p)
		}
		imgs := []string{m.ImgBig, m.ImgBig2x, m.ImgSmall, m.ImgSmall2x}
		if m.ImgBig != "" {
			withImages++
			for _, img := range imgs {
				if !strings.HasPrefix(img, "/images/"+m.Published[:4]+"/"+m.Published[5:7]+"/") {
					t.Errorf("%s: image %q", p, img)
				}
			}
		} else if strings.Join(imgs, "") != "" {
			t.Errorf("%s: some images but no img_big", p)
		}
	}
	for id := 1; id <= n; id++ {
		if ids[id] == "" {
			t.Errorf("id %d not used; ids should be a permutation of 1..%d", id, n)
		}
	}
	ties := 0
	for _, c := range published {
		if c > 1 {
			ties++
		}
	}
	share := func(k int) float64 { return float64(k) / n }
	checks := []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"no announcement", share(noAnnouncement), 0.05, 0.15},
		{"inline author", share(inlineAuthor), 0.02, 0.08},
		{"with images", share(withImages), 0.6, 0.8},
		{"title with quotes", share(withQuotes), 0.05, 0.3},
		{"title with &", share(withAmp), 0.03, 0.2},
		{"tied published", share(ties), 0.005, 0.05},
	}
	for _, c := range checks {
		if c.got < c.min || c.got > c.max {
			t.Errorf("%s: share %.3f, want in [%.3f, %.3f]", c.name, c.got, c.min, c.max)
		}
	}
}

func TestConfig(t *testing.T) {
	tests := []struct {
		opt                Options
		defaultLimit, max  int
		limits             []int
		offsets, maxOutput string
		filters            []string
	}{
		{Options{}, 20, 20, []int{20}, "all", "64GiB", nil},
		{Options{Limits: []int{20, 50, 100}, Offsets: "aligned", MaxOutputBytes: "4GiB"}, 20, 100, []int{20, 50, 100}, "aligned", "4GiB", nil},
		{Options{Limits: []int{50, 10}}, 50, 50, []int{50, 10}, "all", "64GiB", nil},
		{Options{Filters: []string{"section", "category", "tag", "author"}}, 20, 20, []int{20}, "all", "64GiB", []string{"section", "category", "tag", "author"}},
		{Options{Offsets: "aligned", Filters: []string{"tag"}}, 20, 20, []int{20}, "aligned", "64GiB", []string{"tag"}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.limits, tt.offsets, tt.filters), func(t *testing.T) {
			data := Config(tt.opt)
			var cfg config
			if err := decodeStrict(data, &cfg); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(cfg.Filters, tt.filters) {
				t.Errorf("filters = %q, want %q", cfg.Filters, tt.filters)
			}
			if tt.filters == nil && bytes.Contains(data, []byte("filters")) {
				t.Errorf("config without filters has a filters key:\n%s", data)
			}
			pg := cfg.Pagination
			if pg.DefaultLimit != tt.defaultLimit || pg.MaxLimit != tt.max || !reflect.DeepEqual(pg.Limits, tt.limits) ||
				pg.Offsets != tt.offsets || pg.MaxOutputBytes != tt.maxOutput {
				t.Errorf("pagination = %+v", pg)
			}
			if len(cfg.Sections) != 6 || len(cfg.Authors) != 20 {
				t.Errorf("%d sections, %d authors; want 6 and 20", len(cfg.Sections), len(cfg.Authors))
			}
			for s, cats := range cfg.Sections {
				if len(cats) != 3 {
					t.Errorf("section %s has %d categories", s, len(cats))
				}
			}
			for k, a := range cfg.Authors {
				if a.Name == "" || a.URL != "/authors/"+k+"/" {
					t.Errorf("author %s = %+v", k, a)
				}
			}
			if cfg.SiteURL != "https://www.example.com" || cfg.BaseURL != "https://api.example.com" ||
				cfg.MediaURL != "https://media.example.com" || cfg.Timezone != "Europe/Moscow" ||
				cfg.DefaultAvatar != "/static/avatar.png" || cfg.ContentDir != "content" || cfg.OutputDir != "public" {
				t.Errorf("config = %+v", cfg)
			}
		})
	}
}

// TestTags checks that the tags of a site come from a bounded vocabulary
// with a skewed distribution, as the filtered collections of a real site:
// a few tags on many articles, a long tail of tags on few, none on one
// article only, and tags that differ only in case.
func TestTags(t *testing.T) {
	const n = 10_000
	opt := Options{Articles: n, Seed: 1}
	count := make(map[string]int)
	memberships := 0
	for i := range n {
		p, data := Article(opt, i)
		fm, _, err := splitArticle(data)
		if err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		var m frontMatter
		if err := decodeStrict(fm, &m); err != nil {
			t.Fatalf("%s: %v", p, err)
		}
		seen := make(map[string]bool)
		for _, tag := range m.Tags {
			if seen[tag] {
				t.Errorf("%s: tag %q twice", p, tag)
			}
			seen[tag] = true
			count[tag]++
			memberships++
		}
	}
	vocabulary := make(map[string]bool)
	for _, tag := range tags {
		if vocabulary[tag] {
			t.Errorf("tag %q twice in the vocabulary", tag)
		}
		vocabulary[tag] = true
	}
	for tag := range count {
		if !vocabulary[tag] {
			t.Errorf("tag %q is not in the vocabulary", tag)
		}
	}
	counts := make([]int, 0, len(count))
	for _, c := range count {
		counts = append(counts, c)
	}
	slices.Sort(counts)
	top, median, least := counts[len(counts)-1], counts[len(counts)/2], counts[0]
	checks := []struct {
		name     string
		got      float64
		min, max float64
	}{
		{"distinct tags", float64(len(count)), 300, float64(len(tags))},
		{"tags per article", float64(memberships) / n, 2.5, 3.5},
		{"share of the most used tag", float64(top) / n, 0.1, 0.3},
		{"articles of the median tag", float64(median), 15, 100},
		{"articles of the least used tag", float64(least), 2, 30},
		{"most used / median", float64(top) / float64(median), 20, 200},
	}
	for _, c := range checks {
		if c.got < c.min || c.got > c.max {
			t.Errorf("%s: %.3f, want in [%.3f, %.3f]", c.name, c.got, c.min, c.max)
		}
	}
	if count["market"] == 0 || count["Market"] == 0 {
		t.Errorf("market on %d articles and Market on %d, want both used", count["market"], count["Market"])
	}
}

func TestArticle(t *testing.T) {
	opt := Options{Articles: 30, Seed: 5}
	files := Files(opt)
	for i := range opt.Articles {
		p, data := Article(opt, i)
		if !bytes.Equal(files[p], data) {
			t.Errorf("Article(%d) differs from Files", i)
		}
	}
	// Articles past the end are new: new path, new id.
	for _, i := range []int{opt.Articles, opt.Articles + 7} {
		p, data := Article(opt, i)
		if _, ok := files[p]; ok {
			t.Errorf("Article(%d) path %s already exists", i, p)
		}
		m := parseArticle(t, p, data)
		if m.ID == nil || *m.ID != i+1 {
			t.Errorf("Article(%d) id = %v, want %d", i, m.ID, i+1)
		}
	}
}

func TestWrite(t *testing.T) {
	tests := []struct {
		name string
		opt  Options
	}{
		{"empty", Options{Seed: 1}},
		{"small", Options{Articles: 300, Seed: 2, Limits: []int{20, 50}, Offsets: "aligned"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "site")
			n, err := Write(dir, tt.opt)
			if err != nil {
				t.Fatal(err)
			}
			want := Files(tt.opt)
			if n != len(want) {
				t.Errorf("Write returned %d, want %d", n, len(want))
			}
			got := 0
			err = filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
				if err != nil || d.IsDir() {
					return err
				}
				rel, err := filepath.Rel(dir, p)
				if err != nil {
					return err
				}
				data, err := os.ReadFile(p)
				if err != nil {
					return err
				}
				if !bytes.Equal(data, want[filepath.ToSlash(rel)]) {
					t.Errorf("%s differs from Files", rel)
				}
				got++
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			if got != len(want) {
				t.Errorf("found %d files on disk, want %d", got, len(want))
			}
		})
	}
}

func TestWriteError(t *testing.T) {
	// A regular file where the site folder should be.
	dir := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(dir, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, Options{Articles: 3}); err == nil {
		t.Fatal("Write into a regular file succeeded")
	}
}

func TestAppendQuoted(t *testing.T) {
	tests := []string{
		"",
		"plain",
		`say "hi" & bye`,
		`back\slash`,
		"line\r\nbreak\ttab",
		"Привет, мир",
		"yes", "null", "123", "2020-01-02T03:04:05", "~", "- item", "# comment", "key: value",
		"\x00\x01\x1f\x7f",
		"\u0085\u00a0\u2028\u2029\ufeff",
		"emoji 🎉",
	}
	for _, s := range tests {
		t.Run(fmt.Sprintf("%q", s), func(t *testing.T) {
			doc := appendQuoted([]byte("v: "), s)
			var got struct {
				V string `yaml:"v"`
			}
			if err := yaml.Unmarshal(doc, &got); err != nil {
				t.Fatalf("%s: %v", doc, err)
			}
			if got.V != s {
				t.Errorf("%s decoded as %q, want %q", doc, got.V, s)
			}
		})
	}
	// Invalid UTF-8 becomes U+FFFD.
	var got struct {
		V string `yaml:"v"`
	}
	doc := appendQuoted([]byte("v: "), "a\xffb")
	if err := yaml.Unmarshal(doc, &got); err != nil || got.V != "a\ufffdb" {
		t.Errorf("%s decoded as %q, %v; want %q", doc, got.V, err, "a\ufffdb")
	}
}

func BenchmarkArticle(b *testing.B) {
	opt := Options{Articles: 100_000, Seed: 1}
	for i := 0; b.Loop(); i++ {
		Article(opt, i%opt.Articles)
	}
}

func TestDateRange(t *testing.T) {
	for _, tt := range []struct {
		unix int64
		want string
	}{
		{dateFirst, "2015-01-01T00:00:00"},
		{dateLast, "2025-12-31T23:59:59"},
	} {
		if got := time.Unix(tt.unix, 0).UTC().Format("2006-01-02T15:04:05"); got != tt.want {
			t.Errorf("%d is %s, want %s", tt.unix, got, tt.want)
		}
	}
}
