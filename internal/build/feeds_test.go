package build

import (
	"context"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

const feedsConfig = filterConfig + "feeds:\n  title: News\n  description: The latest\n  items: 3\n"

// feedSite writes a site of ten tagged articles with every filter and
// feeds in layout lay, and returns its folder.
func feedSite(t *testing.T, lay string) string {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(feedsConfig, "  limits: [2, 3]\n", "  limits: [2, 3]\n  layout: "+lay+"\n", 1))
	for i := 1; i <= 10; i++ {
		tags := "Go, odd"
		if i%2 == 0 {
			tags = "Go, even, Go"
		}
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a"+itoa(i)+".md"), taggedArticle(i, "2025-01-"+pad(i)+"T10:00:00", tags))
	}
	return dir
}

// feedFiles returns the feeds of the build in dir, by path, as the
// manifest lists them.
func feedFiles(t *testing.T, out string) map[string]manifest.File {
	t.Helper()
	feeds := map[string]manifest.File{}
	for _, f := range readTestManifest(t, out).Files {
		if layout.Classify(f.Path) == layout.Feed {
			feeds[f.Path] = f
		}
	}
	return feeds
}

// TestFeeds builds a site with feeds in both layouts, with a Builder and
// as feedgen build does (Run, which bounds its memory): every collection
// has its three feeds, listed in the manifest, the same bytes in every
// way; the main feed's items are the newest articles in listing order,
// each with its distinct tags.
func TestFeeds(t *testing.T) {
	var first map[string]string // path → bytes, of the first way
	for _, lay := range []string{"pages", "chunks"} {
		for _, once := range []bool{false, true} {
			dir := feedSite(t, lay)
			b := builder(dir)
			b.once = once
			res, err := b.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "public")
			feeds := feedFiles(t, out)
			// main, section news, category politics, tags Go, odd, even,
			// author ivan: 7 collections.
			if len(feeds) != 21 || res.Feeds != 21 {
				t.Fatalf("%s once=%v: %d feeds listed, %d in the result, want 21", lay, once, len(feeds), res.Feeds)
			}
			got := map[string]string{}
			for p := range feeds {
				data, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(p)))
				if err != nil {
					t.Fatal(err)
				}
				got[p] = string(data)
			}
			if first == nil {
				first = got
			} else if !maps.Equal(first, got) {
				t.Errorf("%s once=%v: feeds differ from the pages layout's", lay, once)
			}
		}
	}
	rss := first["articles/feed.rss"]
	links := regexp.MustCompile(`<item><title>[^<]*</title><link>([^<]*)</link>`).FindAllStringSubmatch(rss, -1)
	var got []string
	for _, l := range links {
		got = append(got, l[1])
	}
	want := []string{"https://www.example.com/news/politics/a10/", "https://www.example.com/news/politics/a9/", "https://www.example.com/news/politics/a8/"}
	if !slices.Equal(got, want) {
		t.Errorf("main feed's items %v, want %v", got, want)
	}
	if !strings.Contains(rss, "<guid>https://www.example.com/news/politics/a10/</guid><category>Go</category><category>even</category></item>") {
		t.Errorf("the newest item's tags are not Go, even once each:\n%s", rss)
	}
	var js struct {
		Title   string `json:"title"`
		FeedURL string `json:"feed_url"`
		Home    string `json:"home_page_url"`
	}
	if err := json.Unmarshal([]byte(first["articles/tag/even/feed.json"]), &js); err != nil {
		t.Fatal(err)
	}
	if js.Title != "News: even" || js.FeedURL != "https://api.example.com/articles/feed.json?tag=even" || js.Home != "https://www.example.com/" {
		t.Errorf("tag even's feed: %+v", js)
	}
	if err := json.Unmarshal([]byte(first["articles/category/politics/section/news/feed.json"]), &js); err != nil {
		t.Fatal(err)
	}
	if js.Title != "News: Politics" || js.FeedURL != "https://api.example.com/articles/feed.json?category=politics&section=news" || js.Home != "https://www.example.com/news/politics/" {
		t.Errorf("category politics's feed: %+v", js)
	}
}

