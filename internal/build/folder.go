package build

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/outfile"
)

// exists reports whether name exists.
func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// makeDirs creates the folders of pages under outDir, calling made after
// each; it stops when ctx is done: a site of a million collections has
// as many folders, which take many seconds to make.
func makeDirs(ctx context.Context, outDir string, paths []string, made func()) error {
	dirs := map[string]bool{}
	for i, p := range paths {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		dirs[path.Dir(p)] = true
	}
	for d := range dirs {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := os.MkdirAll(filepath.Join(outDir, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("creating output folder: %w", err)
		}
		made()
	}
	return nil
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
