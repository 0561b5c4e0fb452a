package feed

import (
	"errors"
	"fmt"
	"io"
	"os"
	"sync/atomic"
	"unsafe"
)

// blockSize is the alignment of what a spillFile reads and writes past
// the page cache: of memory, offsets and lengths alike. 4096 suits disks
// of 512- and 4096-byte blocks.
const blockSize = 4096

// A spillFile is a temporary file of a Spill. Where the system allows, it
// is read and written past the page cache (O_DIRECT): a million articles
// are gigabytes of JSON that are read back once, and filling the page
// cache with them costs more per gigabyte the more there is (it is
// memory the system must find), while the disk takes them sequentially
// at its own speed. Read by the pages, the file goes through the page
// cache like any other (buffered).
type spillFile struct {
	buffered *os.File
	direct   *os.File    // the same file opened with O_DIRECT; nil where the system has none
	refused  atomic.Bool // the file system refused a direct read or write: buffered from then on
}

// newSpillFile creates a temporary file in dir, or in the system's
// temporary folder when dir is "" or cannot be written, and removes its
// name. It is read and written past the page cache if direct and the
// system allows.
func newSpillFile(dir string, direct bool) (*spillFile, error) {
	f, err := os.CreateTemp(dir, ".feedgen-articles-*")
	if err != nil && dir != "" {
		f, err = os.CreateTemp("", ".feedgen-articles-*") // dir is read-only
	}
	if err != nil {
		return nil, fmt.Errorf("creating a temporary file for the encoded articles: %w", err)
	}
	sf := &spillFile{buffered: f}
	if direct {
		sf.direct = openDirect(f.Name())
	}
	// Open files cannot be removed on every system: close tries again.
	os.Remove(f.Name())
	return sf, nil
}

// Name returns the name the file was created with.
func (f *spillFile) Name() string { return f.buffered.Name() }

// writeAt writes b at off. Past the page cache, off and len(b) must be
// multiples of blockSize and b aligned (see alignedBuf).
func (f *spillFile) writeAt(b []byte, off int64) error {
	if f.direct != nil && !f.refused.Load() {
		_, err := f.direct.WriteAt(b, off)
		if !refusedDirect(err) {
			return err
		}
		f.refused.Store(true)
	}
	_, err := f.buffered.WriteAt(b, off)
	return err
}

// readAt reads into b from off up to len(b) bytes, fewer at the end of the
// file, and returns how many it read. The alignment of writeAt applies.
func (f *spillFile) readAt(b []byte, off int64) (int, error) {
	if f.direct != nil && !f.refused.Load() {
		n, err := readFull(f.direct, b, off)
		if !refusedDirect(err) {
			return n, err
		}
		f.refused.Store(true)
	}
	return readFull(f.buffered, b, off)
}

// readFull is ReadAt with io.EOF as no error.
func readFull(f *os.File, b []byte, off int64) (int, error) {
	n, err := f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return n, err
}

// close closes the file and removes its name if it still has one.
func (f *spillFile) close() error {
	if f.direct != nil {
		f.direct.Close()
	}
	f.buffered.Close()
	if err := os.Remove(f.Name()); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing a temporary file: %w", err)
	}
	return nil
}

// alignedBuf returns n zero bytes (n rounded up to blockSize) whose first
// is at an address that is a multiple of blockSize.
func alignedBuf(n int) []byte {
	n = int(roundUp(int64(n)))
	b := make([]byte, n+blockSize)
	skip := int(-bufAddr(b) & (blockSize - 1))
	return b[skip : skip+n : skip+n]
}

// bufAddr returns the address of b's first byte.
func bufAddr(b []byte) uintptr { return uintptr(unsafe.Pointer(unsafe.SliceData(b))) }

// roundUp rounds n up to a multiple of blockSize.
func roundUp(n int64) int64 { return (n + blockSize - 1) &^ (blockSize - 1) }

// A runReader reads the articles of one run of a Spill's raw file in
// order, readerSize bytes at a time (less at the end of the run), the
// next block read ahead while the last is used.
type runReader struct {
	buf []byte
	at  int64 // the file offset of buf[0]
	n   int   // bytes of buf read

	next    []byte // being read ahead: nextN bytes from nextAt
	nextAt  int64
	nextN   int
	nextErr error
	pending chan struct{} // closed when next is read; nil when none is
	join    []byte        // an article across buf and next
}

// readerSize is how much a runReader reads at once.
const readerSize = 256 << 10

// read returns the n bytes at off of f, which must not go past end, the
// end of the run, a multiple of blockSize; valid until the next read.
func (r *runReader) read(f *spillFile, off int64, n int, end int64) ([]byte, error) {
	if off >= r.at && off+int64(n) <= r.at+int64(r.n) {
		return r.buf[off-r.at:][:n], nil
	}
	if r.pending != nil {
		<-r.pending
		r.pending = nil
		nextEnd := r.nextAt + int64(r.nextN)
		if r.nextErr == nil && off >= r.at && off+int64(n) <= nextEnd {
			var b []byte
			if off < r.nextAt {
				// Most articles straddle the end of a block: joined.
				r.join = append(append(r.join[:0], r.buf[off-r.at:r.n]...), r.next[:off+int64(n)-r.nextAt]...)
				b = r.join
			}
			r.buf, r.next = r.next, r.buf
			r.at, r.n = r.nextAt, r.nextN
			r.ahead(f, end)
			if b == nil {
				b = r.buf[off-r.at:][:n]
			}
			return b, nil
		}
	}
	from := off &^ (blockSize - 1)
	size := min(max(roundUp(off+int64(n)-from), readerSize), end-from)
	if int64(cap(r.buf)) < size {
		r.buf = alignedBuf(int(max(size, readerSize)))
	}
	k, err := f.readAt(r.buf[:size], from)
	r.at, r.n = from, k
	if err == nil && off+int64(n) > from+int64(k) {
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		r.n = 0
		return nil, fmt.Errorf("reading the encoded articles back: %w", err)
	}
	r.ahead(f, end)
	return r.buf[off-from:][:n], nil
}

// wait waits for the block being read ahead, if any.
func (r *runReader) wait() {
	if r.pending != nil {
		<-r.pending
		r.pending = nil
	}
}

// ahead starts reading the block after buf, up to end.
func (r *runReader) ahead(f *spillFile, end int64) {
	at := r.at + int64(r.n)
	if at >= end || r.n%blockSize != 0 {
		return
	}
	size := min(readerSize, end-at)
	if int64(cap(r.next)) < size {
		r.next = alignedBuf(readerSize)
	}
	done := make(chan struct{})
	r.pending, r.nextAt = done, at
	b := r.next[:size]
	go func() {
		defer close(done)
		r.nextN, r.nextErr = f.readAt(b, at)
	}()
}
