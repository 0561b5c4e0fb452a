//go:build linux

package server

import (
	"errors"
	"net"
	"runtime"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// store holds pages of builds, back to back, in a memory file (memfd):
// filled with pwrite at offsets given out by reserve, from any number of
// goroutines, then sealed: mapped read-only, so that its pages are byte
// slices like any other, and sent to clients with sendfile, so that the
// kernel hands them to the socket without a copy. A sealed store never
// changes. It is freed once unreachable; a site keeps the stores of its
// pages reachable.
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

// reserve returns the offset of n new bytes (see placeAt).
func (s *store) reserve(n int64) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	at := placeAt(s.size, n)
	s.size = at + n
	return at
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

// sender writes answers to one connection. It keeps the state of the
// answer being written, so that its write function is made once per
// connection rather than once per answer.
type sender struct {
	conn  *net.TCPConn
	raw   syscall.RawConn
	write func(fd uintptr) bool // s.writeFD

	head   []byte
	fd     int
	off, n int64
	err    error
}

func newSender(c *net.TCPConn) (*sender, error) {
	raw, err := c.SyscallConn()
	s := &sender{conn: c, raw: raw}
	s.write = s.writeFD
	return s, err
}

// send writes head, then n bytes of st from off: head with MSG_MORE, so
// that it leaves in the same segment as the start of the page, and the
// page with sendfile. With n = 0 it writes head alone.
func (s *sender) send(head []byte, st *store, off, n int64) error {
	if n == 0 {
		_, err := s.conn.Write(head)
		return err
	}
	s.head, s.fd, s.off, s.n, s.err = head, st.fd, off, n, nil
	err := s.raw.Write(s.write)
	s.head = nil
	if err != nil {
		return err
	}
	return s.err
}

// writeFD writes what send asked for to the socket fd, as far as it
// goes without blocking; it returns false to be called again once the
// socket is writable.
func (s *sender) writeFD(fd uintptr) bool {
	for len(s.head) > 0 {
		w, err := unix.SendmsgN(int(fd), s.head, nil, nil, unix.MSG_MORE|unix.MSG_NOSIGNAL)
		if errors.Is(err, unix.EAGAIN) {
			return false
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			s.err = err
			return true
		}
		s.head = s.head[w:]
	}
	for s.n > 0 {
		o := s.off
		w, err := unix.Sendfile(int(fd), s.fd, &o, int(min(s.n, 1<<30)))
		if errors.Is(err, unix.EAGAIN) {
			return false
		}
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err == nil && w == 0 {
			err = errors.New("sendfile wrote nothing")
		}
		if err != nil {
			s.err = err
			return true
		}
		s.off += int64(w)
		s.n -= int64(w)
	}
	return true
}
