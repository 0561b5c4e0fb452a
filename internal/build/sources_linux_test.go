package build

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestCompareReadsChanged checks which article files Compare (publish's
// "changed since the build" warning) opens, with the cache of sources
// the build kept: none when nothing changed, whatever the cache's key;
// the one touched or edited; every one without a cache. It never writes
// the cache.
func TestCompareReadsChanged(t *testing.T) {
	tests := []struct {
		name    string
		change  func(t *testing.T, dir, out, p string)
		opened  int // files: -1 for every one
		content bool
	}{
		{"nothing", func(*testing.T, string, string, string) {}, 0, false},
		{"the cache of another code", func(t *testing.T, dir, out, _ string) {
			b := sourcesBuilder(dir, out, buildTime)
			b.opt.Code = "other code"
			if _, err := b.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
		}, 0, false},
		{"a file touched", func(t *testing.T, _, _, p string) {
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}, 1, false},
		{"a file edited", func(t *testing.T, _, _, p string) {
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			testfiles.WriteFile(t, p, strings.Replace(string(data), "\ntitle: ", "\ntitle: Edited ", 1))
		}, 1, true},
		{"no cache", func(t *testing.T, _, out, _ string) {
			if err := os.Remove(filepath.Join(out, sourcesName)); err != nil {
				t.Fatal(err)
			}
		}, -1, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, out, opt := sourcesSite(t, 60, "chunks")
			m := readTestManifest(t, out)
			p, _ := corpusArticle(dir, opt, 42)
			tt.change(t, dir, out, p)
			cache, _ := os.ReadFile(filepath.Join(out, sourcesName))
			opened := watchOpensUnder(t, filepath.Join(dir, "content"))
			ch, err := Compare(context.Background(), filepath.Join(dir, "config.yaml"), m, buildTime)
			if err != nil {
				t.Fatal(err)
			}
			got := opened()
			want := tt.opened
			if want < 0 {
				want = opt.Articles
			}
			rel, _ := filepath.Rel(filepath.Join(dir, "content"), p)
			if len(got) != want || want == 1 && !slices.Equal(got, []string{filepath.ToSlash(rel)}) {
				t.Errorf("opened %d files (%.3q), want %d", len(got), got, want)
			}
			if ch.Content != tt.content || ch.Config {
				t.Errorf("got %+v, want content changed %v", ch, tt.content)
			}
			if after, _ := os.ReadFile(filepath.Join(out, sourcesName)); string(after) != string(cache) {
				t.Error("Compare changed the cache of sources")
			}
		})
	}
}
