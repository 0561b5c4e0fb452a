package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// Changes is how a site's inputs now differ from those a build of it was
// made of (see Compare): what a build now would change.
type Changes struct {
	// Config is set when the config file's bytes are not those the build
	// read.
	Config bool
	// Content is set when an article file was added, deleted, moved or
	// changed since the build (drafts and scheduled ones included), or the
	// content no longer builds.
	Content bool
	// Due, when not zero, is when the first article the build left out as
	// scheduled came due: a build now lists it.
	Due time.Time
}

// Any reports whether a build now would differ from the one compared.
func (b Changes) Any() bool {
	return b.Config || b.Content || !b.Due.IsZero()
}

// Compare tells how the site of the config file at configPath differs,
// at now, from what the build whose manifest is m was made of, as cheaply
// as a build that finds nothing changed: it reads and hashes the config,
// and every article file whose stamp is not the one the cache of sources
// in the site's output folder records (see sourcesName; read, never
// written: an unchanged site costs a stat per file, made on all cores),
// and parses none, in memory that does not grow with the site
// (content.Loader.Digest).
// What m does not record (a manifest older than ContentSHA256, or of a
// build with warnings, which records no Source) is not compared.
func Compare(ctx context.Context, configPath string, m *manifest.Manifest, now time.Time) (Changes, error) {
	return CompareIn(ctx, configPath, "", m, now)
}

// CompareIn is Compare for a build in the folder dir, whose cache of
// sources it reads; "" is the site's output folder.
func CompareIn(ctx context.Context, configPath, dir string, m *manifest.Manifest, now time.Time) (Changes, error) {
	var b Changes
	data, err := os.ReadFile(configPath)
	if err != nil {
		return b, fmt.Errorf("reading config: %w", err)
	}
	sum := sha256.Sum256(data)
	b.Config = m.ConfigSHA256 != "" && m.ConfigSHA256 != hex.EncodeToString(sum[:])
	if s := m.Source; s != nil && s.Until != nil && !now.Before(*s.Until) {
		b.Due = *s.Until
	}
	if m.ContentSHA256 == "" {
		return b, nil
	}
	cfg, err := config.Parse(configPath, filepath.Dir(configPath), data)
	if err != nil {
		b.Content = true // the content cannot be read as a build would
		return b, nil
	}
	if dir == "" {
		dir = cfg.OutputDir
	}
	var cache *content.Cache
	if f, err := outfile.Open(filepath.Join(dir, sourcesName)); err == nil {
		defer f.Close()
		cache, _ = content.ReadCache(f) // its digests, whatever its key
	}
	sum, ok, err := content.NewLoader(cfg).Digest(ctx, content.DirFS(cfg.ContentDir), cfg.ContentDir, cache)
	switch {
	case err != nil:
		return b, fmt.Errorf("reading content: %w", err)
	case !ok:
		b.Content = true // a build now fails: files in the wrong place, or unreadable
	default:
		b.Content = m.ContentSHA256 != hex.EncodeToString(sum[:])
	}
	return b, nil
}
