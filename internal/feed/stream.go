package feed

import (
	"fmt"
	"slices"
	"sync"
)

// A stream is the JSON of a Spill's articles in listing order while it is
// being merged: the file it is written to, past the page cache, and the
// last of it in memory, from which the pages of the main listing are made
// as it comes. The merge keeps at most window bytes ahead of what the
// pages released (Listing.Release), unless a page waits for more (then
// it merges what that page needs, and no further), so
// that a build whose pages go in order (Listing.Order) reads every article
// from memory once merged: neither the page cache nor the build's memory
// holds the whole file. Other pages, and pages whose articles the stream
// no longer holds, read them from the file once merged.
type stream struct {
	file   *spillFile
	size   int64 // of a chunk, a multiple of blockSize
	window int64 // bytes held ahead of what was released, at most

	mu       sync.Mutex
	ahead    sync.Cond // the merge waits on it while it is window ahead
	behind   sync.Cond // pages wait on it for bytes not merged yet
	paced    bool      // the merge waits on ahead
	chunks   [][]byte  // held: chunk k is the bytes from (first+k)×size
	first    int64
	free     [][]byte // chunks to use again
	merged   int64    // bytes merged, in chunks or the file
	released int64    // bytes no page in order needs any more
	waiting  int      // pages waiting for bytes not merged yet
	// needed is the end of the bytes the pages that waited wanted, the
	// most: the merge runs past its window until it has merged them,
	// not while a page it woke has yet to run (on a busy machine, long
	// enough for the merge to let go of what the page reads).
	needed int64
	done   bool  // merged all, failed or closed
	err    error // of the merge
	closed bool
	most   int // chunks held at once, at most: for tests
	reread int // reads from the file: for tests
}

func newStream(file *spillFile, size, window int64) *stream {
	size = roundUp(size) // what the merge fills: see alignedBuf
	st := &stream{file: file, size: size, window: max(window, 2*size)}
	st.ahead.L, st.behind.L = &st.mu, &st.mu
	return st
}

// chunk returns an aligned buffer of size bytes for the merge to
// fill, once the merge may run ahead: false when the stream was closed or
// failed.
func (st *stream) chunk() ([]byte, bool) {
	st.mu.Lock()
	defer st.mu.Unlock()
	for !st.done && st.merged >= st.needed && st.merged-st.released >= st.window {
		st.paced = true
		st.ahead.Wait()
	}
	st.paced = false
	if st.done {
		return nil, false
	}
	st.drop(st.released)
	if n := len(st.free); n > 0 {
		b := st.free[n-1]
		st.free = st.free[:n-1]
		return b, true
	}
	if int64(len(st.chunks)) > st.window/st.size+2 {
		// A page waits for what lies past the window: the oldest
		// chunk goes, and whoever still wants it reads the file.
		st.drop((st.first + 1) * st.size)
		b := st.free[len(st.free)-1]
		st.free = st.free[:len(st.free)-1]
		return b, true
	}
	return alignedBuf(int(st.size)), true
}

// drop lets go of the chunks wholly before off; st.mu is held.
func (st *stream) drop(off int64) {
	for len(st.chunks) > 0 && (st.first+1)*st.size <= off {
		st.free = append(st.free, st.chunks[0])
		st.chunks[0] = nil
		st.chunks = st.chunks[1:]
		st.first++
	}
}

// add makes b, the n bytes of the file from merged on (written to it
// already), readable.
func (st *stream) add(b []byte, n int) {
	st.mu.Lock()
	if st.done {
		st.mu.Unlock()
		return
	}
	if len(st.chunks) == 0 {
		st.first = st.merged / st.size
	}
	st.chunks = append(st.chunks, b)
	st.most = max(st.most, len(st.chunks))
	st.merged += int64(n)
	if st.waiting > 0 {
		st.behind.Broadcast()
	}
	st.mu.Unlock()
}

// finish ends the merge, with its error if it failed: pages wait no
// more, and a merge still going stops at its next chunk.
func (st *stream) finish(err error) {
	st.mu.Lock()
	if !st.done {
		st.done, st.err = true, err
	}
	st.ahead.Broadcast()
	st.behind.Broadcast()
	st.mu.Unlock()
}

// stopped reports whether the stream was closed or failed.
func (st *stream) stopped() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.done
}

// release says that no page in order needs the bytes before off.
func (st *stream) release(off int64) {
	st.mu.Lock()
	if off > st.released {
		st.released = off
		if st.paced {
			st.ahead.Signal()
		}
	}
	st.mu.Unlock()
}

// error returns the error of the merge, once done.
func (st *stream) error() error {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return errClosed
	}
	return st.err
}

// close stops the merge.
func (st *stream) close() {
	st.mu.Lock()
	st.closed, st.done = true, true
	st.chunks, st.free = nil, nil
	st.ahead.Broadcast()
	st.behind.Broadcast()
	st.mu.Unlock()
}

// appendAt appends the bytes [from, to) to dst, once merged.
func (st *stream) appendAt(dst []byte, from, to int64) ([]byte, error) {
	st.mu.Lock()
	for st.merged < to && !st.done {
		st.needed = max(st.needed, to)
		st.waiting++
		if st.paced {
			st.ahead.Signal()
		}
		st.behind.Wait()
		st.waiting--
	}
	if st.closed || st.merged < to {
		err := st.err
		st.mu.Unlock()
		if err == nil {
			err = fmt.Errorf("the encoded articles are gone")
		}
		return dst, fmt.Errorf("reading encoded articles: %w", err)
	}
	if len(st.chunks) > 0 && from/st.size >= st.first {
		for off := from; off < to; {
			c := st.chunks[off/st.size-st.first]
			end := min(to, (off/st.size+1)*st.size)
			dst = append(dst, c[off%st.size:off%st.size+(end-off)]...)
			off = end
		}
		st.mu.Unlock()
		return dst, nil
	}
	st.reread++
	st.mu.Unlock()
	k := len(dst)
	dst = slices.Grow(dst, int(to-from))[:k+int(to-from)]
	if _, err := st.file.buffered.ReadAt(dst[k:], from); err != nil {
		return dst[:k], fmt.Errorf("reading encoded articles: %w", err)
	}
	return dst, nil
}
