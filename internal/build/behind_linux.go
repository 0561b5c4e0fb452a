//go:build linux

package build

import (
	"errors"
	"fmt"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// A writeBehind keeps the page cache a large build fills bounded, as
// PostgreSQL's flush_after settings and rsync --drop-cache do: once the
// build has written after bytes of new pages, each further new page file
// is started to disk as soon as it is written (sync_file_range), and
// dropped from the page cache (FADV_DONTNEED) once it is on disk and the
// build has written a window of files past it; finish waits for the last
// window to be on disk. A page written behind that the disk refused fails
// the build, and is removed so that the next build writes it again (its
// bytes in the page cache would otherwise pass for the file).
//
// Without it, a million-article build leaves 4 GB of pages in the page
// cache, memory the system must find (on a VM, memory the host must back:
// writing 6.6 GB took 15 s there, 2.5 s written behind); with it, such a
// build took 26-29 s against 30-33 s. The pages the build wrote first stay
// cached, ready to serve.
//
// Its methods may be called from several goroutines; a nil *writeBehind
// takes no file.
type writeBehind struct {
	after  int64 // bytes of pages written before any is written behind
	window int64 // bytes of pages held, at most (but one file)
	files  int   // descriptors held, at most (and one per page writer dropping or writing one)

	mu      sync.Mutex
	written int64
	held    []heldFile // oldest first
	bytes   int64      // of held
	err     error      // the first error of the disk
	failed  []string   // the files the disk refused
}

// heldFile is a page file written behind, not yet dropped.
type heldFile struct {
	fd   int
	n    int64
	name string
}

// The window of a writeBehind: large enough that a file is mostly on disk
// when it leaves it (32 MB take about 20 ms to write on this machine's
// disk), small next to memory, and few descriptors under any RLIMIT_NOFILE
// a build may meet (ulimit -n 256).
const (
	writeBehindWindow = 32 << 20
	writeBehindFiles  = 64
)

// newWriteBehind returns a writeBehind that begins after after bytes.
func newWriteBehind(after int64) *writeBehind {
	return &writeBehind{after: after, window: writeBehindWindow, files: writeBehindFiles}
}

// take is given the descriptor of the page file name, of n bytes, just
// written. It reports whether it keeps the descriptor, to close it later;
// if not, the caller closes it.
func (w *writeBehind) take(fd int, n int64, name string) bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	w.written += n
	before := w.written <= w.after
	w.mu.Unlock()
	if before {
		return false
	}
	// Start the file to disk before it is handed over: from then on
	// another page's take may drop and close it. Its errors are those of
	// starting (ENOMEM); drop's wait tells whether the file got there.
	unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE)
	w.mu.Lock()
	w.held = append(w.held, heldFile{fd, n, name})
	w.bytes += n
	var out []heldFile
	for len(w.held) > w.files || (w.bytes > w.window && len(w.held) > 1) {
		out = append(out, w.held[0])
		w.bytes -= w.held[0].n
		w.held = w.held[1:]
	}
	w.mu.Unlock()
	for _, f := range out {
		if w.wait(f) {
			unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED)
		}
		unix.Close(f.fd)
	}
	return true
}

// wait waits for f to be on disk and reports whether it is known to be
// there: false when the disk refused it (recorded) or the file system
// does not tell.
func (w *writeBehind) wait(f heldFile) bool {
	const wait = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	err := unix.SyncFileRange(f.fd, 0, 0, wait)
	if err != nil && !ignorable(err) {
		w.fail(f.name, err)
	}
	return err == nil
}

// ignorable reports whether err of sync_file_range says only that the
// file system does not do it (the kernel then writes the file back in
// its own time), not that the disk failed.
func ignorable(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ESPIPE) || errors.Is(err, unix.EOPNOTSUPP)
}

// fail records that the disk refused the file name.
func (w *writeBehind) fail(name string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = fmt.Errorf("writing %s to disk: %w", name, err)
	}
	w.failed = append(w.failed, name)
}

// error returns the first error of the disk so far: the build stops at
// the next page.
func (w *writeBehind) error() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.err
}

// finish waits for the files still held to be on disk, leaving their
// pages in the page cache, and closes them. It returns the first error of
// the disk, having removed every file the disk refused.
func (w *writeBehind) finish() error {
	if w == nil {
		return nil
	}
	// No page is taken any more: held does not change while it waits.
	for _, f := range w.held {
		w.wait(f)
	}
	w.close()
	return w.error()
}

// close closes the files still held without waiting (the build failed,
// or finish waited) and removes those the disk refused.
func (w *writeBehind) close() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.held {
		unix.Close(f.fd)
	}
	w.held, w.bytes = nil, 0
	for _, name := range w.failed {
		os.Remove(name)
	}
	w.failed = nil
}
