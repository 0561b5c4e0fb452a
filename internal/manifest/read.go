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
	// unread is why the first of Unmatched that has the bytes the
	// manifest (or its root) gives is not an index this feedgen reads
	// (an older feedgen's build: chunk.FormatError); nil when none.
	unread error
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
	if s.Unmatched, s.unread, err = m.expand(ctx, fsys); err != nil {
		return nil, err
	}
	return s, nil
}

// Expand adds to the Files of a manifest of the chunks layout, as its
// file lists them (its indexes' roots: see Marshal), the leaves those
// roots name and the chunks those leaves name, read from fsys: each root
// is checked against the size and SHA-256 the manifest gives it, each
// leaf against those its root gives, and each file named becomes a File
// of the size its namer gives and the SHA-256 its name gives. Files stay
// sorted by path. A root or leaf that does not match (a build is being
// written, or died; or it is not a regular file, which a build replaces),
// or that is not an index of this format (chunk.IndexFormat: an older
// feedgen's build, which a build rewrites whole) names nothing: its path
// is returned in unmatched. A manifest of the
// pages layout is left as it is.
func (m *Manifest) Expand(fsys fs.FS) (unmatched []string, err error) {
	return m.ExpandContext(context.Background(), fsys)
}

// ExpandContext is Expand, which stops when ctx is done.
func (m *Manifest) ExpandContext(ctx context.Context, fsys fs.FS) (unmatched []string, err error) {
	unmatched, _, err = m.expand(ctx, fsys)
	return unmatched, err
}

// expand is ExpandContext, which also returns why the first file of
// unmatched that has the bytes it should is not an index this feedgen
// reads (nil when none).
func (m *Manifest) expand(ctx context.Context, fsys fs.FS) (unmatched []string, unread, err error) {
	l := layout.Of(m.Pagination)
	if !l.Has(layout.Index) {
		return nil, nil, nil
	}
	seen := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		seen[f.Path] = true
	}
	// Each root names leaves, each leaf chunks: a queue of the files
	// that name others, read once each (leaves are shared by the roots
	// of collections that hold the same chunks).
	var buf []byte
	queue := slices.DeleteFunc(slices.Clone(m.Files), func(f File) bool {
		k := layout.Classify(f.Path)
		return !k.Names() || !l.Has(k) || f.Size > MaxPageSize
	})
	prefetch(fsys, queue)
	for len(queue) > 0 {
		f := queue[0]
		queue = queue[1:]
		if err := ctx.Err(); err != nil {
			return nil, nil, err
		}
		data, err := ReadPage(fsys, f, buf)
		var mm *Mismatch
		switch {
		case errors.As(err, &mm):
			unmatched = append(unmatched, f.Path)
			continue
		case err != nil:
			return nil, nil, err
		}
		buf = data[:0]
		named, err := NamedBy(f.Path, data)
		if err != nil {
			// The manifest's bytes, but not an index of this format (an
			// older feedgen's build): what it names is not known either.
			unmatched = append(unmatched, f.Path)
			if unread == nil {
				unread = fmt.Errorf("%s: %w", f.Path, err)
			}
			continue
		}
		queued := len(queue)
		for _, n := range named {
			if seen[n.Path] {
				continue
			}
			seen[n.Path] = true
			m.Files = append(m.Files, n)
			if layout.Classify(n.Path).Names() && n.Size <= MaxPageSize {
				queue = append(queue, n)
			}
		}
		prefetch(fsys, queue[queued:])
	}
	slices.SortFunc(m.Files, func(a, b File) int { return strings.Compare(a.Path, b.Path) })
	return unmatched, unread, nil
}

// A Prefetcher is a file system that can start reading files before they
// are opened, such as a bucket's, where a read waits for an answer:
// Expand tells it the indexes it is about to read, in the order it will.
type Prefetcher interface {
	Prefetch(names []string)
}

// prefetch tells fsys, when it is a Prefetcher, that files are to be read.
func prefetch(fsys fs.FS, files []File) {
	p, ok := fsys.(Prefetcher)
	if !ok || len(files) == 0 {
		return
	}
	names := make([]string, len(files))
	for i, f := range files {
		names[i] = f.Path
	}
	p.Prefetch(names)
}

// Complete returns an error when an index did not match the manifest
// (see Unmatched): the output is not the build the manifest describes.
// It is a *Mismatch (a build is being written, or died), but for an
// index that has the manifest's bytes and is not one this feedgen reads
// (an older feedgen's build, chunk.FormatError: the error says to
// rebuild), which comes first.
func (s *Snapshot) Complete() error {
	if len(s.Unmatched) == 0 {
		return nil
	}
	if s.unread != nil {
		return s.unread
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

// NamedBy returns the files the file at p, whose bytes are data, names:
// an index's root its leaves, a leaf its chunks; each of the size it
// gives and the SHA-256 its name gives.
func NamedBy(p string, data []byte) ([]File, error) {
	var out []File
	if layout.Classify(p) == layout.Leaf {
		l, err := chunk.ParseLeaf(data)
		if err != nil {
			return nil, err
		}
		out = make([]File, 0, len(l.Chunks))
		for _, r := range l.Chunks {
			// A slice of the path (ParseLeaf checked it): a leaf names
			// hundreds of chunks, a build hundreds of thousands.
			h, _ := chunk.ChunkHex(r.Path)
			out = append(out, File{Path: r.Path, Size: int64(r.Size), SHA256: h})
		}
		return out, nil
	}
	r, err := chunk.ParseRoot(data)
	if err != nil {
		return nil, err
	}
	for _, l := range r.Leaves {
		sum, _ := chunk.ParseLeafPath(l.Path)
		out = append(out, File{Path: l.Path, Size: int64(l.Size), SHA256: hex.EncodeToString(sum[:])})
	}
	return out, nil
}
