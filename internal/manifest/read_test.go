package manifest

import (
	"os"
	"path/filepath"
	"testing"
)

// TestSameFile checks the stat comparison that tells a new manifest from
// the one read: want says the two differ.
func TestSameFile(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a"), filepath.Join(dir, "b")
	os.WriteFile(a, []byte("1"), 0o644)
	os.WriteFile(b, []byte("12"), 0o644)
	ia, _ := os.Stat(a)
	ib, _ := os.Stat(b)
	ia2, _ := os.Stat(a)
	tests := []struct {
		name string
		x, y os.FileInfo
		want bool
	}{
		{"same", ia, ia2, false},
		{"other file", ia, ib, true},
		{"appeared", nil, ia, true},
		{"vanished", ia, nil, true},
		{"neither", nil, nil, false},
	}
	for _, tt := range tests {
		if got := !SameFile(tt.x, tt.y); got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, got, tt.want)
		}
	}
}
