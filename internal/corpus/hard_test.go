package corpus_test

import (
	"context"
	"maps"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
)

// loadHard reads a hard corpus with feedgen's own loaders.
func loadHard(t *testing.T, files map[string][]byte) (*config.Config, *content.Site) {
	t.Helper()
	cfg, err := config.Parse(corpus.ConfigPath, "", files[corpus.ConfigPath])
	if err != nil {
		t.Fatalf("config:\n%v", err)
	}
	fsys := fstest.MapFS{}
	for p, data := range files {
		if rel, ok := strings.CutPrefix(p, "content/"); ok {
			fsys[rel] = &fstest.MapFile{Data: data}
		}
	}
	site, err := content.NewLoader(cfg).Load(context.Background(), fsys, content.Options{Now: corpus.HardNow, Root: "content"})
	if err != nil {
		t.Fatalf("content:\n%v", err)
	}
	return cfg, site
}

func TestHardFiles(t *testing.T) {
	tests := []struct {
		name string
		opt  corpus.Options
	}{
		{"small", corpus.Options{Articles: 30, Seed: 1}},
		{"limits", corpus.Options{Articles: 200, Seed: 7, Limits: []int{7, 30}, Offsets: "aligned"}},
		{"empty", corpus.Options{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			files := corpus.HardFiles(tt.opt)
			if again := corpus.HardFiles(tt.opt); !maps.EqualFunc(files, again, func(a, b []byte) bool { return string(a) == string(b) }) {
				t.Fatal("two calls gave different files")
			}
			if got, want := len(files), tt.opt.Articles+1; got != want {
				t.Errorf("got %d files, want %d", got, want)
			}
			cfg, site := loadHard(t, files)
			if got, want := site.Files, tt.opt.Articles; got != want {
				t.Errorf("got %d articles read, want %d", got, want)
			}
			if got, want := len(site.Articles)+site.Drafts+site.Scheduled, tt.opt.Articles; got != want {
				t.Errorf("got %d articles, drafts and scheduled, want %d", got, want)
			}
			if tt.opt.Articles >= 100 && (site.Drafts == 0 || site.Scheduled == 0) {
				t.Errorf("got %d drafts and %d scheduled, want some of each", site.Drafts, site.Scheduled)
			}
			if cfg.BaseURL != "https://api.example.com/v2" || cfg.SiteURL != "https://www.example.com/site" {
				t.Errorf("got base_url %q and site_url %q, want URLs with a path", cfg.BaseURL, cfg.SiteURL)
			}
			for _, a := range site.Articles {
				for _, tag := range a.Tags {
					if strings.Contains(tag, ", ") {
						t.Errorf("%s: tag %q holds \", \": it cannot be told apart once joined", a.Path, tag)
					}
				}
			}
		})
	}
}

// TestHardValues checks that the hard corpus has the values it is for:
// each kind at least once in 200 articles, as the listing shows them.
func TestHardValues(t *testing.T) {
	_, site := loadHard(t, corpus.HardFiles(corpus.Options{Articles: 200, Seed: 3}))
	checks := []struct {
		name string
		has  func(a *content.Article) bool
	}{
		{"CR LF in an announcement", func(a *content.Article) bool { return strings.Contains(a.Announcement, "\r\n") }},
		{"a tab in a title", func(a *content.Article) bool { return strings.Contains(a.Title, "\t") }},
		{"a leading space in a title", func(a *content.Article) bool { return strings.HasPrefix(a.Title, " ") }},
		{"a title over 2 kB", func(a *content.Article) bool { return len(a.Title) > 2000 }},
		{"an announcement over 5 kB", func(a *content.Article) bool { return len(a.Announcement) > 5000 }},
		{"an announcement from the body", func(a *content.Article) bool { return strings.HasPrefix(a.Announcement, "Bold ") }},
		{"an empty announcement", func(a *content.Article) bool { return a.Announcement == "" }},
		{"U+2028", func(a *content.Article) bool { return strings.Contains(a.Title+a.Announcement, "\u2028") }},
		{"emoji", func(a *content.Article) bool { return strings.Contains(a.Title+a.Announcement, "😀") }},
		{"a YAML word as a whole tag", func(a *content.Article) bool { return hasTag(a, "null") || hasTag(a, "yes") || hasTag(a, "~") }},
		{"an empty tag", func(a *content.Article) bool { return hasTag(a, "") }},
		{"a tag with a comma", func(a *content.Article) bool { return hasTag(a, "a,b") || hasTag(a, "comma,") }},
		{"a tag with a leading space", func(a *content.Article) bool { return hasTag(a, " leading") }},
		{"an id past 2^53", func(a *content.Article) bool { return a.ID > 1<<53 }},
		{"pageviews past 2^53", func(a *content.Article) bool { return a.Pageviews > 1<<53 }},
		{"the default avatar", func(a *content.Article) bool {
			return a.ImgSmall == "https://media.example.com/m/static/avatar default.png?v=2&size=small"
		}},
		{"an empty img_small", func(a *content.Article) bool { return a.ImgSmall == "" }},
		{"a relative image with a space", func(a *content.Article) bool { return a.ImgBig == "https://media.example.com/m/img/фото 1.jpg" }},
		{"a protocol-relative image", func(a *content.Article) bool { return strings.HasPrefix(a.ImgBig+a.ImgSmall, "//") }},
		{"an inline author", func(a *content.Article) bool { return a.AuthorKey == "" }},
		{"an author off the site", func(a *content.Article) bool { return strings.HasPrefix(a.AuthorURL, "https://johnobrien.") }},
		{"an author without a URL", func(a *content.Article) bool { return a.AuthorURL == "" }},
		{"a slug with a space", func(a *content.Article) bool { return strings.Contains(a.Slug, " ") }},
		{"a CR LF category", func(a *content.Article) bool { return a.Category == "line\r\nbreak" }},
	}
	for _, c := range checks {
		found := false
		for _, a := range site.Articles {
			if c.has(a) {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no article has %s", c.name)
		}
	}
	ties := 0
	content.Sort(site.Articles)
	for i := 1; i < len(site.Articles); i++ {
		if site.Articles[i].Published.Equal(site.Articles[i-1].Published) {
			ties++
		}
	}
	if ties == 0 {
		t.Error("no two articles are published at the same time")
	}
}

func hasTag(a *content.Article, tag string) bool {
	for _, t := range a.Tags {
		if t == tag {
			return true
		}
	}
	return false
}
