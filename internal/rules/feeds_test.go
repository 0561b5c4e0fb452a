package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/manifest"
)

// TestFeedsWarning checks that every target warns of a build with
// reader feeds, which no target's files answer yet, and that --strict
// then writes nothing.
func TestFeedsWarning(t *testing.T) {
	withFeeds := *sampleMan
	withFeeds.Files = append([]manifest.File{{Path: "articles/feed.rss", Size: 1, SHA256: strings.Repeat("0", 64)}}, sampleMan.Files...)
	for _, target := range Targets() {
		for _, m := range []*manifest.Manifest{sampleMan, &withFeeds} {
			s, err := NewSite(m, sampleRoot, "8080")
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			_, warnings, err := Write(target, s, out, false)
			if err != nil {
				if errors.Is(err, ErrChunks) {
					continue
				}
				t.Fatal(err)
			}
			warned := false
			for _, w := range warnings {
				warned = warned || strings.Contains(w, "reader feeds")
			}
			if warned != (m == &withFeeds) {
				t.Errorf("%s, feeds %v: warnings %q", target.Name, m == &withFeeds, warnings)
			}
			if m == &withFeeds {
				var se *StrictError
				if written, _, err := Write(target, s, t.TempDir(), true); !errors.As(err, &se) || len(written) > 0 {
					t.Errorf("%s --strict: wrote %v, error %v; want a StrictError and nothing written", target.Name, written, err)
				}
			}
		}
	}
}
