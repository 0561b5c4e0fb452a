package publish

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// OpenFolder opens the folder dir, which must exist, as a bucket for
// Options.Folder: a plain copy of the build, with no attribute files
// beside the objects (fileblob's *.attrs), and each file written under a
// temporary name next to it, then renamed, so that it never crosses file
// systems (from $TMPDIR) and a reader never sees a part of it. A
// temporary file that a killed publish leaves under articles/ is
// deleted by the next one, as a file the build does not have.
func OpenFolder(dir string) (*blob.Bucket, error) {
	return fileblob.OpenBucket(dir, &fileblob.Options{Metadata: fileblob.MetadataDontWrite, NoTempDir: true})
}

// attrsExt ends the attribute files that earlier versions of publish had
// fileblob write beside each object of a bucket on disk.
const attrsExt = ".attrs"

// dropAttrs removes, from a bucket on disk that an earlier version of
// publish wrote (its manifest.json has an attribute file), the attribute
// files it wrote: manifest.json's, and those beside the files under
// articles/, as the walk of the folder found them (walked now when the
// publish did not list the folder). It says how many.
func (p *publisher) dropAttrs(ctx context.Context) error {
	root := p.opt.Folder
	if _, err := os.Lstat(filepath.Join(root, manifest.Name+attrsExt)); err != nil {
		return nil
	}
	if p.walked == nil {
		if err := p.walk(ctx, Prefix, func(string, int64) {}); err != nil {
			return err
		}
	}
	n := 0
	var err error
	for _, name := range p.walked.attrs {
		if err = os.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
			break
		}
		err = nil
		n++
	}
	if err == nil {
		err = os.Remove(filepath.Join(root, manifest.Name+attrsExt))
	}
	if err != nil {
		return fmt.Errorf("removing the attribute files of an earlier feedgen publish: %w", err)
	}
	p.notices.Say("removed %d attribute files (*.attrs) that an earlier feedgen publish wrote beside the files of %s: the folder is the build and nothing else", n+1, root)
	return nil
}
