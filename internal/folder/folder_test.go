package folder

import (
	"os"
	"path/filepath"
	"testing"
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
