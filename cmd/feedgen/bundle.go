package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/spf13/cobra"
)

func newBundleCmd(opts *globalOptions) *cobra.Command {
	var (
		dir, out, config string
		quiet            bool
	)
	cmd := &cobra.Command{
		Use:   "bundle -o FILE",
		Short: "Write a build as one zip archive to keep, check and serve later",
		Long: `Bundle writes the build in --dir as one zip archive: every page, the manifest
(the size and SHA-256 of every page), the config.yaml the build used and a
bundle.json with the feedgen version, build time and counts. Standard unzip
reads it; "feedgen verify" checks it and "feedgen serve --bundle" serves it
without extracting it.

Bundles are reproducible: two bundles of the same output are byte-identical
(entries sorted, dated with the build time). Every page is checked against the
manifest as it is read, so a bundle never holds a half-written build. The
archive is written to a temporary file beside FILE and renamed over it at the
end: a failed bundle leaves nothing behind.`,
		Example: `  feedgen bundle -o feed-2026-11-23.zip
  feedgen bundle --dir /srv/feed/public --config /srv/feed/config.yaml -o /archive/feed.zip`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if out == "" {
				return usageError{errors.New("bundle needs -o FILE: the archive to write, e.g. -o feed.zip")}
			}
			cfg, err := os.ReadFile(config)
			if errors.Is(err, fs.ErrNotExist) && !cmd.Flags().Changed("config") {
				return usageError{fmt.Errorf("no %s here: a bundle holds the config the output was built with; pass it with --config", config)}
			}
			if err != nil {
				return fmt.Errorf("reading config: %w", err)
			}
			if inside, err := within(out, dir); err != nil {
				return err
			} else if inside {
				return usageError{fmt.Errorf("-o %s is inside %s, the output folder being bundled: write the bundle elsewhere", out, dir)}
			}
			root, err := os.OpenRoot(dir)
			if err != nil {
				return fmt.Errorf("opening output folder: %w", err)
			}
			defer root.Close()

			start := time.Now()
			bo := bundle.Options{Config: cfg, BundledBy: "feedgen " + opts.version}
			if !quiet {
				bar := newProgress(opts.stderr)
				defer bar.Close()
				bo.Progress = bar.Set
			}
			var res *bundle.Result
			err = writeFileAtomic(out, func(f *os.File) error {
				var err error
				res, err = bundle.Write(cmd.Context(), f, root.FS(), bo)
				return err
			})
			if err != nil {
				return fmt.Errorf("%s: %w", dir, err)
			}
			if !quiet {
				fmt.Fprintf(opts.stdout, "%s: the build of %s (%d articles, %d pages, %s) in %s (%.2f), %s\n",
					out, res.Info.BuildTime.Format(time.RFC3339), res.Info.Articles, res.Pages,
					human.Bytes(res.Info.Bytes), human.Bytes(res.Size),
					float64(res.Size)/float64(max(1, res.Info.Bytes)), time.Since(start).Round(time.Millisecond))
			}
			return nil
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "public", "the output folder of the build to bundle")
	cmd.Flags().StringVarP(&out, "output", "o", "", "the archive to write (required)")
	cmd.Flags().StringVarP(&config, "config", "c", "config.yaml", "the config.yaml the output was built with, stored in the bundle")
	cmd.Flags().BoolVarP(&quiet, "quiet", "q", false, "print only errors")
	return cmd
}

// within reports whether the file name would be inside the folder dir,
// symbolic links resolved.
func within(name, dir string) (bool, error) {
	d, err := realPath(dir)
	if err != nil {
		return false, fmt.Errorf("opening output folder: %w", err)
	}
	f, err := realPath(filepath.Dir(name))
	if err != nil {
		return false, fmt.Errorf("writing bundle: %w", err)
	}
	rel, err := filepath.Rel(d, filepath.Join(f, filepath.Base(name)))
	if err != nil {
		return false, nil
	}
	return rel == "." || rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)), nil
}

// realPath returns the absolute path of p with symbolic links resolved.
func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// writeFileAtomic writes name through write on a new temporary file in
// the same folder, synced and renamed over name once write succeeded; on
// any error the temporary file is removed and name is left as it was.
func writeFileAtomic(name string, write func(*os.File) error) (err error) {
	dir, base := filepath.Split(name)
	var f *os.File
	var tmp string
	for try := 0; ; try++ {
		tmp = filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(try)+".tmp")
		f, err = os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing bundle: %w", err)
		}
		break
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	if err := write(f); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("writing bundle: %w", err)
	}
	return nil
}
