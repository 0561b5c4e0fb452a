package folder

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

func TestRelate(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"site/content/news", "site/public", "other"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "site/content"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("loop", filepath.Join(dir, "loop")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a, b string
		want Relation
	}{
		{"site/content", "site/content", Same},
		{"site/content/", "site/./content", Same},
		{"link", "site/content", Same},
		{"link/news", "site/content", Inside},
		{"link/not/yet", "site/content", Inside},
		{"site/content/new", "site/content", Inside},
		{"site", "site/content", Holds},
		{".", "site/content", Holds},
		{"site/public", "site/content", Apart},
		{"site/contents", "site/content", Apart},
		{"other", "link", Apart},
		{"/", "site", Holds},
		// The link before "..": link is site/content, so link/../public
		// is site/public, whatever the text says.
		{"link/../public", "site/public", Same},
		{"link/../content/news", "site/content", Inside},
		{"link/../new/x", "site", Inside},
	}
	t.Chdir(dir)
	for _, tt := range tests {
		got, err := Relate(tt.a, tt.b)
		if err != nil || got != tt.want {
			t.Errorf("Relate(%q, %q) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if _, err := Relate("loop/x", "site"); err == nil {
		t.Error("a loop of links: no error")
	}
}

// TestRelateBindMount: a folder mounted a second time (mount --bind) is
// the folder it shows, whatever its name: the names alone say apart. Not
// root, it runs as root of its own user and mount namespaces.
func TestRelateBindMount(t *testing.T) {
	if testfiles.InMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	for _, d := range []string{"site/content/news", "site/public", "mnt"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	testfiles.BindMount(t, "site/content", "bound")     // the content folder
	testfiles.BindMount(t, "site", "mnt/site")          // a folder above it
	testfiles.BindMount(t, "site/content/news", "news") // a folder below it
	tests := []struct {
		a, b string
		want Relation
	}{
		{"bound", "site/content", Same},
		{"site/content", "bound", Same},
		{"bound/news", "site/content", Inside},
		{"bound/not/yet", "site/content", Inside},
		{"bound/new", "site/content/new", Same},
		{"bound/new/x", "site/content/new", Inside},
		{"site/content", "bound/news", Holds},
		{"mnt/site/content", "bound", Same},
		{"mnt/site", "bound", Holds},
		{"mnt/site/public", "site/content", Apart},
		{"mnt/site/public", "site/public", Same},
		// Mounted from below: its parents on the disk are not its
		// parents by path.
		{"news", "site/content", Inside},
		{"news/x", "bound", Inside},
		{"site/content", "news", Holds},
		{"news", "site/public", Apart},
	}
	for _, tt := range tests {
		got, err := Relate(tt.a, tt.b)
		if err != nil || got != tt.want {
			t.Errorf("Relate(%q, %q) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
		}
	}
	if r, err := ByName("bound", "site/content"); err != nil || r != Apart {
		t.Errorf("ByName(bound, site/content) = %v, %v; want Apart: the names do not show it", r, err)
	}
}

// TestLocatorReadsMountsOnce: a Locator reads the mount table when it is
// made and never again, however many folders it relates, and relates them
// as Relate does.
func TestLocatorReadsMountsOnce(t *testing.T) {
	dir := t.TempDir()
	for _, d := range []string{"site/public/articles", "bucket/articles/a", "bucket/articles/b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "site/public/articles"), filepath.Join(dir, "bucket/articles/c")); err != nil {
		t.Fatal(err)
	}
	reads := 0
	l, err := newLocator(filepath.Join(dir, "site/public"), func() []mount {
		reads++
		return mountTable()
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		a    string
		want Relation
	}{
		{"bucket/articles/a", Apart},
		{"bucket/articles/b", Apart},
		{"bucket/articles/c", Inside},
		{"bucket/articles/c/new", Inside},
		{"site/public", Same},
		{"site", Holds},
	} {
		for range 10 {
			got, err := l.Relate(filepath.Join(dir, tt.a))
			if err != nil || got != tt.want {
				t.Fatalf("Relate(%q) = %v, %v; want %v", tt.a, got, err, tt.want)
			}
		}
	}
	// A folder's place from its parent's: a stat call.
	parent, err := l.Locate(filepath.Join(dir, "site"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		name string
		ok   bool
		want Relation
	}{
		{"public", true, Same},
		{"content", false, Apart}, // not there
	} {
		pl, ok := l.Child(parent, tt.name)
		if ok != tt.ok || ok && l.RelatePlace(pl) != tt.want {
			t.Errorf("Child(site, %q) = %v, %v; want %v, %v", tt.name, l.RelatePlace(pl), ok, tt.want, tt.ok)
		}
	}
	articles, err := l.Locate(filepath.Join(dir, "bucket/articles"))
	if err != nil {
		t.Fatal(err)
	}
	if pl, ok := l.Child(articles, "a"); !ok || l.RelatePlace(pl) != Apart || pl.Real() != filepath.Join(articles.Real(), "a") {
		t.Errorf("Child(bucket/articles, a) = %q, %v, %v; want apart", pl.Real(), l.RelatePlace(pl), ok)
	}
	if _, ok := l.Child(articles, "c"); ok {
		t.Error("Child(bucket/articles, c): a link, taken as a folder")
	}
	if reads != 1 {
		t.Errorf("the mount table was read %d times, want once", reads)
	}
}

// BenchmarkRelate compares a Relate of each folder with a Locator made
// once: the mount table and the target's place are not read again.
func BenchmarkRelate(b *testing.B) {
	dir := b.TempDir()
	a := filepath.Join(dir, "bucket/articles/2024/news")
	to := filepath.Join(dir, "site/public")
	for _, d := range []string{a, to} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("Relate", func(b *testing.B) {
		for b.Loop() {
			if _, err := Relate(a, to); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Locator", func(b *testing.B) {
		l, err := NewLocator(to)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			if _, err := l.Relate(a); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("Child", func(b *testing.B) {
		l, err := NewLocator(to)
		if err != nil {
			b.Fatal(err)
		}
		parent, err := l.Locate(filepath.Dir(a))
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			pl, ok := l.Child(parent, filepath.Base(a))
			if !ok || l.RelatePlace(pl) != Apart {
				b.Fatal("not apart")
			}
		}
	})
}

// TestMountsInside checks the mount points a Locator finds inside its
// folder: only those strictly inside it, each once.
func TestMountsInside(t *testing.T) {
	dir := t.TempDir()
	content, err := Real(filepath.Join(dir, "content"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(content, 0o755); err != nil {
		t.Fatal(err)
	}
	table := []mount{
		{dev: "0:1", root: "/", point: "/"},
		{dev: "0:2", root: "/x", point: content},
		{dev: "0:2", root: "/x", point: content + "/news"},
		{dev: "0:2", root: "/y", point: content + "/news"},
		{dev: "0:2", root: "/x", point: content + "x/news"},
		{dev: "0:2", root: "/x", point: filepath.Join(dir, "bound")},
	}
	l, err := newLocator(content, func() []mount { return table })
	if err != nil {
		t.Fatal(err)
	}
	if got, want := l.MountsInside(), []string{content + "/news"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}
