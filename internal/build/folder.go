package build

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/listing"
)

// exists reports whether name exists.
func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// sizeIs reports whether name is a regular file of size bytes: how a
// build checks that a page a manifest lists is still there, whole.
func sizeIs(name string, size int64) bool {
	info, err := os.Stat(name)
	return err == nil && info.Mode().IsRegular() && info.Size() == size
}

// makeDirs creates the folders of pages under outDir.
func makeDirs(outDir string, pages []feed.Page) error {
	dirs := map[string]bool{}
	for _, pg := range pages {
		dirs[path.Dir(pg.Path)] = true
	}
	for d := range dirs {
		if err := os.MkdirAll(filepath.Join(outDir, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("creating output folder: %w", err)
		}
	}
	return nil
}

// strays lists the files under outDir/articles that are not in keep (paths
// relative to outDir), and the folders there that hold no page of keep,
// parents first: those that may be left empty.
func strays(outDir string, keep map[string]bool) (files, dirs []string, err error) {
	used := map[string]bool{}
	for p := range keep {
		for d := path.Dir(p); d != "." && !used[d]; d = path.Dir(d) {
			used[d] = true
		}
	}
	root := filepath.Join(outDir, listing.Dir)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			if rel, err := filepath.Rel(outDir, p); err != nil || !used[filepath.ToSlash(rel)] {
				dirs = append(dirs, p)
			}
			return nil
		}
		rel, err := filepath.Rel(outDir, p)
		if err != nil {
			return err
		}
		if !keep[filepath.ToSlash(rel)] {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cleaning output folder: %w", err)
	}
	return files, dirs, nil
}

// remove deletes files, then the folders of dirs that are left empty, and
// returns how many files it deleted that were pages, not temporary files.
func remove(files, dirs []string) (int, error) {
	deleted := 0
	for _, p := range files {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return deleted, fmt.Errorf("deleting stale page: %w", err)
		}
		if !strings.HasSuffix(p, ".tmp") {
			deleted++
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, unless empty
	}
	return deleted, nil
}

// removeEmptyDirs removes the folders of dirs (slash-separated, inside
// outDir) that are empty, and then their parents that become empty, up
// to the listing's folder: a collection whose pages are all deleted
// leaves no folder behind.
func removeEmptyDirs(outDir string, dirs map[string]bool) {
	list := make([]string, 0, len(dirs))
	for d := range dirs {
		list = append(list, d)
	}
	// Deepest first, so that a parent is tried after its children.
	slices.SortFunc(list, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range list {
		for ; strings.HasPrefix(d, listing.Dir+"/"); d = path.Dir(d) {
			if os.Remove(filepath.Join(outDir, filepath.FromSlash(d))) != nil {
				break // not empty
			}
		}
	}
}
