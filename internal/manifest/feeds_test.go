package manifest

import (
	"slices"
	"testing"

	"github.com/feedgen/feedgen/internal/syndication"
)

// TestFeedFormats checks that a build's feed formats are those of which
// it lists a feed file, of any collection, in the order of
// syndication.Formats; a file that only looks like a feed (another
// folder, another name) is none.
func TestFeedFormats(t *testing.T) {
	for _, tc := range []struct {
		files []string
		want  []string
	}{
		{nil, nil},
		{[]string{"articles/index.json", "articles/20/0.json"}, nil},
		{[]string{"articles/tag/api/feed.json", "articles/feed.rss"}, []string{"rss", "json"}},
		{[]string{"articles/feed.atom", "articles/feed.json", "articles/feed.rss"}, []string{"rss", "atom", "json"}},
		{[]string{"feed.rss", "articles/feed.xml", "other/feed.atom"}, nil},
	} {
		m := &Manifest{}
		for _, p := range tc.files {
			m.Files = append(m.Files, File{Path: p})
		}
		var got []string
		for _, f := range m.FeedFormats() {
			got = append(got, f.Name)
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%v: %v, want %v", tc.files, got, tc.want)
		}
	}
	if len(syndication.Formats()) != 3 {
		t.Errorf("%d formats: this table names 3", len(syndication.Formats()))
	}
}
