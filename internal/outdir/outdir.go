// Package outdir owns the rules of a build's output folder that every
// command shares: its lock (a build writes it alone; a server can tell
// whether one is writing), the marker of a build that changed it and has
// not finished, and whether a folder given as a build is one or a site's.
// What the files in it are is internal/layout's; what a build writes
// there, internal/build's.
package outdir

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/outfile"
)

// Unfinished is the marker a build creates in the output folder before
// its first change to a page (a page written or deleted), durably, and
// removes once its manifest describes the folder again: while it is
// there, a build is changing the folder or died doing it (killed, out of
// space, a manifest it could not write), and any page may hold that
// build's bytes, though the manifest says otherwise. A build that finds
// it trusts nothing the manifest says about the files; a reader refuses
// the folder (see Finished).
const Unfinished = ".feedgen-unfinished"

// markerHead is the first line of the marker; the pages follow, one a
// line.
const markerHead = "a feedgen build of this folder started and has not finished; the next build checks every page, and may delete the pages listed below\n"

// Mark creates the marker in dir, listing the pages the build may create
// (paths relative to dir), and makes it durable before any page changes:
// a page can reach the disk before a marker that is not. A build that
// finds the marker may delete what it lists (see Listed), as a build
// deletes what the manifest lists. A marker already there is replaced:
// the list given includes its own.
func Mark(dir string, pages []string) error {
	f, err := atomicfile.Create(filepath.Join(dir, Unfinished), 0o644)
	if err != nil {
		return fmt.Errorf("marking the build in %s: %w", dir, err)
	}
	defer f.Abort()
	w := bufio.NewWriter(f)
	w.WriteString(markerHead)
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

// Unmark removes the marker of dir, if there is one.
func Unmark(dir string) error {
	if err := os.Remove(filepath.Join(dir, Unfinished)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("finishing the build in %s: %w", dir, err)
	}
	return nil
}

// Marked reports whether dir holds the marker: a build is changing it,
// or died doing it.
func Marked(dir string) bool {
	_, err := os.Stat(filepath.Join(dir, Unfinished))
	return err == nil
}

// Listed returns the lines of the marker in dir after its first: the
// pages the unfinished build was to create, as Mark wrote them. None when
// there is no marker, or one that lists none (an older feedgen's); the
// caller checks each path (a marker is a file anyone may write).
func Listed(dir string) []string {
	data, err := outfile.ReadFile(filepath.Join(dir, Unfinished))
	if err != nil {
		return nil
	}
	return strings.Split(string(data), "\n")[1:]
}

// Finished returns the error of a reader of the output folder output
// (then: the command, "bundle" or "publish") that finds the marker
// there: it would read pages that a build is changing, or left half
// changed.
func Finished(output fs.FS, then string) error {
	if _, err := fs.Stat(output, Unfinished); err == nil {
		return errors.New("a build of the output folder is running or did not finish (it left " + Unfinished + "): run feedgen build, and " + then + " once it is done")
	}
	return nil
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
