package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// FileName is the file that makes a folder a site.
const FileName = "config.yaml"

// ErrNoSite is FindSite's error when there is no config file to find.
var ErrNoSite = errors.New("no " + FileName + " here or in any folder above: run it in a site (feedgen new site DIR starts one), or pass --config")

// Find returns the config file of the site a command works on: flag (a
// file, or a folder holding config.yaml) when given; else the first
// config.yaml in cwd or a folder above it, as git and Hugo find theirs,
// relative to cwd as the user would write it (a relative flag is too).
// found is false, with no error, when there is none.
func Find(flag string, given bool, cwd string) (path string, found bool, err error) {
	if given {
		info, err := os.Stat(at(cwd, flag))
		if err == nil && info.IsDir() {
			flag = filepath.Join(flag, FileName)
			_, err = os.Stat(at(cwd, flag))
		}
		if err != nil {
			var pe *fs.PathError
			if errors.As(err, &pe) {
				err = pe.Err // named below
			}
			return "", false, fmt.Errorf("reading config %s: %w", flag, err)
		}
		return flag, true, nil
	}
	for dir := cwd; ; {
		p := filepath.Join(dir, FileName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			if rel, err := filepath.Rel(cwd, p); err == nil {
				p = rel // as the user would write it
			}
			return p, true, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("looking for %s: %w", FileName, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false, nil
		}
		dir = parent
	}
}

// ReadFile reads and checks the config file at path on disk; its
// relative paths are resolved against the file's folder.
func ReadFile(path string) (*Config, error) {
	return readFile(path, "")
}

// readFile is ReadFile of a path relative to cwd: the config's paths are
// too.
func readFile(path, cwd string) (*Config, error) {
	data, err := os.ReadFile(at(cwd, path))
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(path, filepath.Dir(path), data)
}

// FindSite finds (as Find does, from cwd) and reads the config of the
// site a command works on; ErrNoSite when there is none here or above.
// The config's paths are relative to cwd when its path is.
func FindSite(flag string, given bool, cwd string) (*Config, error) {
	path, found, err := Find(flag, given, cwd)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, ErrNoSite
	}
	return readFile(path, cwd)
}

// at returns path p, relative to cwd, as the process opens it.
func at(cwd, p string) string {
	if cwd == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(cwd, p)
}
