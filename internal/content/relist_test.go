package content

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"
)

// article returns the file of an article of news/politics with id and
// title.
func article(id int, title string) string {
	return strings.Replace(strings.Replace(good, "id: 1", fmt.Sprintf("id: %d", id), 1), "Hello", title, 1)
}

// TestRelistMatchesWalk makes changes to a content folder, each reported
// as a watcher reports it, and checks that a caching Loader, which walks
// the folder again only when a change is not a plain article file, loads
// what a new Loader loads from a walk: the same articles, errors and
// warnings.
func TestRelistMatchesWalk(t *testing.T) {
	dir := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	remove := func(name string) {
		t.Helper()
		if err := os.RemoveAll(filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 6 {
		write(fmt.Sprintf("news/politics/a%d.md", i), article(10+i, fmt.Sprintf("Article %d", i)))
	}
	write("news/sport/s.md", article(30, "Sport"))
	l := NewLoader(testCfg(t))
	l.Cache = true
	if _, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now}); err == nil {
		t.Fatal("news/sport is no category of the config, and loaded")
	}
	remove("news/sport")
	if _, err := l.Load(context.Background(), os.DirFS(dir), Options{Now: now, Changed: []string{"news/sport"}}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name    string
		change  func()
		changed []string
		walk    bool // the folder is walked again
	}{
		{"an edited article", func() { write("news/politics/a2.md", article(12, "Edited")) }, []string{"news/politics/a2.md"}, false},
		{"a new article", func() { write("news/politics/b.md", article(20, "New")) }, []string{"news/politics/b.md"}, false},
		{"a new article first", func() { write("news/politics/0.md", article(21, "First")) }, []string{"news/politics/0.md"}, false},
		{"an article saved by an editor", func() {
			write("news/politics/.a3.md.swp", "x")
			write("news/politics/a3.md", article(13, "Saved"))
			remove("news/politics/.a3.md.swp")
		}, []string{"news/politics/.a3.md.swp", "news/politics/a3.md"}, false},
		{"a removed article", func() { remove("news/politics/a4.md") }, []string{"news/politics/a4.md"}, false},
		{"a file that is no article", func() { write("news/politics/notes.txt", "x") }, []string{"news/politics/notes.txt"}, false},
		{"an article with an error", func() { write("news/politics/bad.md", "---\nid: x\n---\n") }, []string{"news/politics/bad.md"}, false},
		{"the error mended", func() { write("news/politics/bad.md", article(22, "Mended")) }, []string{"news/politics/bad.md"}, false},
		{"an ignored article", func() { write("news/politics/_draft.md", article(23, "Ignored")) }, []string{"news/politics/_draft.md"}, false},
		{"an article out of place", func() { write("news/c.md", article(24, "Out")) }, []string{"news/c.md"}, true},
		{"out of place no more", func() { remove("news/c.md") }, []string{"news/c.md"}, true}, // the last walk found something wrong
		{"a new folder", func() { write("news/politics/more/d.md", article(25, "Deep")) }, []string{"news/politics/more", "news/politics/more/d.md"}, true},
		{"the folder removed", func() { remove("news/politics/more") }, []string{"news/politics/more"}, true},
		{"a link", func() {
			if err := os.Symlink("a1.md", filepath.Join(dir, "news", "politics", "link.md")); err != nil {
				t.Skip(err)
			}
		}, []string{"news/politics/link.md"}, true},
		{"the link removed", func() { remove("news/politics/link.md") }, []string{"news/politics/link.md"}, false},
		{"a category removed", func() { remove("news/politics") }, []string{"news/politics"}, false},
		{"a category again", func() { write("news/politics/f.md", article(27, "Again")) }, []string{"news/politics", "news/politics/f.md"}, true},
		{"a category replaced by a file", func() {
			remove("news/politics")
			write("news/politics", "x")
		}, []string{"news/politics"}, false},
		{"and back", func() {
			remove("news/politics")
			write("news/politics/e.md", article(26, "Back"))
		}, []string{"news/politics", "news/politics/e.md"}, true},
	} {
		tt.change()
		walks := l.walks
		got, gotErr := l.Load(context.Background(), os.DirFS(dir), Options{Now: now, Changed: tt.changed})
		want, wantErr := NewLoader(testCfg(t)).Load(context.Background(), os.DirFS(dir), Options{Now: now})
		if g, w := describeLoad(got, gotErr), describeLoad(want, wantErr); g != w {
			t.Errorf("%s: got\n%s\nwant\n%s", tt.name, g, w)
		}
		if walked := l.walks > walks; walked != tt.walk {
			t.Errorf("%s: walked the folder %v, want %v", tt.name, walked, tt.walk)
		}
	}
}

// describeLoad is what a Load gave: its articles in order, its warnings
// and its error.
func describeLoad(s *Site, err error) string {
	var b strings.Builder
	fmt.Fprintf(&b, "error: %v\n", err)
	if s == nil {
		return b.String()
	}
	for _, a := range s.Articles {
		fmt.Fprintf(&b, "%s %d %q %d\n", a.Path, a.ID, a.Title, a.Index)
	}
	fmt.Fprintf(&b, "warnings: %v\n", s.Warnings)
	return b.String()
}

// foldFS is a file system that finds a file by any case of its name, as
// macOS's and Windows's do by default; its folders list names as made.
type foldFS struct{ fstest.MapFS }

func (f foldFS) name(name string) string {
	for k := range f.MapFS {
		if strings.EqualFold(k, name) {
			return k
		}
	}
	return name
}

func (f foldFS) Open(name string) (fs.File, error)     { return f.MapFS.Open(f.name(name)) }
func (f foldFS) Stat(name string) (fs.FileInfo, error) { return f.MapFS.Stat(f.name(name)) }

// TestRelistCaseRenamed renames an article's file to another case of its
// name on a file system that ignores case: the watcher reports both
// names, both of which a stat finds; the article is loaded once, under
// its new name, as a walk loads it.
func TestRelistCaseRenamed(t *testing.T) {
	fsys := foldFS{fstest.MapFS{
		"news/politics/A.md": {Data: []byte(article(1, "Cased"))},
		"news/politics/b.md": {Data: []byte(article(2, "Other"))},
	}}
	l := NewLoader(testCfg(t))
	l.Cache = true
	if _, err := l.Load(context.Background(), fsys, Options{Now: now}); err != nil {
		t.Fatal(err)
	}
	fsys.MapFS["news/politics/a.md"] = fsys.MapFS["news/politics/A.md"]
	delete(fsys.MapFS, "news/politics/A.md")
	for range 2 { // and once more, after: nothing is left of the old name
		got, gotErr := l.Load(context.Background(), fsys, Options{Now: now, Changed: []string{"news/politics/A.md", "news/politics/a.md"}})
		want, wantErr := NewLoader(testCfg(t)).Load(context.Background(), fsys, Options{Now: now})
		if g, w := describeLoad(got, gotErr), describeLoad(want, wantErr); g != w {
			t.Fatalf("got\n%s\nwant\n%s", g, w)
		}
	}
}
