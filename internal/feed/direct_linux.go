package feed

import (
	"errors"
	"os"
	"syscall"
)

// openDirect opens the file name for reading and writing past the page
// cache, or returns nil where its file system does not allow it.
func openDirect(name string) *os.File {
	f, err := os.OpenFile(name, os.O_RDWR|syscall.O_DIRECT, 0)
	if err != nil {
		return nil
	}
	return f
}

// refusedDirect reports whether err is a file system's refusal of a read
// or write past the page cache, which may come only then (EINVAL: an
// alignment it does not take).
func refusedDirect(err error) bool { return errors.Is(err, syscall.EINVAL) }
