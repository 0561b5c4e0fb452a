package importer

import (
	"errors"
	"io"
	"io/fs"
	"testing"
	"testing/fstest"
)

func TestMemFS(t *testing.T) {
	files := map[string][]byte{
		"news/politics/a.md":  []byte("a"),
		"news/politics/b.md":  []byte("bb"),
		"news/economy/c.md":   []byte(""),
		"world/europe/deep/d": []byte("d"),
		"top.md":              []byte("top"),
	}
	m := newMemFS(files)
	if err := fstest.TestFS(m, "news/politics/a.md", "news/politics/b.md", "news/economy/c.md", "world/europe/deep/d", "top.md"); err != nil {
		t.Fatal(err)
	}

	// The bytes are the map's, not copied; ReadFile gives a copy.
	f, err := m.Open("news/politics/b.md")
	if err != nil {
		t.Fatal(err)
	}
	if mf, ok := f.(*memFile); !ok || &mf.data[0] != &files["news/politics/b.md"][0] {
		t.Errorf("the file's bytes are a copy of the map's")
	}
	data, err := fs.ReadFile(m, "news/politics/b.md")
	if err != nil {
		t.Fatal(err)
	}
	data[0] = 'x'
	if string(files["news/politics/b.md"]) != "bb" {
		t.Errorf("ReadFile's bytes are the map's: changing them changed the file")
	}

	var names []string
	if err := fs.WalkDir(m, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if _, isFile := files[p]; d.IsDir() == isFile {
			t.Errorf("%s: IsDir %v", p, d.IsDir())
		}
		names = append(names, p)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{".", "news", "news/economy", "news/economy/c.md", "news/politics", "news/politics/a.md", "news/politics/b.md",
		"top.md", "world", "world/europe", "world/europe/deep", "world/europe/deep/d"}
	if len(names) != len(want) {
		t.Fatalf("walked %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("walked %q, want %q", names, want)
		}
	}

	for _, tc := range []struct {
		name string
		err  error
	}{
		{"missing.md", fs.ErrNotExist},
		{"news/missing", fs.ErrNotExist},
		{"news/politics/a.md/x", fs.ErrNotExist},
		{"/news", fs.ErrInvalid},
		{"news/../top.md", fs.ErrInvalid},
		{"news/", fs.ErrInvalid},
	} {
		if _, err := m.Open(tc.name); !errors.Is(err, tc.err) {
			t.Errorf("Open(%q): %v, want %v", tc.name, err, tc.err)
		}
		if _, err := m.Stat(tc.name); !errors.Is(err, tc.err) {
			t.Errorf("Stat(%q): %v, want %v", tc.name, err, tc.err)
		}
		if _, err := m.ReadFile(tc.name); !errors.Is(err, tc.err) {
			t.Errorf("ReadFile(%q): %v, want %v", tc.name, err, tc.err)
		}
		if _, err := m.ReadDir(tc.name); !errors.Is(err, tc.err) {
			t.Errorf("ReadDir(%q): %v, want %v", tc.name, err, tc.err)
		}
	}
	if _, err := m.ReadDir("top.md"); err == nil {
		t.Errorf("ReadDir of a file: no error")
	}
	if _, err := m.ReadFile("news"); err == nil {
		t.Errorf("ReadFile of a folder: no error")
	}
	d, err := m.Open("news")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Read(make([]byte, 1)); err == nil || err == io.EOF {
		t.Errorf("Read of a folder: %v, want an error", err)
	}

	if err := fstest.TestFS(newMemFS(nil)); err != nil {
		t.Errorf("empty: %v", err)
	}
}
