package importer

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
)

func TestListURL(t *testing.T) {
	tests := []struct {
		in, want, err string
	}{
		{"https://api.example.com/articles/", "https://api.example.com/articles/", ""},
		{"http://127.0.0.1:8080/articles", "http://127.0.0.1:8080/articles/", ""},
		{"https://api.example.com/v2/articles/", "https://api.example.com/v2/articles/", ""},
		{"https://api.example.com/", "", "is not a listing's address"},
		{"https://api.example.com/articles/?limit=5", "", "has a query or fragment"},
		{"https://api.example.com/articles/#top", "", "has a query or fragment"},
		{"ftp://api.example.com/articles/", "", "is not an http(s) URL"},
		{"api.example.com/articles/", "", "is not an http(s) URL"},
	}
	for _, tt := range tests {
		u, err := ListURL(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("ListURL(%q): got error %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && err != nil:
			t.Errorf("ListURL(%q): %v", tt.in, err)
		case tt.err == "" && u.String() != tt.want:
			t.Errorf("ListURL(%q) = %s, want %s", tt.in, u, tt.want)
		}
	}
}

func TestParseLink(t *testing.T) {
	tests := []struct {
		in   string
		want parsedLink
		ok   bool
	}{
		{"https://api.example.com/articles/?limit=20&offset=40", parsedLink{"https://api.example.com", 20, 40, true}, true},
		{"https://api.example.com/v2/articles/?limit=20", parsedLink{"https://api.example.com/v2", 20, 0, false}, true},
		{"https://api.example.com/articles/?offset=40&limit=20", parsedLink{}, false},
		{"https://api.example.com/articles/?limit=020&offset=40", parsedLink{}, false},
		{"https://api.example.com/articles/?limit=0", parsedLink{}, false},
		{"https://api.example.com/articles/?limit=20&offset=4x", parsedLink{}, false},
		{"https://api.example.com/articles/?limit=20&offset=40&tag=go", parsedLink{}, false},
		{"https://api.example.com/list/?limit=20", parsedLink{}, false},
	}
	for _, tt := range tests {
		got, ok := parseLink(tt.in)
		if ok != tt.ok || got != tt.want {
			t.Errorf("parseLink(%q) = %+v, %v, want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}

func TestSlugProblem(t *testing.T) {
	tests := []struct {
		slug string
		want string // part of the problem; "" for none
	}{
		{"hello-world", ""},
		{"статья", ""},
		{"with space", ""},
		{"Capital", ""},
		{"a.b", ""},
		{"emoji-😀", ""},
		{"_draft", "start with _ or ."},
		{".hidden", "start with _ or ."},
		{"..", "start with _ or ."},
		{"a%20b", "percent-encoded"},
		{"a?b", "'?'"},
		{"a\\b", `'\\'`},
		{"a:b", "':'"},
		{"a*b", "'*'"},
		{"a\tb", `'\t'`},
		{"a\u2028b", `'\u2028'`},
		{"trailing ", "ends in a space"},
		{"CON", "device name"},
		{"lpt1.txt", "device name"},
		{"console", ""},
		{strings.Repeat("x", 252), ""},
		{strings.Repeat("x", 253), "longer than a file name"},
	}
	for _, tt := range tests {
		got := slugProblem(tt.slug)
		if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
			t.Errorf("slugProblem(%q) = %q, want %q", tt.slug, got, tt.want)
		}
	}
}

func TestKeyOf(t *testing.T) {
	tests := []struct{ url, want string }{
		{"https://www.example.com/authors/ivan-petrov/", "ivan-petrov"},
		{"https://www.example.com/authors/ivan-petrov", "ivan-petrov"},
		{"https://john.example.org/about/", "about"},
		{"https://q.example.org/profile?id=5", "profile"},
		{"//people.example.com/x/", "x"},
		{"https://www.example.com/authors/%D0%B5%D0%B6/", "еж"},
		{"https://www.example.com/authors/ёжик/", "ёжик"},
		{"https://root.example.org", ""},
		{"https://root.example.org/", ""},
		{"https://guest.example.org/~writer", ""},
		{"https://www.example.com/authors/smiley-😀/", ""},
		{"https://www.example.com/authors/a b/", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := keyOf(tt.url); got != tt.want {
			t.Errorf("keyOf(%q) = %q, want %q", tt.url, got, tt.want)
		}
	}
}

// TestAuthors checks how authors are keyed: by the last segment of the
// profile URL, relative under site_url; of two pairs with one key, the one
// with more articles takes it, and the other stays inline, as do pairs
// without a name or a key.
func TestAuthors(t *testing.T) {
	by := func(name, url string) func(a *content.Article) {
		return func(a *content.Article) { a.AuthorName, a.AuthorURL = name, url }
	}
	arts := listingOf(
		art(1, by("Ivan", "https://www.example.com/a/ivan/")),
		art(2, by("Ivan", "https://www.example.com/a/ivan/")),
		art(3, by("Ivan P.", "https://other.example.org/people/ivan")),
		art(4, by("", "https://www.example.com/a/nobody/")),
		art(5, by("Root", "https://root.example.org")),
		art(6, by("Ext", "https://ext.example.org/about/")),
	)
	d := &dynamic{def: 20, max: 100, articles: fixed(arts...)}
	s, err := Import(context.Background(), Options{URL: d.start(t), Now: func() time.Time { return refuseNow }, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := string(s.Files[configName])
	for _, want := range []string{
		"\n  about: {name: \"Ext\", url: \"https://ext.example.org/about/\"}\n",
		"\n  ivan: {name: \"Ivan\", url: \"/a/ivan/\"}\n",
	} {
		if !strings.Contains(cfg, want) {
			t.Errorf("config.yaml has no line %q:\n%s", want, cfg)
		}
	}
	if s.Authors != 2 || s.InlineAuthors != 3 {
		t.Errorf("got %d authors and %d inline, want 2 and 3", s.Authors, s.InlineAuthors)
	}
	for path, want := range map[string]string{
		"content/news/politics/article-1.md": "\nauthor: ivan\n",
		"content/news/politics/article-3.md": "\nauthor_name: \"Ivan P.\"\nauthor_url: \"https://other.example.org/people/ivan\"\n",
		"content/news/politics/article-4.md": "\nauthor_name: \"\"\n",
		"content/news/politics/article-5.md": "\nauthor_name: \"Root\"\n",
	} {
		if !strings.Contains(string(s.Files[path]), want) {
			t.Errorf("%s has no %q:\n%s", path, want, s.Files[path])
		}
	}
}

func TestWrite(t *testing.T) {
	s := &Site{Files: map[string][]byte{"config.yaml": []byte("x\n"), "content/a/b/c.md": []byte("---\n")}}
	base := t.TempDir()

	dir := filepath.Join(base, "new", "site")
	if err := s.Write(dir); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "content", "a", "b", "c.md")); err != nil || string(got) != "---\n" {
		t.Errorf("got %q, %v, want the article", got, err)
	}

	empty := filepath.Join(base, "empty")
	if err := os.Mkdir(empty, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(empty); err != nil {
		t.Errorf("an empty folder: %v", err)
	}

	err := s.Write(dir)
	if err == nil || !strings.Contains(err.Error(), "is not empty") {
		t.Errorf("a folder with files: got %v, want it refused", err)
	}
	left, _ := filepath.Glob(filepath.Join(base, "*", ".*import*"))
	left2, _ := filepath.Glob(filepath.Join(base, ".*import*"))
	if len(left)+len(left2) > 0 {
		t.Errorf("left behind: %q %q", left, left2)
	}
}

// FuzzIsKey: isKey says what the regexp it replaces said.
func FuzzIsKey(f *testing.F) {
	re := regexp.MustCompile(`^[\p{L}\p{N}][\p{L}\p{N}._~-]*$`)
	for _, s := range []string{"", "ivan", "ivan-petrov", "-ivan", "иван.петров", "j~d_2", "Ⅻ", "a b", "a/b", "a\xffb", "٣", "_"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := isKey(s), re.MatchString(s); got != want {
			t.Errorf("isKey(%q) = %v, the regexp says %v", s, got, want)
		}
	})
}
