package scaffold

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/rules"
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
	ignore, err := os.ReadFile(filepath.Join(dir, ".gitignore"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"/public/", "/" + rules.RecordsName} {
		if !slices.Contains(strings.Split(string(ignore), "\n"), want) {
			t.Errorf(".gitignore has no line %s:\n%s", want, ignore)
		}
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
		w, err := Article(context.Background(), cfg, NewArticle{Path: "news/general/" + slug}, now)
		if err != nil {
			t.Fatal(err)
		}
		p := w.Path
		if w.Author != "editor" || !w.Chosen {
			t.Errorf("author %q, chosen %t; want editor, chosen", w.Author, w.Chosen)
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
		if _, err := Article(context.Background(), cfg, NewArticle{Path: tt.spec}, now); err == nil || !strings.Contains(err.Error(), tt.want) {
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

// TestSiteKeepsGrowing builds the config feedgen new site writes with
// 10,000 articles of a news site's size (a headline, a lead of about 250
// characters, three tags): its output, projected linearly to 100,000
// articles, stays under half of max_output_bytes (no size warning),
// where the defaults it wrote before (pages, every offset of [20, 50,
// 100], four filters) refuse the 10,000.
func TestSiteKeepsGrowing(t *testing.T) {
	if testing.Short() {
		t.Skip("builds 10,000 articles")
	}
	dir := filepath.Join(t.TempDir(), "mysite")
	if _, err := Site(dir, now); err != nil {
		t.Fatal(err)
	}
	const n = 10_000
	lead := strings.Repeat("The council voted on the budget after a long debate. ", 5)
	for i := range n {
		p := filepath.Join(dir, "content", "news", "general", fmt.Sprintf("story-%d.md", i))
		data := fmt.Sprintf("---\nid: %d\ntitle: \"Council votes on the budget of district %d after a long debate\"\npublished: %s\nauthor: editor\ntags: [budget, council, district-%d]\n---\n%s\n",
			i+2, i, now.Add(-time.Duration(i)*time.Minute).Format("2006-01-02T15:04:05"), i%50, lead)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build1 := func() (*build.Result, error) {
		var log strings.Builder
		res, err := build.New(build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: func() time.Time { return now }, Memory: true, Quiet: true, Log: &log}).Build(context.Background())
		if err == nil && strings.Contains(log.String(), "max_output_bytes") {
			t.Errorf("a size warning at %d articles:\n%s", n, log.String())
		}
		return res, err
	}
	res, err := build1()
	if err != nil {
		t.Fatal(err)
	}
	if res.Articles != n+1 {
		t.Fatalf("%d articles, want %d", res.Articles, n+1)
	}
	if at100k := res.Estimate * 100_000 / int64(res.Articles); at100k > config.DefaultMaxOutputBytes/2 {
		t.Errorf("%d bytes at %d articles: %d projected at 100,000, over half of max_output_bytes (%d)", res.Estimate, res.Articles, at100k, int64(config.DefaultMaxOutputBytes))
	}
	t.Logf("%d articles: %d bytes; 100,000 projected: %d", res.Articles, res.Estimate, res.Estimate*100_000/int64(res.Articles))

	name := filepath.Join(dir, "config.yaml")
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	before := strings.Replace(string(data), "  layout: chunks\n", "  limits: [20, 50, 100]\n  offsets: all\n", 1)
	if before == string(data) {
		t.Fatal("config.yaml of a new site has no layout: chunks")
	}
	if err := os.WriteFile(name, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := build1(); err == nil || !strings.Contains(err.Error(), "more than pagination.max_output_bytes") {
		t.Errorf("the defaults of before at %d articles: got %v, want a refusal", n, err)
	}
}

// TestArticleGiven writes articles with a title, an author and tags
// given, including what YAML must quote, and loads them back as given;
// an author not in the config and a missing category are refused with
// the line to add.
func TestArticleGiven(t *testing.T) {
	dir := t.TempDir()
	yaml := "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {general: General}}\n" +
		"authors: {editor: {name: The Editor, url: /e/}, ivan: {name: Ivan, url: /i/}}\n"
	cfg, err := config.Parse(filepath.Join(dir, "config.yaml"), dir, []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	given := NewArticle{Path: "news/general/night", Title: `Election: night, "live" \ #1`, Author: "ivan", Tags: []string{"elections", " city hall ", "", "a: b"}}
	w, err := Article(context.Background(), cfg, given, now)
	if err != nil {
		t.Fatal(err)
	}
	if w.Author != "ivan" || w.Chosen {
		t.Errorf("author %q, chosen %t; want ivan, given", w.Author, w.Chosen)
	}
	site, err := content.NewLoader(cfg).Load(context.Background(), content.DirFS(cfg.ContentDir), content.Options{Now: now, Drafts: true, Root: cfg.ContentDir})
	if err != nil {
		t.Fatal(err)
	}
	if len(site.Articles) != 1 {
		t.Fatalf("%d articles, want 1", len(site.Articles))
	}
	a := site.Articles[0]
	if a.Title != given.Title || a.AuthorKey != "ivan" || !slices.Equal(a.Tags, []string{"elections", "city hall", "a: b"}) {
		t.Errorf("title %q, author %q, tags %q; want %q, ivan, [elections city hall a: b]", a.Title, a.AuthorKey, a.Tags, given.Title)
	}
	for _, tt := range []struct {
		a    NewArticle
		want string
	}{
		{NewArticle{Path: "news/general/x", Author: "anna"},
			`no author "anna" in ` + cfg.Path + `: the authors are editor, ivan; or add anna: {name: NAME, url: /authors/anna/} under authors`},
		{NewArticle{Path: "news/city-hall/x"},
			`no category "city-hall" in section news of ` + cfg.Path + `: add city-hall: City hall under sections.news (its categories are general)`},
		{NewArticle{Path: "sport/football/x"},
			`no section "sport" in ` + cfg.Path + `: add sport: {football: Football} under sections (the sections are news)`},
	} {
		if _, err := Article(context.Background(), cfg, tt.a, now); err == nil || err.Error() != tt.want {
			t.Errorf("Article(%+v):\ngot  %v\nwant %s", tt.a, err, tt.want)
		}
	}
}

// TestArticleNote checks what Written.Note says: which author was taken
// when none was given, and how to choose another (the others, or where to
// add one); nothing when one was given.
func TestArticleNote(t *testing.T) {
	for _, tc := range []struct {
		name, authors, given, want string
	}{
		{"several", "{editor: {name: The Editor, url: /e/}, ivan: {name: Ivan, url: /i/}, olga: {name: Olga, url: /o/}}", "",
			"author: editor (The Editor), the first of the authors in CONFIG: for another, feedgen new article --author KEY (ivan, olga)"},
		{"one", "{editor: {name: The Editor, url: /e/}}", "",
			"author: editor (The Editor), the first of the authors in CONFIG: add others under authors in CONFIG to choose one with --author KEY"},
		{"given", "{editor: {name: The Editor, url: /e/}, ivan: {name: Ivan, url: /i/}}", "ivan", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "config.yaml")
			yaml := "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {general: General}}\nauthors: " + tc.authors + "\n"
			cfg, err := config.Parse(path, dir, []byte(yaml))
			if err != nil {
				t.Fatal(err)
			}
			w, err := Article(context.Background(), cfg, NewArticle{Path: "news/general/x", Author: tc.given}, now)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.ReplaceAll(tc.want, "CONFIG", path); w.Note() != want {
				t.Errorf("got  %q\nwant %q", w.Note(), want)
			}
		})
	}
}
