// Package scaffold starts a site and its articles (feedgen new): the
// files a new user edits, valid from the first build.
package scaffold

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
)

// siteConfig is the config.yaml of a new site.
const siteConfig = `# feedgen configuration: every key is in https://github.com/feedgen/feedgen/blob/main/docs/configuration.md

# Public web site: article URLs are {site_url}/{section}/{section_slug}/{slug}/.
site_url: https://www.example.com

# Where /articles/ is served: the next/previous links start with it.
base_url: https://api.example.com

# The time zone of published times.
timezone: UTC

# Sections are the first URL segment; inside each, <section_slug>: display name.
sections:
  news:
    general: General

# Authors that articles name with author: <key>.
authors:
  editor: {name: The Editor, url: /authors/editor/}

# Filtered listings: any of section, category, tag, author.
filters: [section, category, tag, author]

# Chunks: each article stored once per listing, every limit up to max_limit
# answered at every offset, put together per request by feedgen serve, or by
# nginx with njs, Cloudflare or Netlify (feedgen rules nginx-njs|cloudflare|netlify).
# The output grows with the articles: about 0.9 GB at 100,000, and one new
# article publishes a few chunks. A plain file server (feedgen rules
# nginx|caddy|apache|cloudfront) needs layout: pages, a file per page:
# feedgen rules says which keys to set for it.
pagination:
  default_limit: 20
  max_limit: 100
  layout: chunks

content_dir: content
output_dir: public
`

// gitignore keeps out of version control the build and the record of
// the folders feedgen rules wrote (rules.RecordsName), which names this
// machine's folders.
const gitignore = "/public/\n/.feedgen-rules.json\n"

// Site writes a new site into dir, which must be empty or not exist:
// config.yaml, .gitignore and one article published at now. It returns
// the files it wrote.
func Site(dir string, now time.Time) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("reading %s: %w", dir, err)
	}
	if len(entries) > 0 {
		return nil, fmt.Errorf("%s is not empty: a new site goes into an empty or new folder", dir)
	}
	files := []struct{ name, data string }{
		{"config.yaml", siteConfig},
		{".gitignore", gitignore},
		{filepath.Join("content", "news", "general", "hello-world.md"), article(1, "Hello, world", now.UTC(), "editor", nil, false)},
	}
	var written []string
	for _, f := range files {
		p := filepath.Join(dir, f.name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return written, fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
		}
		if err := os.WriteFile(p, []byte(f.data), 0o644); err != nil {
			return written, fmt.Errorf("writing %s: %w", p, err)
		}
		written = append(written, p)
	}
	return written, nil
}

// article returns the markdown of an article.
func article(id int64, title string, published time.Time, author string, tags []string, draft bool) string {
	var b strings.Builder
	quoted := make([]string, 0, len(tags))
	for _, t := range tags {
		if t = strings.TrimSpace(t); t != "" {
			quoted = append(quoted, strconv.Quote(t))
		}
	}
	fmt.Fprintf(&b, "---\nid: %d\ntitle: %q\npublished: %s\nauthor: %s\ntags: [%s]\n", id, title, published.Format(content.PublishedLayout), author, strings.Join(quoted, ", "))
	if draft {
		b.WriteString("draft: true  # left out of the build until removed (feedgen build -D shows drafts)\n")
	}
	b.WriteString("---\nThe first paragraph is the announcement, unless the front matter sets one.\n\nThe rest of the article.\n")
	return b.String()
}

// validSlug reports whether s may name a new article: lowercase letters
// and digits in words joined by single -, as most sites write URLs.
func validSlug(s string) bool {
	if s == "" || s[0] == '-' || s[len(s)-1] == '-' || strings.Contains(s, "--") {
		return false
	}
	return strings.Trim(s, "abcdefghijklmnopqrstuvwxyz0123456789-") == ""
}

// NewArticle is what feedgen new article is told of the article to write.
type NewArticle struct {
	Path   string   // SECTION/CATEGORY/SLUG
	Title  string   // "" for one made from the slug (TitleOf)
	Author string   // a key of the config's authors; "" for the first by key
	Tags   []string // none for an empty list
}

// Written is what Article wrote.
type Written struct {
	Path   string // the file
	Author string // the key of its author
	// Chosen says that Author was not given but taken: the first key of
	// the config's authors.
	Chosen bool

	note string // Note's
}

// Note says, when the author was not given, which Article took and how
// to choose another: a line for the user; "" when the author was given.
func (w Written) Note() string { return w.note }

// chosenNote is the Note of an article whose author, not given, was
// taken: author, the first of the authors of cfg by key.
func chosenNote(cfg *config.Config, author string) string {
	others := slices.DeleteFunc(sortedKeys(cfg.Authors), func(k string) bool { return k == author })
	how := fmt.Sprintf("for another, feedgen new article --author KEY (%s)", strings.Join(others, ", "))
	if len(others) == 0 {
		how = fmt.Sprintf("add others under authors in %s to choose one with --author KEY", cfg.Path)
	}
	return fmt.Sprintf("author: %s (%s), the first of the authors in %s: %s", author, cfg.Authors[author].Name, cfg.Path, how)
}

