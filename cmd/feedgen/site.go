package main

import (
	"errors"
	"os"

	"github.com/feedgen/feedgen/internal/config"
)

// loadSite finds and reads the config of the site a command works on
// (see config.FindSite): a usage error when there is none here or above.
func loadSite(flag string, given bool) (*config.Config, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	cfg, err := config.FindSite(flag, given, cwd)
	if errors.Is(err, config.ErrNoSite) {
		return nil, usageError{err}
	}
	return cfg, err
}
