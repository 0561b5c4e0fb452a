package manifest

import "testing"

func TestCheckPath(t *testing.T) {
	for _, name := range []string{"articles/20/0.json", "manifest.json", "a/b/", "статьи/1.json"} {
		if msg := CheckPath(name); msg != "" {
			t.Errorf("CheckPath(%q) = %q, want ok", name, msg)
		}
	}
	for _, name := range []string{"", "/x", "../x", "a/../b", "a/..", `a\b`, "c:x", "a//b", "./a", "a/.", "a\x00b", "a\nb", "\xff"} {
		if msg := CheckPath(name); msg == "" {
			t.Errorf("CheckPath(%q) = ok, want a problem", name)
		}
	}
}
