//go:build linux

package server

import (
	"errors"
	"net"
	"syscall"

	"golang.org/x/sys/unix"
)

// store holds the pages of one build, back to back, in a memory file
// (memfd): mapped read-only, so that they are byte slices like any other,
// and sent to clients with sendfile, so that the kernel hands the pages to
// the socket without a copy. A store is never written once sealed; a new
// build gets a new store.
type store struct {
	fd  int
	mem []byte
}

// newStore returns a writable store of n bytes.
func newStore(n int64) (*store, error) {
	fd, err := unix.MemfdCreate("feedgen-pages", unix.MFD_CLOEXEC)
	if err != nil {
		return nil, err
	}
	s := &store{fd: fd}
	if n > 0 {
		if err := unix.Ftruncate(fd, n); err != nil {
			unix.Close(fd)
			return nil, err
		}
		if s.mem, err = unix.Mmap(fd, 0, int(n), unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED); err != nil {
			unix.Close(fd)
			return nil, err
		}
	}
	return s, nil
}

// seal makes the store read-only: a stray write crashes instead of
// changing an answer.
func (s *store) seal() {
	if len(s.mem) > 0 {
		unix.Mprotect(s.mem, unix.PROT_READ)
	}
}

// release frees the store. Data already handed to sockets stays valid.
func (s *store) release() {
	if len(s.mem) > 0 {
		unix.Munmap(s.mem)
	}
	unix.Close(s.fd)
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
