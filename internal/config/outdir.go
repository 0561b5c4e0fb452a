package config

import (
	"fmt"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/folder"
)

// CheckOutputDir returns, as a config error, an output folder out (the
// config's OutputDir, or the one --out gives) that is the content folder,
// lies inside it or holds it. A build deletes what it wrote under
// out/articles/, and reads every file under the content folder as an
// article: sharing one folder, each would take the other's files for its
// own. The folders are compared as the file system knows them (see
// folder.Relate): a bind mount of the content folder is the content
// folder.
func (c *Config) CheckOutputDir(out string) error {
	l, err := folder.NewLocator(c.ContentDir)
	if err != nil {
		return fmt.Errorf("checking the output folder %s: %w", out, err)
	}
	rel, mount, err := l.Shares(out)
	if err != nil {
		return fmt.Errorf("checking the output folder %s: %w", out, err)
	}
	var why string
	switch {
	case rel == folder.Apart:
		return nil
	case mount != "":
		// A folder mounted inside the content folder, and the output
		// folder, or a folder of it, mounted elsewhere.
		why = rel.Verb() + " " + mount + ", a folder mounted inside the content folder " + c.ContentDir + ", under another name (a bind mount?)"
	case rel == folder.Same:
		why = "is the content folder"
	case rel == folder.Inside:
		why = "lies inside the content folder " + c.ContentDir
	case rel == folder.Holds:
		why = "holds the content folder " + c.ContentDir
	}
	if named, err := folder.ByName(out, c.ContentDir); err == nil && named != rel && mount == "" {
		why += ", under another name (a bind mount?)"
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
