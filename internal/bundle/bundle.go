// Package bundle writes, checks and opens offline bundles: one zip archive
// holding a whole build (every page, its manifest, the config.yaml it was
// built with and a small description), that standard unzip reads and
// feedgen can check and serve years later without extracting it.
//
// Layout, entries sorted by name, every one deflated:
//
//	articles/...     the pages, paths exactly as in the manifest
//	bundle.json      Info: format, versions, build time, counts
//	config.yaml      the config the output was built with, as it was
//	manifest.json    the build's manifest, byte for byte
//
// A bundle is reproducible: every entry carries the build time (UTC) as
// its modification time and the same mode bits, with no host-specific
// field, so two bundles of the same output by the same feedgen are
// byte-identical.
package bundle

import (
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
)

// Format is the version of the bundle's layout, recorded in bundle.json.
const Format = 1

// Names of the entries beside the pages.
const (
	InfoName     = "bundle.json"
	ConfigName   = "config.yaml"
	ManifestName = manifest.Name
)

// Info is bundle.json: what the bundle holds, readable without the rest.
type Info struct {
	Format    int       `json:"format"`
	Generator string    `json:"generator"`  // the feedgen that built the pages (the manifest's)
	BundledBy string    `json:"bundled_by"` // the feedgen that wrote the bundle
	BuildTime time.Time `json:"build_time"`
	Articles  int       `json:"articles"`
	Pages     int       `json:"pages"` // page files, index.json included
	Bytes     int64     `json:"bytes"` // their size, uncompressed
}

// zip stores times as MS-DOS dates: from 1980 to 2107.
var (
	minTime = time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)
	maxTime = time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)
)

// entryTime is the modification time of every entry of a bundle of a build
// made at t: t in UTC, whole seconds, within the range zip can store.
func entryTime(t time.Time) time.Time {
	t = t.UTC().Truncate(time.Second)
	switch {
	case t.Before(minTime):
		return minTime
	case t.After(maxTime):
		return maxTime
	}
	return t
}

// reserved reports whether name is an entry of the bundle that is not a
// page. None is the name of a file a layout writes (layout.Classify: the
// manifest's, or another's), so manifest.Validate refuses a manifest that
// lists one.
func reserved(name string) bool {
	return name == InfoName || name == ConfigName || name == ManifestName
}
