package testfiles

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	Write(t, dir, map[string]string{
		"a.txt":         "a",
		"deep/er/b.txt": "b",
		"deep/c.txt":    "",
	})
	Write(t, dir, map[string][]byte{"deep/er/b.txt": []byte("b2")}) // replaced
	for name, want := range map[string]string{"a.txt": "a", "deep/er/b.txt": "b2", "deep/c.txt": ""} {
		got, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != want {
			t.Errorf("%s: got %q, want %q", name, got, want)
		}
		info, err := os.Stat(filepath.Join(dir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		if !info.Mode().IsRegular() {
			t.Errorf("%s: mode %v, want a regular file", name, info.Mode())
		}
	}
}

func TestWriteFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "x", "y", "z.json")
	WriteFile(t, name, "{}")
	WriteFile(t, name, []byte("[]"))
	if got, err := os.ReadFile(name); err != nil || string(got) != "[]" {
		t.Errorf("got %q, %v; want the second write, []", got, err)
	}
}

// fatalTB records a Fatal and stops the goroutine, as testing.T does.
type fatalTB struct {
	testing.TB
	failed bool
}

func (f *fatalTB) Helper() {}

func (f *fatalTB) Fatal(args ...any) {
	f.failed = true
	runtime.Goexit()
}

func (f *fatalTB) Fatalf(format string, args ...any) {
	f.failed = true
	runtime.Goexit()
}

// fails runs write with a TB whose Fatal is recorded, and reports whether
// it was called.
func fails(write func(t testing.TB)) bool {
	f := &fatalTB{}
	done := make(chan struct{})
	go func() {
		defer close(done)
		write(f)
	}()
	<-done
	return f.failed
}

func TestFailures(t *testing.T) {
	dir := t.TempDir()
	WriteFile(t, filepath.Join(dir, "file"), "x")
	for name, write := range map[string]func(t testing.TB){
		"outside the folder":  func(tb testing.TB) { Write(tb, dir, map[string]string{"../escape": "x"}) },
		"absolute":            func(tb testing.TB) { Write(tb, dir, map[string]string{"/abs": "x"}) },
		"the folder itself":   func(tb testing.TB) { Write(tb, dir, map[string]string{".": "x"}) },
		"not clean":           func(tb testing.TB) { Write(tb, dir, map[string]string{"a//b": "x"}) },
		"a file on the way":   func(tb testing.TB) { WriteFile(tb, filepath.Join(dir, "file", "below"), "x") },
		"a folder in the way": func(tb testing.TB) { WriteFile(tb, dir, "x") },
	} {
		if !fails(write) {
			t.Errorf("%s: no Fatal", name)
		}
	}
	if _, err := os.Stat(filepath.Join(filepath.Dir(dir), "escape")); err == nil {
		t.Errorf("a file was written outside the folder")
	}
}

// TestReplace replaces a file that a reader holds open: the reader keeps
// the old bytes, the name has the new, and no temporary file is left.
func TestReplace(t *testing.T) {
	dir := t.TempDir()
	name := filepath.Join(dir, "page.json")
	WriteFile(t, name, "old")
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	Replace(t, name, []byte("new"))
	if b, _ := io.ReadAll(f); string(b) != "old" {
		t.Errorf("the open file reads %q, want the old bytes", b)
	}
	if b, _ := os.ReadFile(name); string(b) != "new" {
		t.Errorf("the file is %q, want the new bytes", b)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("the folder holds %d files, want 1", len(entries))
	}
}
