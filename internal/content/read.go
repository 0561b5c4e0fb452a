package content

import (
	"io/fs"
	"os"
	"time"
)

// DirFS returns the content folder dir on disk as a file system for
// Loader.Load. It is os.DirFS, whose files Load reads with fewer system
// calls, taking each file's size and modification time from the same open
// file as its bytes.
func DirFS(dir string) fs.FS {
	return dirFS{FS: os.DirFS(dir), dir: dir}
}

type dirFS struct {
	fs.FS
	dir string
}

// stamp is what tells a file's version apart: size and modification time
// and, where the system tells them, the file's identity (inode) and its
// change time, which a copy that keeps the modification time (cp -p, a
// folder replaced by another) cannot keep. The zero stamp is unknown.
type stamp struct {
	size int64
	mod  int64 // modification time: see knownMod; 0 is unknown
	id   fileID
}

// modTime returns the mod of a stamp for t: 0 for the zero time.
func modTime(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return knownMod(t.UnixNano())
}

// knownMod returns the mod of a stamp for a modification time of ns
// nanoseconds since 1970: ns, but 1 for 0 (touch -d @0, archives), which
// is known. A file changed from one to the other also changes its change
// time (fileID), where the system tells it.
func knownMod(ns int64) int64 {
	if ns == 0 {
		return 1
	}
	return ns
}

// readFile returns the bytes of the file name in fsys and their stamp
// (for a cache: of a caching Loader, or of a build, see WriteCache). The
// bytes may be read into buf, reused by the caller: a build reads
// thousands of files, and fresh memory costs more than reading.
func readFile(fsys fs.FS, name string, buf []byte) ([]byte, stamp, error) {
	if d, ok := fsys.(dirFS); ok && fs.ValidPath(name) {
		return readDirFile(d.dir+"/"+name, buf)
	}
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return data, stamp{}, err
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return data, stamp{}, nil // read, but unknown: read again next time
	}
	return data, stamp{info.Size(), modTime(info.ModTime()), idOf(info)}, nil
}

// statFile returns the stamp of the file name in fsys, following links.
func statFile(fsys fs.FS, name string) (stamp, error) {
	if d, ok := fsys.(dirFS); ok && fs.ValidPath(name) {
		return statDirFile(d.dir + "/" + name)
	}
	info, err := fs.Stat(fsys, name)
	if err != nil {
		return stamp{}, err
	}
	return stamp{info.Size(), modTime(info.ModTime()), idOf(info)}, nil
}
