// Package feedgen holds the sample site that the feedgen binary builds
// when it is run outside a site: the config.yaml and content/ of this
// repository, embedded.
package feedgen

import (
	"embed"
	"io/fs"
)

//go:embed config.yaml content
var sample embed.FS

// Sample returns the sample site: config.yaml and content/.
func Sample() fs.FS { return sample }
