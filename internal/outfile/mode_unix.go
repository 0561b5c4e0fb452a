//go:build unix

package outfile

import (
	"io/fs"
	"syscall"
)

// TypeOf returns the type of a file as fs.FileMode's bits (what Kind
// names) from the mode of its stat (syscall.Stat_t's Mode, unix's too),
// for a reader that stats a descriptor itself.
func TypeOf(mode uint32) fs.FileMode {
	switch mode & syscall.S_IFMT {
	case syscall.S_IFREG:
		return 0
	case syscall.S_IFDIR:
		return fs.ModeDir
	case syscall.S_IFIFO:
		return fs.ModeNamedPipe
	case syscall.S_IFSOCK:
		return fs.ModeSocket
	case syscall.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case syscall.S_IFBLK:
		return fs.ModeDevice
	case syscall.S_IFLNK:
		return fs.ModeSymlink
	}
	return fs.ModeIrregular
}
