package main

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/manifest"
)

// ConfigName is the file that makes a folder a site.
const configName = "config.yaml"

// findConfig returns the config file of the site a command works on: the
// --config flag's, a file or a folder holding config.yaml, when given;
// else the first config.yaml in cwd or a folder above it, as git and Hugo
// find theirs. found is false, with no error, when there is none.
func findConfig(flag string, given bool, cwd string) (path string, found bool, err error) {
	if given {
		info, err := os.Stat(flag)
		if err == nil && info.IsDir() {
			flag = filepath.Join(flag, configName)
			_, err = os.Stat(flag)
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
		p := filepath.Join(dir, configName)
		if info, err := os.Stat(p); err == nil && info.Mode().IsRegular() {
			if rel, err := filepath.Rel(cwd, p); err == nil {
				p = rel // as the user would write it
			}
			return p, true, nil
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", false, fmt.Errorf("looking for %s: %w", configName, err)
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", false, nil
		}
		dir = parent
	}
}

// emptyFolder reports whether dir holds nothing but hidden files: a
// folder where building the sample site cannot be a mistake.
func emptyFolder(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		if e.Name()[0] != '.' {
			return false
		}
	}
	return true
}

// outputDir returns the build folder a reader command (serve, bundle,
// rules, publish) works on: --dir when given (refused when it is a site's
// folder, see notBuild); else the output_dir of the site's config (found
// as findConfig finds it); else "public". It also returns the config's
// path, "" when there is none.
func outputDir(dir string, dirGiven bool, configFlag string, configGiven bool, cwd string) (out, cfgPath string, err error) {
	if dirGiven {
		if err := notBuild(dir, "--dir"); err != nil {
			return "", "", err
		}
	}
	cfgPath, found, err := findConfig(configFlag, configGiven, cwd)
	if err != nil || !found {
		if dirGiven {
			return dir, "", err
		}
		return "public", "", err
	}
	if dirGiven {
		return dir, cfgPath, nil
	}
	cfg, err := readConfig(cfgPath)
	if err != nil {
		return "", "", err
	}
	return cfg.OutputDir, cfgPath, nil
}

// siteBuild returns, when dir is the folder of a site (it holds
// config.yaml) and not a build (no manifest.json), the folder its builds
// go to: the output_dir of its config, or public when the config cannot
// be read. ok is false for any other folder.
func siteBuild(dir string) (out string, ok bool) {
	if _, err := os.Stat(filepath.Join(dir, manifest.Name)); err == nil {
		return "", false
	}
	cfgPath := filepath.Join(dir, configName)
	if info, err := os.Stat(cfgPath); err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	if cfg, err := readConfig(cfgPath); err == nil {
		return cfg.OutputDir, true
	}
	return filepath.Join(dir, "public"), true
}

// notBuild refuses dir, given with flag as the folder of a build, when it
// is the folder of a site: it says where the site's build is, or that
// there is none yet. Every command that reads a build from a folder
// (serve --dir, bundle --dir, publish --dir, rules --root) asks it first;
// openBundle asks siteBuild about a folder given for a bundle.
func notBuild(dir, flag string) error {
	out, ok := siteBuild(dir)
	if !ok {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, manifest.Name)); err != nil {
		return fmt.Errorf("%s is a site's folder (it has %s), not a build: its build goes to %s (output_dir), and there is none there yet: run feedgen build in %s, then pass %s %s", dir, configName, out, dir, flag, out)
	}
	return fmt.Errorf("%s is a site's folder (it has %s), not a build: its build is in %s (output_dir): pass %s %s", dir, configName, out, flag, out)
}

// readConfig reads and checks the config file at path.
func readConfig(path string) (*config.Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return config.Parse(path, filepath.Dir(path), data)
}

// loadSite finds and reads the config of the site a command works on
// (--config, given or not, as findConfig takes it): a usage error when
// there is none here or above.
func loadSite(flag string, given bool) (*config.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	path, found, err := findConfig(flag, given, cwd)
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, usageError{errors.New("no config.yaml here or in any folder above: run it in a site (feedgen new site DIR starts one), or pass --config")}
	}
	return readConfig(path)
}
