//go:build linux

package server

import (
	"errors"
	"runtime"
	"sync"

	"golang.org/x/sys/unix"
)

// store holds pages of builds, back to back, in a memory file (memfd):
// filled with pwrite at offsets given out by reserve, from any number of
// goroutines, then sealed: mapped read-only, so that its pages are byte
// slices like any other, kept out of the Go heap, whose collector would
// let the heap grow to twice the pages. A sealed store never changes. It
// is freed once unreachable; a heldBuild keeps the stores of its pages
// reachable.
type store struct {
	fd  int
	mem []byte // the mapping, once sealed

	mu     sync.Mutex
	size   int64 // bytes reserved
	sealed bool
}

// newStore returns an empty store.
func newStore() (*store, error) {
	fd, err := unix.MemfdCreate("feedgen-pages", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	return &store{fd: fd}, nil
}

// writeAt writes p at off, which reserve gave.
func (s *store) writeAt(p []byte, off int64) error {
	for len(p) > 0 {
		n, err := unix.Pwrite(s.fd, p, off)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		p, off = p[n:], off+int64(n)
	}
	return nil
}

// seal maps the store read-only. Nothing is written to it afterwards.
func (s *store) seal() error {
	if s.size > 0 {
		if err := unix.Ftruncate(s.fd, s.size); err != nil {
			return err
		}
		mem, err := unix.Mmap(s.fd, 0, int(s.size), unix.PROT_READ, unix.MAP_SHARED)
		if err != nil {
			return err
		}
		s.mem = mem
	}
	s.sealed = true
	runtime.AddCleanup(s, storeMemory.release, storeMemory{s.fd, s.mem})
	return nil
}

// bytes returns the n bytes at off of a sealed store.
func (s *store) bytes(off, n int64) []byte { return s.mem[off : off+n : off+n] }

// discard frees a store that was not sealed (a sealed one is freed once
// unreachable).
func (s *store) discard() {
	if !s.sealed {
		unix.Close(s.fd)
	}
}

// storeMemory is what a store holds outside the Go heap.
type storeMemory struct {
	fd  int
	mem []byte
}

func (m storeMemory) release() {
	if len(m.mem) > 0 {
		unix.Munmap(m.mem)
	}
	unix.Close(m.fd)
}
