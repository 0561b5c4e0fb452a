package outdir

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/layout"
)

// Find returns the build folder a reader command (serve, bundle, rules,
// publish) works on: dir when given (refused when it is a site's folder,
// see NotSite); else the output_dir of
// the site's config (found as config.Find finds it, from cwd, with
// configFlag); else "public". It also returns the config's path, "" when
// there is none.
func Find(dir string, dirGiven bool, configFlag string, configGiven bool, cwd string) (out, cfgPath string, err error) {
	if dirGiven {
		if err := NotSite(dir, "--dir"); err != nil {
			return "", "", err
		}
	}
	cfgPath, found, err := config.Find(configFlag, configGiven, cwd)
	if err != nil || !found {
		if dirGiven {
			return dir, "", err
		}
		return "public", "", err
	}
	if dirGiven {
		return dir, cfgPath, nil
	}
	cfg, err := config.ReadFile(cfgPath)
	if err != nil {
		return "", "", err
	}
	return cfg.OutputDir, cfgPath, nil
}

// SiteOutput returns, when dir is the folder of a site (it holds
// config.yaml) and not a build (no manifest.json), the folder its builds
// go to: the output_dir of its config, or public when the config cannot
// be read. ok is false for any other folder.
func SiteOutput(dir string) (out string, ok bool) {
	if _, err := os.Stat(filepath.Join(dir, layout.ManifestPath)); err == nil {
		return "", false
	}
	cfgPath := filepath.Join(dir, config.FileName)
	if info, err := os.Stat(cfgPath); err != nil || !info.Mode().IsRegular() {
		return "", false
	}
	if cfg, err := config.ReadFile(cfgPath); err == nil {
		return cfg.OutputDir, true
	}
	return filepath.Join(dir, "public"), true
}

// NotSite refuses dir, given with flag as the folder of a build, when it
// is the folder of a site: it says where the site's build is, or that
// there is none yet. Every command that reads a build from a folder
// (serve --dir, bundle --dir, publish --dir, rules --root) asks it first
// (see Find); one that takes a bundle asks SiteOutput about a folder
// given for one.
func NotSite(dir, flag string) error {
	out, ok := SiteOutput(dir)
	if !ok {
		return nil
	}
	if _, err := os.Stat(filepath.Join(out, layout.ManifestPath)); err != nil {
		return fmt.Errorf("%s is a site's folder (it has %s), not a build: its build goes to %s (output_dir), and there is none there yet: run feedgen build in %s, then pass %s %s", dir, config.FileName, out, dir, flag, out)
	}
	return fmt.Errorf("%s is a site's folder (it has %s), not a build: its build is in %s (output_dir): pass %s %s", dir, config.FileName, out, flag, out)
}

// Empty reports whether dir holds nothing but hidden files: a folder
// where building the sample site cannot be a mistake.
func Empty(dir string) bool {
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