// TestFeedsIncremental edits the site of TestFeeds build after build: a
// feed is rewritten only when its bytes change (an article among the
// newest of its collection changed), the feeds of a collection that is
// gone are deleted, and so are all feeds once the config has none.
func TestFeedsIncremental(t *testing.T) {
	for _, lay := range []string{"pages", "chunks"} {
		t.Run(lay, func(t *testing.T) {
			dir := feedSite(t, lay)
			mustBuild(t, dir)
			out := filepath.Join(dir, "public")
			p := func(i int) string { return filepath.Join(dir, "content/news/politics/a"+itoa(i)+".md") }
			steps := []struct {
				name, file, data string
				// want are the feeds changed (~), added (+) or deleted (-):
				// all formats of each collection's folder.
				want []string
			}{
				// a3 is among no collection's three newest (odd's are a9,
				// a7, a5).
				{"old article's title", p(3), strings.Replace(taggedArticle(3, "2025-01-03T10:00:00", "Go, odd"), "title: Article 3", "title: Third", 1), nil},
				{"odd article's title", p(7), strings.Replace(taggedArticle(7, "2025-01-07T10:00:00", "Go, odd"), "title: Article 7", "title: Seventh", 1),
					[]string{"~articles/tag/odd"}},
				{"newest article's title", p(10), strings.Replace(taggedArticle(10, "2025-01-10T10:00:00", "Go, even"), "title: Article 10", "title: Tenth", 1),
					[]string{"~articles", "~articles/author/ivan", "~articles/category/politics/section/news", "~articles/section/news", "~articles/tag/_47o", "~articles/tag/even"}},
				{"tag added", p(9), taggedArticle(9, "2025-01-09T10:00:00", "Go, solo"),
					[]string{"~articles", "~articles/author/ivan", "~articles/category/politics/section/news", "~articles/section/news", "~articles/tag/_47o", "~articles/tag/odd", "+articles/tag/solo"}},
				{"tag gone", p(9), taggedArticle(9, "2025-01-09T10:00:00", "Go, odd"),
					[]string{"~articles", "~articles/author/ivan", "~articles/category/politics/section/news", "~articles/section/news", "~articles/tag/_47o", "~articles/tag/odd", "-articles/tag/solo"}},
			}
			for _, st := range steps {
				before := snap(t, out)
				waitNewerModTime(t, before)
				testfiles.WriteFile(t, st.file, st.data)
				if _, err := builder(dir).Build(context.Background()); err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				var changed, want []string
				for _, d := range diffSnap(before, snap(t, out)) {
					if layout.Classify(filepath.ToSlash(d[1:])) == layout.Feed {
						changed = append(changed, d)
					}
				}
				for _, w := range st.want {
					for _, f := range []string{"feed.atom", "feed.json", "feed.rss"} {
						want = append(want, w+"/"+f)
					}
				}
				slices.Sort(changed)
				slices.Sort(want)
				if !slices.Equal(changed, want) {
					t.Errorf("%s: feeds changed %v\nwant %v", st.name, changed, want)
				}
			}
			// No feeds: every feed is deleted, nothing else.
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(feedsConfig, "  limits: [2, 3]\n", "  limits: [2, 3]\n  layout: "+lay+"\n", 1)[:len(filterConfig)+len("  layout: "+lay+"\n")])
			if n := len(feedFiles(t, out)); n == 0 {
				t.Fatal("no feeds before the config drops them")
			}
			res := mustBuild(t, dir)
			if n := len(feedFiles(t, out)); n != 0 || res.Feeds != 0 {
				t.Errorf("%d feeds listed, %d in the result, after the config dropped feeds", n, res.Feeds)
			}
			if err := filepath.WalkDir(out, func(p string, d os.DirEntry, err error) error {
				if err == nil && strings.HasPrefix(d.Name(), "feed.") {
					t.Errorf("%s left", p)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
		})
	}
}
