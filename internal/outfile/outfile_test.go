package outfile

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// within fails the test when f has not returned in 5 s: an open that
// blocks (on a named pipe no writer opens) would hang the test.
func within(t *testing.T, what string, f func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- f() }()
	select {
	case err := <-done:
		return err
	case <-time.After(5 * time.Second):
		t.Fatalf("%s: still blocked after 5 s", what)
		return nil
	}
}

func TestRefused(t *testing.T) {
	dir := t.TempDir()
	testfiles.Write(t, dir, map[string]string{"manifest.json": "{}", "articles/index.json": "[]"})
	testfiles.FIFO(t, filepath.Join(dir, "articles/pipe.json"))
	if err := os.Symlink("pipe.json", filepath.Join(dir, "articles/link.json")); err != nil {
		t.Fatal(err)
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	// dir is named "public" in messages, as a user names it.
	fsyss := map[string]fs.FS{"DirFS": DirFS(dir), "RootFS": RootFS(root, "public")}
	for _, name := range []string{"pipe.json", "link.json"} {
		want := filepath.Join(dir, "articles", name) + " is not a regular file (a named pipe): remove it and run feedgen build --clean"
		err := within(t, "Open", func() error { _, err := Open(filepath.Join(dir, "articles", name)); return err })
		if err == nil || err.Error() != want || !errors.Is(err, ErrNotRegular) {
			t.Errorf("Open(%s) = %v, want %q", name, err, want)
		}
		err = within(t, "ReadFile", func() error { _, err := ReadFile(filepath.Join(dir, "articles", name)); return err })
		if err == nil || err.Error() != want {
			t.Errorf("ReadFile(%s) = %v, want %q", name, err, want)
		}
		for fname, fsys := range fsyss {
			err = within(t, fname, func() error { _, err := fs.ReadFile(fsys, "articles/"+name); return err })
			want := filepath.Join(dir, "articles", name)
			if fname == "RootFS" {
				want = filepath.Join("public", "articles", name)
			}
			want += " is not a regular file (a named pipe): remove it and run feedgen build --clean"
			if err == nil || err.Error() != want {
				t.Errorf("%s: ReadFile(%s) = %v, want %q", fname, name, err, want)
			}
		}
	}
	// What is a regular file or a folder is read as always.
	for fname, fsys := range fsyss {
		if data, err := fs.ReadFile(fsys, "manifest.json"); err != nil || string(data) != "{}" {
			t.Errorf("%s: manifest.json = %q, %v", fname, data, err)
		}
		if entries, err := fs.ReadDir(fsys, "articles"); err != nil || len(entries) != 3 {
			t.Errorf("%s: ReadDir(articles) = %v, %v", fname, entries, err)
		}
		if info, err := fs.Stat(fsys, "articles/pipe.json"); err != nil || info.Mode().Type() != fs.ModeNamedPipe {
			t.Errorf("%s: Stat(pipe) = %v, %v", fname, info, err)
		}
		if _, err := fsys.Open("../x"); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("%s: Open(../x) = %v, want fs.ErrInvalid", fname, err)
		}
		if _, err := fsys.Open("missing.json"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s: Open(missing.json) = %v, want fs.ErrNotExist", fname, err)
		}
	}
	if data, err := ReadFile(filepath.Join(dir, "articles/index.json")); err != nil || string(data) != "[]" {
		t.Errorf("ReadFile(index.json) = %q, %v", data, err)
	}
	if _, err := Open(filepath.Join(dir, "articles")); err == nil || err.Error() != filepath.Join(dir, "articles")+" is not a regular file (a folder): remove it and run feedgen build --clean" {
		t.Errorf("Open(a folder) = %v", err)
	}
}

func TestReadFileSizes(t *testing.T) {
	dir := t.TempDir()
	for _, n := range []int{0, 1, 511, 512, 513, 70000} {
		data := make([]byte, n)
		for i := range data {
			data[i] = byte(i)
		}
		name := filepath.Join(dir, "f")
		testfiles.WriteFile(t, name, data)
		got, err := ReadFile(name)
		if err != nil || string(got) != string(data) {
			t.Errorf("%d bytes: got %d bytes, %v", n, len(got), err)
		}
	}
}
