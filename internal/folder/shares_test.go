package folder

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestShares: a folder shares files with another when Relate says so,
// and also through a folder mounted inside the other (mount --bind)
// under a name whose parents are not the other's. Not root, it runs as
// root of its own user and mount namespaces.
func TestShares(t *testing.T) {
	if testfiles.InMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	for _, d := range []string{"site/content/news", "site/public", "srv/x/y", "site/content/x"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	t.Chdir(dir)
	testfiles.BindMount(t, "srv/x", "site/content/x") // srv/x is seen inside the content folder
	mount, err := Real("site/content/x")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLocator("site/content")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		a     string
		rel   Relation
		mount string
	}{
		{"site/content", Same, ""},
		{"site/content/news", Inside, ""},
		{"site", Holds, ""},
		{"site/public", Apart, ""},
		{"srv/x", Same, mount},
		{"srv/x/y", Inside, mount},
		{"srv/x/new", Inside, mount},
		{"srv", Holds, mount},
		{"srv/z", Apart, ""},
	}
	for _, tt := range tests {
		rel, m, err := l.Shares(tt.a)
		if err != nil || rel != tt.rel || m != tt.mount {
			t.Errorf("Shares(%q) = %v, %q, %v; want %v, %q", tt.a, rel, m, err, tt.rel, tt.mount)
		}
		if got, err := l.Relate(tt.a); tt.mount != "" && (err != nil || got != Apart) {
			t.Errorf("Relate(%q) = %v, %v: want Apart, the case Shares is for", tt.a, got, err)
		}
	}
}
