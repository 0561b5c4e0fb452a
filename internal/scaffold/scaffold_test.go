package scaffold

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/config"
)

var now = time.Date(2026, 11, 23, 17, 0, 0, 0, time.UTC)

// TestSiteBuilds writes a new site and builds it: one article, no
// warning; then adds articles and checks their ids and front matter.
func TestSiteBuilds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "mysite")
	files, err := Site(dir, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 3 {
		t.Errorf("wrote %q, want config.yaml, .gitignore and an article", files)
	}
	res, err := build.New(build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: func() time.Time { return now }}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Articles != 1 || len(res.Warnings) != 0 {
		t.Errorf("%d articles, warnings %v; want 1 and none", res.Articles, res.Warnings)
	}
	if _, err := Site(dir, now); err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("got %v, want a refusal of a folder that is not empty", err)
	}

	data, err := os.ReadFile(filepath.Join(dir, "config.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(filepath.Join(dir, "config.yaml"), dir, data)
	if err != nil {
		t.Fatal(err)
	}
	for i, slug := range []string{"second", "third-one"} {
		p, err := Article(context.Background(), cfg, "news/general/"+slug, now)
		if err != nil {
			t.Fatal(err)
		}
		got, _ := os.ReadFile(p)
		for _, want := range []string{"id: " + string(rune('2'+i)) + "\n", "published: 2026-11-23T17:00:00\n", "draft: true", "author: editor\n", "title: \"" + TitleOf(slug) + "\"\n"} {
			if !strings.Contains(string(got), want) {
				t.Errorf("%s lacks %q:\n%s", p, want, got)
			}
		}
	}
	tests := []struct{ spec, want string }{
		{"news/general/second", "exists: choose another slug"},
		{"sport/general/x", `no section "sport"`},
		{"news/sport/x", `no category "sport" in section news`},
		{"news/general/Bad", `slug "Bad": use lowercase letters`},
		{"news/general/a--b", `slug "a--b"`},
		{"news/x", "want SECTION/CATEGORY/SLUG"},
	}
	for _, tt := range tests {
		if _, err := Article(context.Background(), cfg, tt.spec, now); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Article(%q): got %v, want %q", tt.spec, err, tt.want)
		}
	}
	res, err = build.New(build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: func() time.Time { return now }, Drafts: true}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Articles != 3 {
		t.Errorf("with drafts %d articles, want 3", res.Articles)
	}
}

// TestTitleOf checks the title a new article gets from its slug.
func TestTitleOf(t *testing.T) {
	for _, tt := range []struct{ slug, want string }{
		{"my-great-story", "My great story"},
		{"second", "Second"},
		{"2026-budget-vote", "2026 budget vote"},
		{"a_b-c", "A b c"},
		{"x", "X"},
		{"ёлка-новости", "Ёлка новости"},
		{"-", ""},
	} {
		if got := TitleOf(tt.slug); got != tt.want {
			t.Errorf("TitleOf(%q) = %q, want %q", tt.slug, got, tt.want)
		}
	}
}
