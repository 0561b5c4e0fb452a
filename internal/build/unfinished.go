package build

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// unfinishedName is the marker (manifest.Unfinished) of a build that
// changed the output folder and has not written its manifest yet. A build
// creates it, durably, before its first change to the folder (a page
// written or deleted) and removes it once the manifest describes the
// folder again. A build that finds it knows that a build died mid-way
// (killed, out of space, a manifest it could not write): any page may
// hold that build's bytes, though its size and the input the manifest
// records say otherwise. It then trusts nothing the manifest says about
// the files: it takes no shortcut, renders every page and compares it
// with the bytes on disk, and deletes every file that is not a page of
// its own.
const unfinishedName = manifest.Unfinished

// markUnfinished creates the marker in dir, listing the pages the build
// may create (paths relative to dir, one a line after the first), and
// makes it durable before any page changes: a page can reach the disk
// before a marker that is not. A build that finds the marker may delete
// what it lists (see owned), as a build deletes what the manifest lists.
// A marker already there is replaced: the list given includes its own.
func markUnfinished(dir string, pages []string) error {
	name := filepath.Join(dir, unfinishedName)
	f, err := atomicfile.Create(name, 0o644)
	if err != nil {
		return fmt.Errorf("marking the build in %s: %w", dir, err)
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	w.WriteString("a feedgen build of this folder started and has not finished; the next build checks every page, and may delete the pages listed below\n")
	for _, p := range pages {
		w.WriteString(p)
		w.WriteByte('\n')
	}
	err = w.Flush()
	if err == nil {
		err = f.Commit()
	}
	if err == nil {
		err = syncDir(dir)
	}
	if err != nil {
		return fmt.Errorf("marking the build in %s: %w", dir, err)
	}
	return nil
}

// finished removes the marker of dir, if there is one, and the temporary
// manifest of a build killed while writing it.
func finished(dir string) error {
	if err := os.Remove(filepath.Join(dir, unfinishedName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("finishing the build in %s: %w", dir, err)
	}
	removeManifestTemps(dir)
	return nil
}

// removeManifestTemps deletes the temporary files of writes of the
// manifest and the marker that never finished (see atomicfile): with the
// folder's lock held, no other build is writing one.
func removeManifestTemps(dir string) {
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if target, ok := tempOf(e.Name()); ok && !e.IsDir() && (target == manifest.Name || target == unfinishedName || target == inputsName) {
			os.Remove(filepath.Join(dir, e.Name()))
		}
	}
}

// syncDir makes the entries of dir durable.
func syncDir(dir string) error {
	f, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer f.Close()
	return f.Sync()
}

// hashed reports whether name is a regular file of size bytes whose
// SHA-256 is sum (in hex), and returns its stat before it was read (nil
// when it could not be opened). Any other file is not opened (see
// outfile).
func hashed(name string, size int64, sum string) (fs.FileInfo, bool) {
	f, err := outfile.Open(name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil || !info.Mode().IsRegular() || info.Size() != size {
		return nil, false
	}
	h := sha256.New()
	if n, err := io.Copy(h, f); err != nil || n != size {
		return info, false
	}
	return info, hex.EncodeToString(h.Sum(nil)) == sum
}
