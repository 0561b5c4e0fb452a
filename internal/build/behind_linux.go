//go:build linux

package build

import (
	"errors"
	"fmt"
	"sync"

	"golang.org/x/sys/unix"
)

// A writeBehind keeps the page cache a large build fills bounded, as
// PostgreSQL's flush_after settings and rsync --drop-cache do: once the
// build has written after bytes of new pages, each further page file is
// started to disk as soon as it is written (sync_file_range), and dropped
// from the page cache (FADV_DONTNEED) once it is on disk and the build has
// written a window of files past it. Without it, a million-article build
// leaves 4 GB of pages in the page cache: past the share of memory the
// kernel lets wait unwritten, the writes are throttled to the disk's pace,
// and every page is memory the system must find (on a VM, memory the host
// must back), which made such a build twice as slow per article as one of
// 100,000. The pages the build wrote first stay cached, ready to serve.
//
// Its methods may be called from several goroutines; a nil *writeBehind
// takes no file.
type writeBehind struct {
	after  int64 // bytes of pages written before any is written behind
	window int64 // bytes of pages held, at most (but one file)
	files  int   // descriptors held, at most

	mu      sync.Mutex
	written int64
	held    []heldFile // oldest first
	bytes   int64      // of held
	err     error      // the first error of the disk
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
	// another page's take may drop and close it.
	if err := unix.SyncFileRange(fd, 0, 0, unix.SYNC_FILE_RANGE_WRITE); err != nil && !ignorable(err) {
		w.fail(name, err)
	}
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
		w.drop(f)
	}
	return true
}

// drop waits for f to be on disk, drops its pages from the page cache and
// closes it.
func (w *writeBehind) drop(f heldFile) {
	const wait = unix.SYNC_FILE_RANGE_WAIT_BEFORE | unix.SYNC_FILE_RANGE_WRITE | unix.SYNC_FILE_RANGE_WAIT_AFTER
	if err := unix.SyncFileRange(f.fd, 0, 0, wait); err != nil && !ignorable(err) {
		w.fail(f.name, err)
	} else {
		unix.Fadvise(f.fd, 0, 0, unix.FADV_DONTNEED)
	}
	unix.Close(f.fd)
}

// ignorable reports whether err of sync_file_range says only that the
// file system does not do it (the kernel then writes the file back in
// its own time), not that the disk failed.
func ignorable(err error) bool {
	return errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.ESPIPE) || errors.Is(err, unix.EOPNOTSUPP)
}

// fail records the first error of writing a file to disk.
func (w *writeBehind) fail(name string, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err == nil {
		w.err = fmt.Errorf("writing %s to disk: %w", name, err)
	}
}

// close closes the files still held, leaving their pages in the page
// cache, and returns the first error of the disk: a page written behind
// that did not reach it.
func (w *writeBehind) close() error {
	if w == nil {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, f := range w.held {
		unix.Close(f.fd)
	}
	w.held, w.bytes = nil, 0
	return w.err
}
