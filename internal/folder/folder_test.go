package folder

import (
	"os"
	"path/filepath"
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
