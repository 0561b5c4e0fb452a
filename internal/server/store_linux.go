//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"syscall"
	"unsafe"

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

// sender writes answers to one connection. It keeps the state of the
// answer being written, so that its write functions are made once per
// connection rather than once per answer.
type sender struct {
	conn      *net.TCPConn
	raw       syscall.RawConn
	write     func(fd uintptr) bool // s.writeFD
	writeFile func(fd uintptr) bool // s.writeFileFD

	head, body []byte
	iov        [2]unix.Iovec
	file       int   // the page file being sent (sendFile)
	off, n     int64 // where in it, and how many bytes are left
	err        error
}

func newSender(c *net.TCPConn) (*sender, error) {
	raw, err := c.SyscallConn()
	s := &sender{conn: c, raw: raw}
	s.write, s.writeFile = s.writeFD, s.writeFileFD
	return s, err
}

// sendBytes writes head, then body, with one writev: for a body in
// memory (a page in a store, mapped, or a small one in the Go heap).
func (s *sender) sendBytes(head, body []byte) error {
	if len(body) == 0 {
		_, err := s.conn.Write(head)
		return err
	}
	s.head, s.body, s.err = head, body, nil
	err := s.raw.Write(s.write)
	s.head, s.body, s.iov = nil, nil, [2]unix.Iovec{} // keep no reference to the page
	if err != nil {
		return err
	}
	return s.err
}

// writeFD writes what sendBytes asked for to the socket fd, as far as it
// goes without blocking; it returns false to be called again once the
// socket is writable.
func (s *sender) writeFD(fd uintptr) bool {
	for len(s.head)+len(s.body) > 0 {
		iov := s.iov[:0]
		for _, b := range [2][]byte{s.head, s.body} {
			if len(b) > 0 {
				iov = append(iov, unix.Iovec{Base: &b[0]})
				iov[len(iov)-1].SetLen(len(b))
			}
		}
		w, _, errno := unix.Syscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
		switch errno {
		case 0:
			if w == 0 {
				s.err = io.ErrShortWrite
				return true
			}
		case unix.EAGAIN:
			return false
		case unix.EINTR:
			continue
		default:
			s.err = errno
			return true
		}
		h := min(int(w), len(s.head))
		s.head, s.body = s.head[h:], s.body[int(w)-h:]
	}
	return true
}

// sendFile writes head, then n bytes of the open file fd from off: the
// head with MSG_MORE, so that the kernel holds it for the body, and the
// body with sendfile(2) at an explicit offset, which leaves the file's
// own position alone (answers from one file are sent at once on other
// connections).
func (s *sender) sendFile(head []byte, fd int, off, n int64) error {
	if n == 0 {
		_, err := s.conn.Write(head)
		return err
	}
	s.head, s.file, s.off, s.n, s.err = head, fd, off, n, nil
	err := s.raw.Write(s.writeFile)
	s.head, s.file = nil, -1
	if err != nil {
		return err
	}
	return s.err
}

// writeFileFD writes what sendFile asked for to the socket fd, as far as
// it goes without blocking; it returns false to be called again once the
// socket is writable.
func (s *sender) writeFileFD(fd uintptr) bool {
	for len(s.head) > 0 {
		w, _, errno := unix.Syscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&s.head[0])), uintptr(len(s.head)), unix.MSG_MORE|unix.MSG_NOSIGNAL, 0, 0)
		switch errno {
		case 0:
			if w == 0 {
				s.err = io.ErrShortWrite
				return true
			}
			s.head = s.head[w:]
		case unix.EAGAIN:
			return false
		case unix.EINTR:
		default:
			s.err = errno
			return true
		}
	}
	for s.n > 0 {
		w, _, errno := unix.Syscall6(unix.SYS_SENDFILE, fd, uintptr(s.file), uintptr(unsafe.Pointer(&s.off)), uintptr(min(s.n, 1<<30)), 0, 0)
		switch errno {
		case 0:
			if w == 0 {
				s.err = io.ErrUnexpectedEOF // the file is shorter than it was
				return true
			}
			s.n -= int64(w) // sendfile moved s.off
		case unix.EAGAIN:
			return false
		case unix.EINTR:
		default:
			s.err = errno
			return true
		}
	}
	return true
}
