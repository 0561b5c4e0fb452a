package importer

import (
	"errors"
	"io"
	"io/fs"
	"path"
	"slices"
	"time"
)

// memFS is a read-only file system of files held in memory: the site
// being written, read back by the content loader before anything is on
// disk. Its files are the bytes of a map, by slash-separated path, not
// copied; its folders are those the paths go through.
type memFS struct {
	files map[string][]byte   // by path
	dirs  map[string][]string // by path, "." the root: the names in the folder, sorted
}

// newMemFS returns the file system of files, whose paths must be valid
// (fs.ValidPath). The map is the caller's: it must not change while the
// file system is in use.
func newMemFS(files map[string][]byte) *memFS {
	m := &memFS{files: files, dirs: map[string][]string{".": nil}}
	for p := range files {
		dir := path.Dir(p)
		m.addDir(dir)
		m.dirs[dir] = append(m.dirs[dir], path.Base(p))
	}
	for _, names := range m.dirs {
		slices.Sort(names)
	}
	return m
}

// addDir adds the folder dir, and those above it, unless known.
func (m *memFS) addDir(dir string) {
	if _, ok := m.dirs[dir]; ok {
		return
	}
	m.dirs[dir] = nil
	parent := path.Dir(dir)
	m.addDir(parent)
	m.dirs[parent] = append(m.dirs[parent], path.Base(dir))
}

// Open opens the file or folder name.
func (m *memFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := m.files[name]; ok {
		return &memFile{info: fileInfo{name: path.Base(name), size: int64(len(data))}, data: data}, nil
	}
	if names, ok := m.dirs[name]; ok {
		return &memDir{m: m, path: name, names: names}, nil
	}
	return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}

// ReadFile returns a copy of the bytes of the file name.
func (m *memFS) ReadFile(name string) ([]byte, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrInvalid}
	}
	if data, ok := m.files[name]; ok {
		return slices.Clone(data), nil
	}
	if _, ok := m.dirs[name]; ok {
		return nil, &fs.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	return nil, &fs.PathError{Op: "read", Path: name, Err: fs.ErrNotExist}
}

// ReadDir returns the entries of the folder name, sorted by name.
func (m *memFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrInvalid}
	}
	names, ok := m.dirs[name]
	if !ok {
		if _, ok := m.files[name]; ok {
			return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
		}
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrNotExist}
	}
	return m.entries(name, names), nil
}

// Stat describes the file or folder name.
func (m *memFS) Stat(name string) (fs.FileInfo, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrInvalid}
	}
	if info, ok := m.info(name); ok {
		return info, nil
	}
	return nil, &fs.PathError{Op: "stat", Path: name, Err: fs.ErrNotExist}
}

// info describes the file or folder at p.
func (m *memFS) info(p string) (fileInfo, bool) {
	if data, ok := m.files[p]; ok {
		return fileInfo{name: path.Base(p), size: int64(len(data))}, true
	}
	if _, ok := m.dirs[p]; ok {
		return fileInfo{name: path.Base(p), dir: true}, true
	}
	return fileInfo{}, false
}

// entries returns the entries of the folder dir, whose names are names.
func (m *memFS) entries(dir string, names []string) []fs.DirEntry {
	list := make([]fs.DirEntry, len(names))
	for i, n := range names {
		info, _ := m.info(path.Join(dir, n))
		list[i] = fs.FileInfoToDirEntry(info)
	}
	return list
}

var (
	errIsDir  = errors.New("is a directory")
	errNotDir = errors.New("not a directory")
)

// fileInfo describes a file (mode 0644) or a folder (0755) of a memFS;
// their modification time is unknown (zero), as in an archive without
// one.
type fileInfo struct {
	name string
	size int64
	dir  bool
}

func (i fileInfo) Name() string       { return i.name }
func (i fileInfo) Size() int64        { return i.size }
func (i fileInfo) ModTime() time.Time { return time.Time{} }
func (i fileInfo) IsDir() bool        { return i.dir }
func (i fileInfo) Sys() any           { return nil }

func (i fileInfo) Mode() fs.FileMode {
	if i.dir {
		return fs.ModeDir | 0o755
	}
	return 0o644
}

// memFile is a file of a memFS, open.
type memFile struct {
	info fileInfo
	data []byte
	off  int
}

func (f *memFile) Stat() (fs.FileInfo, error) { return f.info, nil }
func (f *memFile) Close() error               { return nil }

func (f *memFile) Read(b []byte) (int, error) {
	if f.off >= len(f.data) {
		return 0, io.EOF
	}
	n := copy(b, f.data[f.off:])
	f.off += n
	return n, nil
}

// memDir is a folder of a memFS, open.
type memDir struct {
	m     *memFS
	path  string
	names []string
	off   int // the entries ReadDir returned so far
}

func (d *memDir) Stat() (fs.FileInfo, error) {
	return fileInfo{name: path.Base(d.path), dir: true}, nil
}

func (d *memDir) Close() error { return nil }

func (d *memDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errIsDir}
}

// ReadDir returns the next n entries (all the rest for n <= 0).
func (d *memDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.names[d.off:]
	if n > 0 {
		if len(rest) == 0 {
			return nil, io.EOF
		}
		rest = rest[:min(n, len(rest))]
	}
	d.off += len(rest)
	return d.m.entries(d.path, rest), nil
}
