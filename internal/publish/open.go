package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"gocloud.dev/blob"
)

// OpenOptions say how Open opens a BUCKET_URL for a publish.
type OpenOptions struct {
	// Options are the publish's: its retries, timeouts and notices for
	// the requests of opening (see Bucket.Open); a dry run (DryRun)
	// makes no folder.
	Options
	// OutputDir is the build's folder, which a bucket on disk must not
	// hold, lie in or be (see CheckBucketFolder).
	OutputDir string
	// ContentDir and ConfigFile are the site's, when known: a bucket on
	// disk must not be in them either (see CheckBucketSite).
	ContentDir, ConfigFile string
	// Say receives what Open does to the disk; unless Quiet, the URL's
	// notes (Bucket.Notes) and a made folder too. nil: nothing.
	Say   io.Writer
	Quiet bool
	// Where, when set, receives where the publish goes, as the URL says
	// it (Bucket.String), before the bucket is opened (which needs
	// credentials): a dry run's first line.
	Where io.Writer
}

// A Target is a BUCKET_URL opened for a publish: Publish(ctx,
// t.Bucket, output, t.Options(opt)).
type Target struct {
	URL    *Bucket      // where the URL says
	Bucket *blob.Bucket // opened
	// Folder is the folder of a bucket on disk, for Options.Folder: the
	// URL's, or an empty temporary one for a dry run of a bucket folder
	// that does not exist yet.
	Folder string

	outputDir string
	made      []string // the folders Open made, innermost first
	tmp       string   // the dry run's temporary folder
	say       io.Writer
	quiet     bool
}

// Open opens the bucket a BUCKET_URL names, as Bucket.Open does: a
// *URLError when the URL is not one, or names a folder that is the
// build's or the site's (or holds or lies in one). A bucket folder that
// does not exist is made, as aws s3 sync and rclone make a local
// destination (a dry run, which changes nothing, sees it empty); Close
// removes it again when the publish failed. A later serve --dir
// s3://... can open its bucket so.
func Open(ctx context.Context, url string, opt OpenOptions) (*Target, error) {
	b, err := ParseBucketURL(url)
	if err != nil {
		return nil, err
	}
	t := &Target{URL: b, outputDir: opt.OutputDir, say: cmpWriter(opt.Say), quiet: opt.Quiet}
	if b.Scheme == "file" {
		if err := t.prepareFolder(opt); err != nil {
			t.Close(err)
			return nil, err
		}
	}
	for _, note := range b.Notes {
		if !opt.Quiet {
			fmt.Fprintln(t.say, note)
		}
	}
	if opt.Where != nil {
		fmt.Fprintln(opt.Where, b)
	}
	if t.tmp != "" {
		t.Bucket, err = OpenFolder(t.tmp)
	} else {
		t.Bucket, err = b.Open(ctx, opt.Options)
	}
	if err != nil {
		t.Close(err)
		return nil, err
	}
	return t, nil
}

// prepareFolder checks the folder of a bucket on disk, and makes it (or,
// for a dry run, an empty temporary one) when it does not exist, once
// opt.Ready says the publish goes on.
func (t *Target) prepareFolder(opt OpenOptions) error {
	t.Folder = t.URL.Name
	if err := CheckBucketFolder(t.Folder, opt.OutputDir); err != nil {
		return &URLError{err}
	}
	if opt.ConfigFile != "" {
		if err := CheckBucketSite(t.Folder, opt.ContentDir, opt.ConfigFile); err != nil {
			return &URLError{err}
		}
	}
	if _, err := os.Stat(t.Folder); !errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if opt.Ready != nil {
		// Nothing made, nor said, before the caller says the publish
		// goes on.
		if err := opt.Ready(); err != nil {
			return err
		}
	}
	if opt.DryRun {
		tmp, err := os.MkdirTemp("", "feedgen-dry-run-")
		if err != nil {
			return err
		}
		fmt.Fprintf(t.say, "%s does not exist: publish will create it\n", t.Folder)
		t.tmp, t.Folder = tmp, tmp
		return nil
	}
	var err error
	if t.made, err = mkdirAll(t.Folder); err != nil {
		return fmt.Errorf("creating the bucket folder: %w", err)
	}
	return nil
}

// Options returns opt with what the target says of a bucket on disk: its
// folder, and the build's (see Options.Folder, Options.OutputDir).
func (t *Target) Options(opt Options) Options {
	opt.Folder = t.Folder
	if t.Folder != "" {
		opt.OutputDir = t.outputDir
	}
	return opt
}

// Close closes the bucket. After a publish that failed (err), it removes
// the folders Open made that nothing was put in; after one that did not,
// it says the folder was made. A dry run's temporary folder goes.
func (t *Target) Close(err error) error {
	var cerr error
	if t.Bucket != nil {
		cerr = t.Bucket.Close()
	}
	if t.tmp != "" {
		os.RemoveAll(t.tmp)
	}
	if len(t.made) > 0 {
		if err != nil {
			removeEmpty(t.made)
		} else if !t.quiet {
			fmt.Fprintf(t.say, "created %s\n", t.URL.Name)
		}
	}
	return cerr
}

func cmpWriter(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// mkdirAll makes dir and the folders above it that do not exist, and
// returns those it made, dir first.
func mkdirAll(dir string) ([]string, error) {
	var missing []string
	for d := filepath.Clean(dir); ; d = filepath.Dir(d) {
		if _, err := os.Stat(d); !errors.Is(err, fs.ErrNotExist) {
			break
		}
		missing = append(missing, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	return missing, os.MkdirAll(dir, 0o755)
}

// removeEmpty removes the folders dirs, the innermost first, each only
// when it is empty: those mkdirAll made, that nothing was put in.
func removeEmpty(dirs []string) {
	for _, d := range dirs {
		if os.Remove(d) != nil {
			return
		}
	}
}
