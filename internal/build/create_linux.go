//go:build linux

package build

import (
	"path/filepath"
	"strconv"

	"golang.org/x/sys/unix"
)

// createNew makes a file that does not exist yet appear atomically, with
// all of data: it writes an unnamed file in the folder (O_TMPFILE) and
// then gives it its name (linkat). A temporary name and a rename would
// cost two more changes to the folder, which for a folder of 10,000 pages
// on ext4 make most of a cold build's time. A file killed half-written
// leaves nothing behind. It reports false, having done nothing visible,
// when it cannot (the name exists, no O_TMPFILE support, no /proc): the
// caller then writes the file the usual way.
//
// The file goes to behind when it takes it (see writeBehind).
func createNew(name string, data []byte, behind *writeBehind) bool {
	fd, err := unix.Open(filepath.Dir(name), unix.O_TMPFILE|unix.O_WRONLY|unix.O_CLOEXEC, 0o644)
	if err != nil {
		return false
	}
	kept := false
	defer func() {
		if !kept {
			unix.Close(fd)
		}
	}()
	for p := data; len(p) > 0; {
		n, err := unix.Write(fd, p)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return false
		}
		p = p[n:]
	}
	err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(fd), unix.AT_FDCWD, name, unix.AT_SYMLINK_FOLLOW)
	if err != nil {
		return false
	}
	kept = behind.take(fd, int64(len(data)), name)
	return true
}
