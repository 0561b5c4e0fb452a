package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/diag"
)

// CheckOutputDir returns, as a config error, an output folder out (the
// config's OutputDir, or the one --out gives) that is the content folder,
// lies inside it or holds it. A build deletes what it wrote under
// out/articles/, and reads every file under the content folder as an
// article: sharing one folder, each would take the other's files for its
// own. Symbolic links are followed as far as the folders exist.
func (c *Config) CheckOutputDir(out string) error {
	o, err := realPath(out)
	if err != nil {
		return fmt.Errorf("checking the output folder %s: %w", out, err)
	}
	in, err := realPath(c.ContentDir)
	if err != nil {
		return fmt.Errorf("checking the content folder %s: %w", c.ContentDir, err)
	}
	var why string
	switch {
	case o == in:
		why = "is the content folder"
	case within(o, in):
		why = "lies inside the content folder " + c.ContentDir
	case within(in, o):
		why = "holds the content folder " + c.ContentDir
	default:
		return nil
	}
	fix := "a build writes and deletes pages under it, and reads every file of the content folder as an article: use a folder of its own, e.g. output_dir: public"
	if out != c.OutputDir {
		return diag.List{{Path: c.Path, Msg: fmt.Sprintf("--out %s %s: %s", out, why, fix)}}
	}
	written := c.outputDir
	if written == "" {
		written = "public"
	}
	return diag.List{{Path: c.Path, Line: c.outputDirLine, Msg: fmt.Sprintf("output_dir: %q (%s) %s: %s", written, out, why, fix)}}
}

// within reports whether path p lies inside folder dir (both clean and
// absolute).
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != "." && filepath.IsLocal(rel)
}

// realPath returns p absolute, with the symbolic links of the part of it
// that exists resolved: two names of one folder give one path.
func realPath(p string) (string, error) {
	p, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	rest := ""
	for {
		real, err := filepath.EvalSymlinks(p)
		if err == nil {
			return filepath.Join(real, rest), nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			if _, serr := os.Lstat(p); serr == nil {
				return "", err // a loop of links, a folder that cannot be read
			}
		}
		parent := filepath.Dir(p)
		if parent == p {
			return filepath.Join(p, rest), nil
		}
		rest = filepath.Join(filepath.Base(p), rest)
		p = parent
	}
}
