package manifest

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/outfile"
)

// ErrNoBuild is the error of Read on a folder without a manifest.
var ErrNoBuild = errors.New("no build here (no " + Name + "): run feedgen build first")

// Snapshot is a manifest as read from an output folder.
type Snapshot struct {
	*Manifest
	Data []byte      // the file's bytes
	Info fs.FileInfo // the file's stat when it was read
	// Unmatched are the indexes of a manifest of the chunks layout whose
	// files did not match it, so that the chunks they name are not in
	// Files (see Expand): a build is being written, or died.
	Unmatched []string
}

// Read reads and parses the manifest of the build in fsys: ErrNoBuild when
// there is none. An output folder is read through outfile.DirFS or
// RootFS, which never open what is not a regular file. The chunks of a build of the chunks layout are read
// from its indexes (see Expand).
func Read(fsys fs.FS) (*Snapshot, error) {
	return ReadContext(context.Background(), fsys)
}

// ReadContext is Read, which stops when ctx is done: a build of a million
// collections has as many indexes to read.
func ReadContext(ctx context.Context, fsys fs.FS) (*Snapshot, error) {
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
	if err := outfile.Check(Name, info.Mode()); err != nil {
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
	s := &Snapshot{Manifest: m, Data: data, Info: info}
	if s.Unmatched, err = m.ExpandContext(ctx, fsys); err != nil {
		return nil, err
	}
	return s, nil
}

// Expand adds to the Files of a manifest of the chunks layout, as its
// file lists them (its indexes: see Marshal), the chunks that those
// indexes name, read from fsys: each index is checked against the size
// and SHA-256 the manifest gives it, and each chunk it names becomes a
// File of the size the index gives and the SHA-256 its name gives.
// Files stay sorted by path. An index that does not match the manifest
// (a build is being written, or died; or it is not a regular file, which
// a build replaces) names no chunk: its path is returned in unmatched. A manifest of the pages layout is left as it is.
func (m *Manifest) Expand(fsys fs.FS) (unmatched []string, err error) {
	return m.ExpandContext(context.Background(), fsys)
}

// ExpandContext is Expand, which stops when ctx is done.
func (m *Manifest) ExpandContext(ctx context.Context, fsys fs.FS) (unmatched []string, err error) {
	l := layout.Of(m.Pagination)
	if !l.Has(layout.Index) {
		return nil, nil
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		seen[f.Path] = true
	}
	var buf []byte
	for _, f := range slices.Clone(m.Files) {
		if k := layout.Classify(f.Path); !k.Names() || !l.Has(k) || f.Size > MaxPageSize {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		data, err := ReadPage(fsys, f, buf)
		var mm *Mismatch
		switch {
		case errors.As(err, &mm):
			unmatched = append(unmatched, f.Path)
			continue
		case err != nil:
			return nil, err
		}
		buf = data[:0]
		ix, err := chunk.ParseIndex(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, r := range ix.Chunks {
			if seen[r.Path] {
				continue
			}
			seen[r.Path] = true
			sum, _ := chunk.ParseChunkPath(r.Path)
			m.Files = append(m.Files, File{Path: r.Path, Size: int64(r.Size), SHA256: hex.EncodeToString(sum[:])})
		}
	}
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return unmatched, nil
}

// Complete returns an error when an index did not match the manifest
// (see Unmatched): the output is not the build the manifest describes.
func (s *Snapshot) Complete() error {
	if len(s.Unmatched) == 0 {
		return nil
	}
	return &Mismatch{Path: s.Unmatched[0], Reason: "does not match " + Name + " (a build is being written, or died: run feedgen build)"}
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
