//go:build !linux

package build

// createNew is not available: files are written under a temporary name
// and renamed.
func createNew(string, []byte, *writeBehind) bool { return false }
