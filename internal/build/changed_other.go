//go:build !linux

package build

import "io/fs"

// changedSince reports whether the file of info may have been modified
// after the file of ref: not earlier (see changed_linux.go, which uses
// the status change time, that nothing can set back).
func changedSince(info, ref fs.FileInfo) bool {
	return !info.ModTime().Before(ref.ModTime())
}
