package publish

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/outfile"
)

// checkFolderFiles refuses a bucket on disk (file://, in folder dir)
// that holds a file that is not a regular file (nor a folder, nor a link
// to either): the bucket's driver (gocloud.dev/blob/fileblob) opens the
// objects it reads blocking, so that a named pipe among them would block
// the publish in open, deaf to SIGINT and SIGTERM. The folder is walked once, from its entries' types
// (no call per file but for links); ctx is checked as it goes. "" is no
// folder: nothing to check.
//
// A file put there after the walk is not seen: the walk is a check, not a
// guarantee; the lock (see folderLock) is opened without blocking in any
// case.
func checkFolderFiles(ctx context.Context, dir string) error {
	if dir == "" {
		return nil
	}
	n := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil // the driver says what it cannot read
		}
		if n++; n%checkEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		mode := d.Type()
		if mode&fs.ModeSymlink != 0 {
			info, err := os.Stat(p)
			if err != nil {
				return nil // a broken link: the driver says so
			}
			mode = info.Mode().Type()
		}
		if mode.IsDir() || mode.IsRegular() {
			return nil
		}
		return fmt.Errorf("%s is not a regular file (%s): a bucket folder holds only the files of a build; remove it and publish again", p, outfile.Kind(mode))
	})
	if err != nil && ctx.Err() == nil {
		return fmt.Errorf("checking the bucket folder: %w", err)
	}
	return err
}

// checkEvery is how many files a loop over files handles between two
// checks of its context.
const checkEvery = 1024
