package atomicfile

import (
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// tmpName is the first temporary name of the file name in dir.
func tmpName(dir, name string) string {
	return filepath.Join(dir, "."+name+"."+strconv.Itoa(os.Getpid())+"-0.tmp")
}

// stream writes data through Create, then commits when commit is set and
// aborts otherwise.
func stream(name string, data []byte, commit bool) error {
	f, err := Create(name, 0o644)
	if err != nil {
		return err
	}
	defer f.Abort()
	if _, err := f.Write(data); err != nil {
		return err
	}
	if !commit {
		return nil
	}
	return f.Commit()
}

func TestWrite(t *testing.T) {
	type state map[string]string // file -> bytes; "/" for a folder
	tests := []struct {
		name    string
		before  state
		write   func(dir string) error
		wantErr bool
		after   state
	}{{
		name:  "WriteFile new file",
		write: func(dir string) error { return WriteFile(filepath.Join(dir, "a.json"), []byte("new"), 0o644) },
		after: state{"a.json": "new"},
	}, {
		name:   "WriteFile over a file",
		before: state{"a.json": "old"},
		write:  func(dir string) error { return WriteFile(filepath.Join(dir, "a.json"), []byte("new"), 0o644) },
		after:  state{"a.json": "new"},
	}, {
		name:   "WriteFile empty",
		before: state{"a.json": "old"},
		write:  func(dir string) error { return WriteFile(filepath.Join(dir, "a.json"), nil, 0o644) },
		after:  state{"a.json": ""},
	}, {
		name:    "WriteFile over a folder fails",
		before:  state{"a.json": "/", "a.json/x": "old"},
		write:   func(dir string) error { return WriteFile(filepath.Join(dir, "a.json"), []byte("new"), 0o644) },
		wantErr: true,
		after:   state{"a.json": "/", "a.json/x": "old"},
	}, {
		name:    "WriteFile in a missing folder fails",
		before:  state{"a.json": "old"},
		write:   func(dir string) error { return WriteFile(filepath.Join(dir, "no", "a.json"), []byte("new"), 0o644) },
		wantErr: true,
		after:   state{"a.json": "old"},
	}, {
		name:   "WriteFile skips a taken temporary name",
		before: state{"a.json": "old", tmpName("", "a.json"): "other"},
		write:  func(dir string) error { return WriteFile(filepath.Join(dir, "a.json"), []byte("new"), 0o644) },
		after:  state{"a.json": "new", tmpName("", "a.json"): "other"},
	}, {
		name:  "Commit new file",
		write: func(dir string) error { return stream(filepath.Join(dir, "b.zip"), []byte("new"), true) },
		after: state{"b.zip": "new"},
	}, {
		name:   "Commit over a file",
		before: state{"b.zip": "old"},
		write:  func(dir string) error { return stream(filepath.Join(dir, "b.zip"), []byte("new"), true) },
		after:  state{"b.zip": "new"},
	}, {
		name:   "CommitUnsynced over a file, from ReadFrom",
		before: state{"b.zip": "old"},
		write: func(dir string) error {
			f, err := Create(filepath.Join(dir, "b.zip"), 0o644)
			if err != nil {
				return err
			}
			defer f.Abort()
			if _, err := f.ReadFrom(strings.NewReader("new")); err != nil {
				return err
			}
			return f.CommitUnsynced()
		},
		after: state{"b.zip": "new"},
	}, {
		name:   "CommitUnsynced over a folder fails",
		before: state{"b.zip": "/", "b.zip/x": "old"},
		write: func(dir string) error {
			f, err := Create(filepath.Join(dir, "b.zip"), 0o644)
			if err != nil {
				return err
			}
			f.Write([]byte("new"))
			return f.CommitUnsynced()
		},
		wantErr: true,
		after:   state{"b.zip": "/", "b.zip/x": "old"},
	}, {
		name:   "Abort",
		before: state{"b.zip": "old"},
		write:  func(dir string) error { return stream(filepath.Join(dir, "b.zip"), []byte("new"), false) },
		after:  state{"b.zip": "old"},
	}, {
		name:    "Commit over a folder fails",
		before:  state{"b.zip": "/", "b.zip/x": "old"},
		write:   func(dir string) error { return stream(filepath.Join(dir, "b.zip"), []byte("new"), true) },
		wantErr: true,
		after:   state{"b.zip": "/", "b.zip/x": "old"},
	}, {
		name:   "Commit twice",
		before: state{"b.zip": "old"},
		write: func(dir string) error {
			f, err := Create(filepath.Join(dir, "b.zip"), 0o644)
			if err != nil {
				return err
			}
			f.Write([]byte("new"))
			if err := f.Commit(); err != nil {
				return err
			}
			f.Abort() // does nothing after Commit
			return f.Commit()
		},
		wantErr: true,
		after:   state{"b.zip": "new"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, name := range slices.Sorted(maps.Keys(tt.before)) {
				p := filepath.Join(dir, name)
				var err error
				if tt.before[name] == "/" {
					err = os.Mkdir(p, 0o755)
				} else {
					err = os.WriteFile(p, []byte(tt.before[name]), 0o644)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			err := tt.write(dir)
			if (err != nil) != tt.wantErr {
				t.Fatalf("error %v, want error: %t", err, tt.wantErr)
			}
			got := state{}
			filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err != nil || p == dir {
					return err
				}
				rel, _ := filepath.Rel(dir, p)
				if d.IsDir() {
					got[rel] = "/"
					return nil
				}
				data, err := os.ReadFile(p)
				got[rel] = string(data)
				return err
			})
			if !maps.Equal(got, tt.after) {
				t.Errorf("folder holds %q, want %q", got, tt.after)
			}
		})
	}
}

func TestPerm(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name  string
		write func(name string) error
	}{
		{"WriteFile", func(name string) error { return WriteFile(name, []byte("x"), 0o600) }},
		{"Create", func(name string) error {
			f, err := Create(name, 0o600)
			if err != nil {
				return err
			}
			return f.Commit()
		}},
	} {
		name := filepath.Join(dir, tt.name)
		if err := tt.write(name); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(name)
		if err != nil {
			t.Fatal(err)
		}
		if perm := info.Mode().Perm(); perm != 0o600 {
			t.Errorf("%s: mode %v, want 0600", tt.name, perm)
		}
	}
}

func TestCommitAfterAbort(t *testing.T) {
	f, err := Create(filepath.Join(t.TempDir(), "a"), 0o644)
	if err != nil {
		t.Fatal(err)
	}
	f.Abort()
	if err := f.Commit(); !errors.Is(err, os.ErrClosed) {
		t.Errorf("Commit after Abort: %v, want %v", err, os.ErrClosed)
	}
}