// Article writes a new draft article at a.Path (SECTION/CATEGORY/SLUG) in
// the content folder of the site cfg, with the next free id and published
// at now in the site's time zone. The section and category must be in the
// config, and the author, when given, among its authors.
func Article(ctx context.Context, cfg *config.Config, a NewArticle, now time.Time) (Written, error) {
	spec := a.Path
	parts := strings.Split(strings.TrimSuffix(spec, ".md"), "/")
	if len(parts) != 3 {
		return Written{}, fmt.Errorf("%q: want SECTION/CATEGORY/SLUG, e.g. news/politics/budget-vote", spec)
	}
	section, category, slug := parts[0], parts[1], parts[2]
	cats, ok := cfg.Sections[section]
	if !ok {
		return Written{}, fmt.Errorf("no section %q in %s: add %s: {%s: %s} under sections (the sections are %s)",
			section, cfg.Path, section, category, TitleOf(category), strings.Join(sortedKeys(cfg.Sections), ", "))
	}
	if _, ok := cats[category]; !ok {
		return Written{}, fmt.Errorf("no category %q in section %s of %s: add %s: %s under sections.%s (its categories are %s)",
			category, section, cfg.Path, category, TitleOf(category), section, strings.Join(sortedKeys(cats), ", "))
	}
	if !validSlug(slug) {
		return Written{}, fmt.Errorf("slug %q: use lowercase letters, digits and -, e.g. budget-vote", slug)
	}
	if len(cfg.Authors) == 0 {
		return Written{}, fmt.Errorf("no authors in %s: add one, e.g. authors: {editor: {name: The Editor, url: /authors/editor/}}", cfg.Path)
	}
	w := Written{Author: a.Author}
	if w.Author == "" {
		w.Author, w.Chosen = sortedKeys(cfg.Authors)[0], true
		w.note = chosenNote(cfg, w.Author)
	} else if _, ok := cfg.Authors[w.Author]; !ok {
		return Written{}, fmt.Errorf("no author %q in %s: the authors are %s; or add %s: {name: NAME, url: /authors/%s/} under authors",
			w.Author, cfg.Path, strings.Join(sortedKeys(cfg.Authors), ", "), w.Author, w.Author)
	}
	title := a.Title
	if strings.TrimSpace(title) == "" {
		title = TitleOf(slug)
	}
	// Without a content folder yet, this is the first article: it makes it.
	var id int64
	if _, err := os.Stat(cfg.ContentDir); !errors.Is(err, fs.ErrNotExist) {
		site, err := content.NewLoader(cfg).Load(ctx, content.DirFS(cfg.ContentDir), content.Options{Now: now, Future: true, Drafts: true, Root: cfg.ContentDir})
		if err != nil {
			return Written{}, fmt.Errorf("reading the articles for the next free id: %w", err)
		}
		for _, a := range site.Articles {
			id = max(id, a.ID)
		}
	}
	p := filepath.Join(cfg.ContentDir, section, category, slug+".md")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return Written{}, fmt.Errorf("creating %s: %w", filepath.Dir(p), err)
	}
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, fs.ErrExist) {
		return Written{}, fmt.Errorf("%s exists: choose another slug", p)
	}
	if err != nil {
		return Written{}, fmt.Errorf("writing %s: %w", p, err)
	}
	_, err = f.WriteString(article(id+1, title, now.In(cfg.Location), w.Author, a.Tags, true))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(p)
		return Written{}, fmt.Errorf("writing %s: %w", p, err)
	}
	w.Path = p
	return w, nil
}

// TitleOf returns the title of a new article from its slug, as Hugo
// makes one, but in sentence case, as news sites write headlines: its
// words (joined by - or _) with spaces between, the first letter upper
// case: my-great-story is "My great story".
func TitleOf(slug string) string {
	t := strings.TrimSpace(strings.Join(strings.FieldsFunc(slug, func(r rune) bool { return r == '-' || r == '_' }), " "))
	if t == "" {
		return t
	}
	r, n := utf8.DecodeRuneInString(t)
	return string(unicode.ToUpper(r)) + t[n:]
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// A Completion is a value the shell may complete an argument to, and
// what it is.
type Completion struct {
	Value, About string
}

// ArticlePaths completes typed, the start of new article's
// SECTION/CATEGORY/SLUG, from the sections of cfg: a section ("news/"),
// then a category of it ("news/general/"), each as far as the next /;
// nothing once the slug is being typed, which is new.
func ArticlePaths(cfg *config.Config, typed string) []Completion {
	var out []Completion
	section, category, inSection := strings.Cut(typed, "/")
	switch {
	case !inSection:
		for _, s := range sortedKeys(cfg.Sections) {
			if strings.HasPrefix(s, typed) {
				out = append(out, Completion{s + "/", "categories: " + strings.Join(sortedKeys(cfg.Sections[s]), ", ")})
			}
		}
	case !strings.Contains(category, "/"):
		cats := cfg.Sections[section]
		for _, c := range sortedKeys(cats) {
			if strings.HasPrefix(c, category) {
				out = append(out, Completion{section + "/" + c + "/", cats[c]})
			}
		}
	}
	return out
}
