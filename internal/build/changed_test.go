package build

import (
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestRecheckedMoved checks when a build that read pages because of their
// times writes its manifest again: only when it read some, and none of
// them changed since it read them (the next build must read that one
// again); one deleted since does not matter (any build sees it missing).
func TestRecheckedMoved(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, name string)
		none   bool // no file read
		want   bool
	}{
		{name: "none read", none: true, want: false},
		{name: "unchanged", want: true},
		{name: "rewritten since", want: false, change: func(t *testing.T, name string) {
			after(t, name)
			testfiles.WriteFile(t, name, "page")
		}},
		{name: "replaced since", want: false, change: func(t *testing.T, name string) {
			testfiles.Replace(t, name, "page")
		}},
		{name: "status changed since", want: false, change: func(t *testing.T, name string) {
			after(t, name)
			if err := os.Chmod(name, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{name: "deleted since", want: true, change: func(t *testing.T, name string) {
			if err := os.Remove(name); err != nil {
				t.Fatal(err)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			var r rechecked
			for _, p := range []string{"a.json", "b.json"} {
				name := filepath.Join(dir, p)
				testfiles.WriteFile(t, name, "page")
				info, err := os.Stat(name)
				if err != nil {
					t.Fatal(err)
				}
				if !tt.none {
					r.add(name, info)
				}
			}
			if tt.change != nil {
				tt.change(t, filepath.Join(dir, "b.json"))
			}
			if got := r.moved(); got != tt.want {
				t.Errorf("moved() = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestSettle checks that a settled manifest's status change time is
// later than that of the pages written just before it, as a build
// writes them (createNew; writeAtomic where it cannot).
func TestSettle(t *testing.T) {
	dir := t.TempDir()
	for i := range 20 {
		page, m := filepath.Join(dir, strconv.Itoa(i)+".json"), filepath.Join(dir, "manifest.json")
		if !createNew(page, []byte("page"), nil) {
			if err := writeAtomic(page, []byte("page")); err != nil {
				t.Fatal(err)
			}
		}
		if err := writeAtomic(m, []byte("manifest")); err != nil {
			t.Fatal(err)
		}
		settle(m)
		pi, err := os.Stat(page)
		if err != nil {
			t.Fatal(err)
		}
		mi, err := os.Stat(m)
		if err != nil {
			t.Fatal(err)
		}
		if changedSince(pi, mi) {
			t.Fatalf("page %d, written before the settled manifest, counts as changed since it", i)
		}
	}
}
