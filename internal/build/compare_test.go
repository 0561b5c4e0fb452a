package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestCompare: what Compare says of a site changed (or not) since its
// build, as publish asks before it uploads that build.
func TestCompare(t *testing.T) {
	scheduled := time.Date(2027, 6, 1, 10, 0, 0, 0, time.UTC) // later.md of shortcutSite
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		now    time.Time // zero: the build time
		want   Changes
	}{
		{name: "nothing"},
		{name: "an article's file touched, its bytes the same", change: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "content/news/politics/a2.md")
			later := time.Now().Add(time.Hour)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "the output changed", change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/0.json"), "{}")
		}},
		{name: "an article edited", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), strings.Replace(article(2, "2025-01-02T10:00:00"), "Body 2", "Body two", 1))
		}},
		{name: "an article added", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a9.md"), article(9, "2025-01-09T10:00:00"))
		}},
		{name: "an article deleted", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, "content/news/politics/a2.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "an article renamed", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			if err := os.Rename(filepath.Join(dir, "content/news/politics/a2.md"), filepath.Join(dir, "content/news/politics/b2.md")); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "a draft edited", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/draft.md"), strings.Replace(draft, "Draft body", "Other", 1))
		}},
		{name: "an article broken", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), "---\ntitle: [\n---\n")
		}},
		{name: "a file in the wrong place", want: Changes{Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/a7.md"), article(7, "2025-01-07T10:00:00"))
		}},
		{name: "config edited", want: Changes{Config: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "Politics", "Politika", 1))
		}},
		{name: "config and content edited", want: Changes{Config: true, Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig+"# a comment\n")
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a9.md"), article(9, "2025-01-09T10:00:00"))
		}},
		{name: "config broken, content the same", want: Changes{Config: true, Content: true}, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: [\n")
		}},
		{name: "a second before the scheduled article", now: scheduled.Add(-time.Second)},
		{name: "the scheduled article due", now: scheduled, want: Changes{Due: scheduled}},
		{name: "a manifest of a build that records no content", want: Changes{Config: true}, change: func(t *testing.T, dir string) {
			editManifest(t, filepath.Join(dir, "public"), func(m *manifest.Manifest) { m.ContentSHA256 = "" })
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig+"# a comment\n")
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a9.md"), article(9, "2025-01-09T10:00:00"))
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := shortcutSite(t)
			mustBuild(t, dir)
			if tt.change != nil {
				tt.change(t, dir)
			}
			now := tt.now
			if now.IsZero() {
				now = buildTime
			}
			got, err := Compare(context.Background(), filepath.Join(dir, "config.yaml"), readTestManifest(t, filepath.Join(dir, "public")), now)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got %+v, want %+v", got, tt.want)
			}
			if got.Any() != (tt.want != Changes{}) {
				t.Errorf("Any() = %v for %+v", got.Any(), got)
			}
		})
	}
}

// BenchmarkCompare measures Compare on a site of 10,000 articles whose
// build is up to date: what publish adds to every publish in a site.
func BenchmarkCompare(b *testing.B) {
	dir := b.TempDir()
	n, err := corpus.Write(dir, corpus.Options{Articles: 10_000, Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := Run(context.Background(), Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow}); err != nil {
		b.Fatal(err)
	}
	r, err := manifest.Read(os.DirFS(filepath.Join(dir, "public")))
	if err != nil {
		b.Fatal(err)
	}
	b.Logf("%d articles", n)
	for b.Loop() {
		ch, err := Compare(context.Background(), filepath.Join(dir, "config.yaml"), r.Manifest, fixedNow())
		if err != nil || ch.Any() {
			b.Fatal(ch, err)
		}
	}
}
