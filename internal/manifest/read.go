package manifest

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// ErrNoBuild is the error of Read on a folder without a manifest.
var ErrNoBuild = errors.New("no build here (no " + Name + "): run feedgen build first")

// Snapshot is a manifest as read from an output folder.
type Snapshot struct {
	*Manifest
	Data []byte      // the file's bytes
	Info fs.FileInfo // the file's stat when it was read
}

// Read reads and parses the manifest of the build in fsys: ErrNoBuild when
// there is none.
func Read(fsys fs.FS) (*Snapshot, error) {
	f, err := fsys.Open(Name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNoBuild
	}
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	m, err := Parse(data)
	if err != nil {
		return nil, err
	}
	return &Snapshot{Manifest: m, Data: data, Info: info}, nil
}

// Current reports whether the manifest file whose stat is now is still the
// one s was read from: the same file, size and modification time. A build
// replaces its manifest by a rename, so any new one is another file.
func (s *Snapshot) Current(now fs.FileInfo) bool {
	return s != nil && SameFile(s.Info, now)
}

// SameFile reports whether two stat results describe the same file with
// the same size and modification time; two nil ones do too (no file).
func SameFile(a, b fs.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}
