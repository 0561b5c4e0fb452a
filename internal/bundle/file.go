package bundle

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/outfile"
)

// WriteFile writes the bundle of the build in the folder dir to the file
// name (feedgen bundle), atomically (see atomicfile): synced and renamed
// over name once it is whole; on any error name is left as it was and no
// temporary file is.
func WriteFile(ctx context.Context, name, dir string, opt Options) (*Result, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("opening output folder: %w", err)
	}
	defer root.Close()
	var res *Result
	err = writeFileAtomic(name, func(w io.Writer) error {
		var err error
		res, err = Write(ctx, w, outfile.RootFS(root, dir), opt)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return res, nil
}

// Inside reports whether the file name would be inside the folder dir,
// symbolic links resolved: a bundle of dir must not be.
func Inside(name, dir string) (bool, error) {
	d, err := realPath(dir)
	if err != nil {
		return false, fmt.Errorf("opening output folder: %w", err)
	}
	f, err := realPath(filepath.Dir(name))
	if err != nil {
		return false, fmt.Errorf("writing bundle: %w", err)
	}
	rel, err := filepath.Rel(d, filepath.Join(f, filepath.Base(name)))
	if err != nil {
		return false, nil
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// realPath returns the absolute path of p with symbolic links resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// writeFileAtomic writes name through write, atomically (see atomicfile).
func writeFileAtomic(name string, write func(io.Writer) error) error {
	f, err := atomicfile.Create(name, 0o644)
	if err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	defer f.Abort()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	return nil
}
