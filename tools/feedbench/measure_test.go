package main

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

func TestMedian(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{"none", nil, 0},
		{"one", []time.Duration{5 * ms}, 5 * ms},
		{"odd unsorted", []time.Duration{9 * ms, 1 * ms, 5 * ms}, 5 * ms},
		{"even", []time.Duration{4 * ms, 1 * ms, 2 * ms, 3 * ms}, 2500 * time.Microsecond},
		{"duplicates", []time.Duration{7 * ms, 7 * ms, 1 * ms, 7 * ms, 100 * ms}, 7 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := append([]time.Duration(nil), tt.in...)
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
			if !reflect.DeepEqual(in, tt.in) {
				t.Errorf("median reordered its argument: %v", tt.in)
			}
		})
	}
}

func TestFormatBytes(t *testing.T) {
	tests := []struct {
		n    int64
		want string
	}{
		{0, "0 B"},
		{999, "999 B"},
		{1000, "1.0 kB"},
		{1536, "1.5 kB"},
		{999_949, "999.9 kB"},
		{1_000_000, "1.0 MB"},
		{281_300_000, "281.3 MB"},
		{1_000_000_000, "1.00 GB"},
		{2_400_000_000, "2.40 GB"},
	}
	for _, tt := range tests {
		if got := formatBytes(tt.n); got != tt.want {
			t.Errorf("formatBytes(%d) = %q, want %q", tt.n, got, tt.want)
		}
	}
}

func TestFormatSeconds(t *testing.T) {
	tests := []struct {
		d    time.Duration
		want string
	}{
		{0, "0.000s"},
		{812 * time.Millisecond, "0.812s"},
		{1500 * time.Microsecond, "0.002s"},
		{8 * time.Second, "8.000s"},
	}
	for _, tt := range tests {
		if got := formatSeconds(tt.d); got != tt.want {
			t.Errorf("formatSeconds(%v) = %q, want %q", tt.d, got, tt.want)
		}
	}
}

func TestRatio(t *testing.T) {
	if got := ratio(3*time.Second, 2*time.Second); got != 1.5 {
		t.Errorf("ratio(3s, 2s) = %v, want 1.5", got)
	}
	if got := ratio(time.Second, 0); got <= targetColdOverCopy {
		t.Errorf("ratio(1s, 0) = %v, want infinite", got)
	}
}

func TestExpectedPages(t *testing.T) {
	tests := []struct {
		n, limit int
		offsets  string
		want     int
	}{
		{0, 20, "all", 1},
		{0, 20, "aligned", 1},
		{1, 20, "all", 1},
		{10_000, 20, "all", 10_000},
		{10_000, 20, "aligned", 500},
		{10_001, 20, "aligned", 501},
		{100_000, 100, "aligned", 1000},
		{19, 20, "aligned", 1},
	}
	for _, tt := range tests {
		if got := expectedPages(tt.n, tt.limit, tt.offsets); got != tt.want {
			t.Errorf("expectedPages(%d, %d, %s) = %d, want %d", tt.n, tt.limit, tt.offsets, got, tt.want)
		}
	}
}

func TestSnapshotDiff(t *testing.T) {
	past := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   []string
	}{
		{"unchanged", func(t *testing.T, dir string) {}, nil},
		{"read only", func(t *testing.T, dir string) {
			if _, err := os.ReadFile(filepath.Join(dir, "a.json")); err != nil {
				t.Fatal(err)
			}
		}, nil},
		{"rewritten with the same bytes", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "a.json"), "aaaa")
		}, []string{"a.json"}},
		{"touched", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "sub", "c.json")
			if err := os.Chtimes(p, past, past.Add(time.Nanosecond)); err != nil {
				t.Fatal(err)
			}
		}, []string{"sub/c.json"}},
		{"same mtime, other size", func(t *testing.T, dir string) {
			p := filepath.Join(dir, "b.json")
			testfiles.WriteFile(t, p, "bbbbbb")
			if err := os.Chtimes(p, past, past); err != nil {
				t.Fatal(err)
			}
		}, []string{"b.json"}},
		{"added and removed", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "sub", "new.json"), "n")
			if err := os.Remove(filepath.Join(dir, "b.json")); err != nil {
				t.Fatal(err)
			}
		}, []string{"b.json", "sub/new.json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, data := range map[string]string{"a.json": "aaaa", "b.json": "bb", "sub/c.json": "c"} {
				p = filepath.Join(dir, filepath.FromSlash(p))
				testfiles.WriteFile(t, p, data)
				if err := os.Chtimes(p, past, past); err != nil {
					t.Fatal(err)
				}
			}
			before, err := snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if len(before) != 3 {
				t.Fatalf("snapshot has %d files, want 3", len(before))
			}
			tt.change(t, dir)
			after, err := snapshot(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got := diff(before, after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("diff = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestSnapshotMissing(t *testing.T) {
	if _, err := snapshot(filepath.Join(t.TempDir(), "nope")); err == nil {
		t.Error("snapshot of a missing folder succeeded")
	}
}

func TestStatTree(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  treeStats
	}{
		{"empty", nil, treeStats{}},
		{"flat", map[string]string{"a": "12345", "b": ""}, treeStats{files: 2, bytes: 5}},
		{"nested", map[string]string{"x/y/z.json": "abc", "x/w.json": "de", "v.json": "f"}, treeStats{files: 3, bytes: 6}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, data := range tt.files {
				testfiles.WriteFile(t, filepath.Join(dir, filepath.FromSlash(p)), data)
			}
			got, err := statTree(dir)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("statTree = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestRunProcess(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	ctx := context.Background()
	m, err := run(ctx, t.TempDir(), "sh", "-c", "exit 0")
	if err != nil {
		t.Fatal(err)
	}
	if m.wall <= 0 {
		t.Errorf("wall = %v, want > 0", m.wall)
	}
	// A child that keeps a core busy for a while has a CPU time.
	m, err = run(ctx, t.TempDir(), "sh", "-c", "i=0; while [ $i -lt 100000 ]; do i=$((i+1)); done")
	if err != nil {
		t.Fatal(err)
	}
	if m.cpu <= 0 {
		t.Errorf("cpu = %v after a busy loop of %v, want > 0", m.cpu, m.wall)
	}
	_, err = run(ctx, t.TempDir(), "sh", "-c", "echo 'content/x.md:3: bad date' >&2; exit 1")
	var pe *processError
	if !errors.As(err, &pe) {
		t.Fatalf("err = %v, want a processError", err)
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("err = %v, want exit status 1", err)
	}
	if !strings.Contains(err.Error(), "content/x.md:3: bad date") {
		t.Errorf("error %q does not carry the child's stderr", err)
	}
}
