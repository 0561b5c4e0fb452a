// Package atomicfile replaces files atomically: the new bytes go to a
// temporary file in the same folder, which is then renamed over the file.
// Readers see the old file or the new one, never a part, and a write that
// fails leaves the old file as it was and no temporary file.
//
// The temporary file of NAME is .NAME.PID-N.tmp (PID the process's id, N
// the first number from 0 not taken): a process killed mid-write leaves
// such a file behind, and whoever owns the folder may delete any *.tmp in
// it. Errors are those of the os calls, which name the temporary file.
package atomicfile

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
)

// WriteFile writes data to name atomically, creating it with perm (before
// the umask) when it does not exist. Unlike Commit, it does not sync the
// data to the disk first: the file is whole for every reader, but a crash
// of the system soon after may leave it empty.
func WriteFile(name string, data []byte, perm fs.FileMode) error {
	f, tmp, err := createTemp(name, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	return finish(f, tmp, name, err, false)
}

// File is the new version of a file, written under a temporary name until
// Commit gives it the file's name.
type File struct {
	f    *os.File
	name string // the file to replace
	tmp  string
	done bool // committed or aborted
}

// Create starts a new version of the file name, created with perm (before
// the umask) when it does not exist. Write to it, then Commit, or Abort;
// a deferred Abort cleans up after any early return.
func Create(name string, perm fs.FileMode) (*File, error) {
	f, tmp, err := createTemp(name, perm)
	if err != nil {
		return nil, err
	}
	return &File{f: f, name: name, tmp: tmp}, nil
}

// createTemp creates the temporary file of name in its folder.
func createTemp(name string, perm fs.FileMode) (*os.File, string, error) {
	dir, base := filepath.Split(name)
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(try)+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		return f, tmp, err
	}
}

// Write writes p to the new version.
func (f *File) Write(p []byte) (int, error) { return f.f.Write(p) }

// ReadFrom writes what r holds to the new version, as io.Copy does, by
// the system's copy between files where it can.
func (f *File) ReadFrom(r io.Reader) (int64, error) { return f.f.ReadFrom(r) }

// Commit syncs the new version to the disk and renames it over the file.
// When it fails, the file is left as it was and the temporary file is
// removed. Abort after Commit does nothing.
func (f *File) Commit() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	return finish(f.f, f.tmp, f.name, nil, true)
}

// CommitUnsynced renames the new version over the file without syncing
// it first, as WriteFile: for a file whose loss in a crash of the system
// costs only time (a cache, which its reader checks). When it fails, the
// file is left as it was and the temporary file is removed.
func (f *File) CommitUnsynced() error {
	if f.done {
		return os.ErrClosed
	}
	f.done = true
	return finish(f.f, f.tmp, f.name, nil, false)
}

// Abort drops the new version: the file is left as it was and the
// temporary file is removed. It does nothing after Commit or Abort.
func (f *File) Abort() {
	if !f.done {
		f.done = true
		f.f.Close()
		os.Remove(f.tmp)
	}
}

// finish closes f, the temporary file tmp, and when err is nil renames it
// over name (after syncing it when sync is set); otherwise, or when that
// fails, it removes it. It returns err or the error that arose.
func finish(f *os.File, tmp, name string, err error, sync bool) error {
	if err == nil && sync {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
	}
	return err
}
