package rules

import (
	"regexp"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/syndication"
)

// TestFeedsOfTheBuild checks that every target's files answer the feed
// formats the build has and no other: a build without feeds gets files
// that name no feed, one with RSS only files that name no other format.
// (The runtime tests hold the answers to feedgen serve's, on a build with
// every format.)
func TestFeedsOfTheBuild(t *testing.T) {
	rss, _ := syndication.FormatNamed("rss")
	for _, tc := range []struct {
		feeds []syndication.Format
		has   []string
	}{
		{nil, nil},
		{[]syndication.Format{rss}, []string{"feed.rss"}},
		{syndication.Formats(), []string{"feed.rss", "feed.atom", "feed.json"}},
	} {
		for _, target := range Targets() {
			s, err := NewSite(sampleMan, sampleRoot, "8080")
			if err != nil {
				t.Fatal(err)
			}
			s.Feeds = tc.feeds
			out, _, err := generate(target, s, t.TempDir())
			if err != nil {
				t.Fatalf("%s: %v", target.Name, err)
			}
			var all strings.Builder
			for _, name := range target.Files {
				all.Write(out.Files[name])
			}
			for _, f := range syndication.Formats() {
				want := false
				for _, h := range tc.has {
					want = want || h == f.File
				}
				// As it is, or in a regular expression.
				got := strings.Contains(all.String(), f.File) || strings.Contains(all.String(), regexp.QuoteMeta(f.File))
				if got != want {
					t.Errorf("%s, feeds %v: names %s %v, want %v", target.Name, tc.has, f.File, got, want)
				}
			}
		}
	}
}
