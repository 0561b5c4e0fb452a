//go:build !linux

package feed

import "os"

// openDirect returns nil: files are read and written through the system's
// cache.
func openDirect(string) *os.File { return nil }

// refusedDirect reports false: there is no reading past the cache to refuse.
func refusedDirect(error) bool { return false }
