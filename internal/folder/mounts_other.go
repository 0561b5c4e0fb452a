//go:build !linux

package folder

// A mount is a mounted file system: known on Linux only.
type mount struct{ dev, root, point string } // none are read here (see mounts_linux.go)

func mountTable() []mount { return nil }

func otherName([]mount, string) string { return "" }
