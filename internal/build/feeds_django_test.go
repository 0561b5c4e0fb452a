package build

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/syndication"
	"github.com/feedgen/feedgen/internal/syndication/djangotest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestFeedsDjango builds the repository's sample site, with feeds and
// every filter, and compares the RSS and Atom feed of every collection
// with those Django's syndication framework writes for SPEC §13's Feed
// (testdata/django_collection_feeds.py: the channel and the items made
// apart from feedgen, in Python, from the listing's JSON of the
// collection's first page).
func TestFeedsDjango(t *testing.T) {
	djangotest.Python(t) // before the build: skipped without Django
	repo, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := os.CopyFS(filepath.Join(dir, "content"), os.DirFS(filepath.Join(repo, "content"))); err != nil {
		t.Fatal(err)
	}
	cfgData, err := os.ReadFile(filepath.Join(repo, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfgData = append(cfgData, "feeds:\n  title: Example <News> & more\n  description: The latest articles\n  language: ru\n"...)
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), string(cfgData))
	if _, err := builder(dir).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("config.yaml", dir, cfgData)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	m := readTestManifest(t, out)
	type collection struct {
		Params   [][2]string       `json:"params"`
		Articles []json.RawMessage `json:"articles"`
	}
	var colls []collection
	var dirs []string
	limit := cfg.Pagination.DefaultLimit
	for _, c := range m.Collections {
		if c.Count == 0 {
			continue
		}
		var page struct {
			Results []json.RawMessage `json:"results"`
		}
		data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(listing.PageKey{Dir: c.Dir, Limit: limit}.Path())))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(data, &page); err != nil {
			t.Fatal(err)
		}
		cc := collection{Articles: page.Results}
		for _, p := range c.Params {
			cc.Params = append(cc.Params, [2]string{p.Key, p.Value})
		}
		colls = append(colls, cc)
		dirs = append(dirs, c.Dir)
	}
	if len(colls) < 50 {
		t.Fatalf("%d collections with articles in the sample, want every filter's", len(colls))
	}
	var want []map[string]string
	djangotest.Run(t, "testdata/django_collection_feeds.py", map[string]any{
		"site_url": cfg.SiteURL, "base_url": cfg.BaseURL, "tz": cfg.Timezone,
		"feeds":       map[string]any{"title": cfg.Feeds.Title, "description": cfg.Feeds.Description, "language": cfg.Feeds.Language, "items": cfg.Feeds.Items},
		"collections": colls,
	}, &want)
	for i, d := range dirs {
		for _, name := range []string{"rss", "atom"} {
			f, _ := syndication.FormatNamed(name)
			got, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(layout.FeedPath(d, f))))
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want[i][name] {
				t.Errorf("%s: %s\n got %s\nwant %s", d, name, got, want[i][name])
			}
		}
	}
}
