package importer

import (
	"context"

	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/feedgen/feedgen/internal/pool"
)

// CheckDir returns an error unless dir is a folder that an import may be
// written into: one that does not exist, or an empty one.
func CheckDir(dir string) error {
	f, err := os.Open(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	names, err := f.Readdirnames(1)
	switch {
	case err == io.EOF:
		return nil
	case err != nil:
		return fmt.Errorf("%s: %w", dir, err)
	case len(names) > 0:
		return fmt.Errorf("%s is not empty: import into a new or empty folder", dir)
	}
	return nil
}

// Write writes the site's files into dir, which must not exist or be
// empty: all of them or, on an error, none. They are written into a
// folder beside dir, which then takes its place.
func (s *Site) Write(dir string) error {
	if err := CheckDir(dir); err != nil {
		return err
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return err
	}
	parent := filepath.Dir(abs)
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(abs)+".import-")
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			os.RemoveAll(tmp)
		}
	}()
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	names := slices.Sorted(maps.Keys(s.Files))
	made := map[string]bool{}
	// content/, also for a listing without articles: a build needs it.
	if err := os.Mkdir(filepath.Join(tmp, "content"), 0o755); err != nil {
		return err
	}
	for _, p := range names {
		if d := filepath.Dir(filepath.Join(tmp, filepath.FromSlash(p))); !made[d] {
			if err := os.MkdirAll(d, 0o755); err != nil {
				return err
			}
			made[d] = true
		}
	}
	// Files are written a few at a time: creating one is a few system
	// calls, and a site has thousands.
	err = pool.Each(context.Background(), len(names), 8, func(_ context.Context, i int) error {
		p := names[i]
		return os.WriteFile(filepath.Join(tmp, filepath.FromSlash(p)), s.Files[p], 0o644)
	})
	if err != nil {
		return err
	}
	// An empty dir is replaced: removed, then the new folder renamed to it.
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s: %w", dir, err)
	}
	if err := os.Rename(tmp, abs); err != nil {
		return err
	}
	done = true
	return nil
}
