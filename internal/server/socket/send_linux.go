//go:build linux

package socket

import (
	"io"
	"net"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A Sender reads requests from one connection and writes their answers.
// It keeps the state of the call under way, so that the functions that
// make the system calls are made once per connection rather than once per
// call.
//
// Its system calls are made without telling the Go scheduler
// (RawSyscall): on a non-blocking socket (every net.Conn's is) and a
// non-blocking pipe, they never wait for the peer. Told, the scheduler
// hands the goroutine's P to another thread whenever a call is seen
// running across a tick of sysmon (20µs: a thread the kernel runs
// something else on meanwhile, the client on the same cores, say), which
// then keeps sysmon waking every 20µs, and the threads take turns on the
// Ps: that churn cost more than a tenth of each answer. The price: a page
// body that is no longer in the page cache is read from the disk within
// the call (vmsplice, writev of a mapped body, sendfile), the P waiting
// for it, as an nginx worker does.
type Sender struct {
	conn      *net.TCPConn
	raw       syscall.RawConn
	pipes     *Pipes
	readFn    func(fd uintptr) bool // s.readFD
	writeFile func(fd uintptr) bool // s.writeFileFD

	buf         []byte // read: where to, and how many bytes came
	got         int
	head        []byte
	parts       [][]byte              // SendVec: what is left to write, in vec
	vec         [][]byte              // SendVec's storage
	one         [1][]byte             // SendBytes's body, as parts
	iovs        []unix.Iovec          // SendVec's
	writeVec    func(fd uintptr) bool // s.writeVecFD
	spliceVec   func(fd uintptr) bool // s.spliceVecFD
	pipe        splicePipe            // splice: the pipe, and how many bytes it holds
	inPipe      int
	spliced     bool  // splice: some of the body went into the pipe
	unsupported bool  // splice: vmsplice does not work here
	file        int   // the page file being sent (sendFile)
	off, n      int64 // where in it, and how many bytes are left
	err         error
}

// NewSender returns the sender of connection c; it splices page bodies
// through the pipes of pipes (nil: never).
func NewSender(c *net.TCPConn, pipes *Pipes) (*Sender, error) {
	raw, err := c.SyscallConn()
	s := &Sender{conn: c, raw: raw, pipes: pipes}
	s.readFn, s.writeFile, s.writeVec, s.spliceVec = s.readFD, s.writeFileFD, s.writeVecFD, s.spliceVecFD
	return s, err
}

// Read reads from the connection into p, which is not empty, as
// net.Conn.Read does (deadlines included).
func (s *Sender) Read(p []byte) (int, error) {
	s.buf, s.got, s.err = p, 0, nil
	err := s.raw.Read(s.readFn)
	s.buf = nil
	if err != nil {
		return s.got, err
	}
	return s.got, s.err
}

// readFD reads what read asked for from the socket fd; it returns false
// to be called again once the socket is readable.
func (s *Sender) readFD(fd uintptr) bool {
	for {
		n, _, errno := unix.RawSyscall(unix.SYS_READ, fd, uintptr(unsafe.Pointer(&s.buf[0])), uintptr(len(s.buf)))
		switch errno {
		case 0:
			if n == 0 {
				s.err = io.EOF
			}
			s.got = int(n)
			return true
		case unix.EAGAIN:
			return false
		case unix.EINTR:
			continue
		}
		s.err = errno
		return true
	}
}

// spliceMin is the smallest body that is spliced rather than copied
// (when recently sent): answering one page over and over, copying was
// the faster by a tenth for pages of 4 and 7 kB, splicing by a tenth for
// pages of 15 and 27 kB.
const spliceMin = 12 << 10

// SendBytes writes head, then body. head is in the Go heap; body, when
// not empty, is not: it is a page in a store or a mapped page file, whose
// bytes never change. With splice, a body of spliceMin bytes or more is
// spliced (see SendVec); else head and body go with one writev.
func (s *Sender) SendBytes(head, body []byte, splice bool) error {
	s.one[0] = body
	err := s.SendVec(head, s.one[:], splice)
	s.one[0] = nil // keep no reference to the page
	return err
}

// maxIovecs is the most buffers one writev takes (IOV_MAX).
const maxIovecs = 1024

// SendVec writes head, then each of parts, with writev: a page put
// together from slices of chunks (mapped files, or stores). Neither parts
// nor the bytes are changed. With splice, and spliceMin bytes of parts or
// more, the parts are spliced instead, as SendBytes splices a body: then
// they must not be Go memory that may be freed or change (chunks are
// mapped or in stores; the commas and brackets between them are
// variables never written).
func (s *Sender) SendVec(head []byte, parts [][]byte, splice bool) error {
	s.vec, s.err = s.vec[:0], nil
	if len(head) > 0 {
		s.vec = append(s.vec, head)
	}
	n := 0
	for _, p := range parts {
		if len(p) > 0 {
			s.vec = append(s.vec, p)
			n += len(p)
		}
	}
	s.parts = s.vec
	var err error
	if splice && n >= spliceMin {
		if len(head) > 0 {
			s.head, s.parts = head, s.vec[1:]
		}
		err = s.spliceParts()
		if len(s.head) > 0 {
			s.parts = s.vec // no pipe: nothing was sent, the head goes first
		}
		s.head = nil
	}
	if err == nil && len(s.parts) > 0 {
		if err = s.raw.Write(s.writeVec); err == nil {
			err = s.err
		}
	}
	clear(s.vec[:cap(s.vec)]) // keep no reference to the chunks
	clear(s.iovs[:cap(s.iovs)])
	s.parts = nil
	return err
}

// spliceParts sends s.head and s.parts through a pipe of the pool: the
// head is sent (copied) with MSG_MORE, so that the kernel holds it for the
// body; the pages of the parts are put in the pipe by reference
// (vmsplice, several at a time), and the pipe is spliced into the socket,
// whose buffers then hold those very pages, as sendfile's do: the body is
// not copied before the client reads it (on loopback; a network card
// reads it from there). That is why the parts must never be Go memory
// that may be freed, and never change. Copying 27 kB pages into the
// socket instead made answers a tenth slower, the client's reads
// included. It leaves in s.head and s.parts what the
// caller is to copy: all when no pipe can be had, the rest when vmsplice
// does not work here (which turns splicing off).
func (s *Sender) spliceParts() error {
	p, ok := s.pipes.get()
	if !ok {
		return nil
	}
	s.pipe, s.inPipe, s.spliced, s.unsupported = p, 0, false, false
	err := s.raw.Write(s.spliceVec)
	if err == nil {
		err = s.err
	}
	if s.inPipe > 0 {
		s.pipes.discard(p) // holds bytes that will never be sent
	} else {
		s.pipes.put(p)
	}
	if s.unsupported {
		s.pipes.off.Store(true)
	}
	return err
}

// spliceVecFD sends what spliceParts asked for to the socket fd, as far
// as it goes without blocking; it returns false to be called again once
// the socket is writable.
func (s *Sender) spliceVecFD(fd uintptr) bool {
	if !s.sendHead(fd) {
		return s.err != nil
	}
	for len(s.parts) > 0 || s.inPipe > 0 {
		for len(s.parts) > 0 {
			s.iovs = s.iovs[:0]
			for _, p := range s.parts[:min(len(s.parts), maxIovecs)] {
				s.iovs = append(s.iovs, unix.Iovec{Base: &p[0]})
				s.iovs[len(s.iovs)-1].SetLen(len(p))
			}
			n, _, errno := unix.RawSyscall6(unix.SYS_VMSPLICE, uintptr(s.pipe.w), uintptr(unsafe.Pointer(&s.iovs[0])), uintptr(len(s.iovs)), unix.SPLICE_F_NONBLOCK, 0, 0)
			if errno == unix.EAGAIN {
				break // the pipe is full
			} else if errno == unix.EINTR {
				continue
			} else if errno != 0 {
				switch errno {
				case unix.ENOSYS, unix.EPERM, unix.EINVAL, unix.EOPNOTSUPP:
					s.unsupported = s.inPipe == 0 && !s.spliced
				}
				if !s.unsupported {
					s.err = errno
				}
				return true
			}
			s.inPipe, s.spliced = s.inPipe+int(n), true
			s.dropParts(int(n))
		}
		flags := uintptr(unix.SPLICE_F_NONBLOCK)
		if len(s.parts) > 0 {
			flags |= unix.SPLICE_F_MORE
		}
		n, _, errno := unix.RawSyscall6(unix.SYS_SPLICE, uintptr(s.pipe.r), 0, fd, 0, uintptr(s.inPipe), flags)
		switch errno {
		case 0:
			if n == 0 {
				s.err = io.ErrShortWrite
				return true
			}
			s.inPipe -= int(n)
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

// dropParts drops the first n bytes of s.parts, written.
func (s *Sender) dropParts(n int) {
	for n > 0 {
		if k := len(s.parts[0]); n >= k {
			s.parts, n = s.parts[1:], n-k
		} else {
			s.parts[0], n = s.parts[0][n:], 0
		}
	}
}

// writeVecFD writes s.parts to the socket fd, with writev, as far as it
// goes without blocking; it returns false to be called again once the
// socket is writable.
func (s *Sender) writeVecFD(fd uintptr) bool {
	for len(s.parts) > 0 {
		s.iovs = s.iovs[:0]
		for _, p := range s.parts[:min(len(s.parts), maxIovecs)] {
			s.iovs = append(s.iovs, unix.Iovec{Base: &p[0]})
			s.iovs[len(s.iovs)-1].SetLen(len(p))
		}
		w, _, errno := unix.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&s.iovs[0])), uintptr(len(s.iovs)))
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
		s.dropParts(int(w))
	}
	return true
}

// sendHead sends s.head with MSG_MORE, so that the kernel holds it for
// the body, as far as it goes without blocking: false when the socket is
// full (call again once it is writable) or s.err is set.
func (s *Sender) sendHead(fd uintptr) bool {
	for len(s.head) > 0 {
		n, _, errno := unix.RawSyscall6(unix.SYS_SENDTO, fd, uintptr(unsafe.Pointer(&s.head[0])), uintptr(len(s.head)), unix.MSG_MORE|unix.MSG_NOSIGNAL, 0, 0)
		switch errno {
		case 0:
			if n == 0 {
				s.err = io.ErrShortWrite
				return false
			}
			s.head = s.head[n:]
		case unix.EAGAIN:
			return false
		case unix.EINTR:
		default:
			s.err = errno
			return false
		}
	}
	return true
}

// SendFile writes head, then n bytes of the open file fd from off: the
// head with MSG_MORE, so that the kernel holds it for the body, and the
// body with sendfile(2) at an explicit offset, which leaves the file's
// own position alone (answers from one file are sent at once on other
// connections).
func (s *Sender) SendFile(head []byte, fd int, off, n int64) error {
	if n == 0 {
		return s.SendBytes(head, nil, false)
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
func (s *Sender) writeFileFD(fd uintptr) bool {
	if !s.sendHead(fd) {
		return s.err != nil
	}
	for s.n > 0 {
		w, _, errno := unix.RawSyscall6(unix.SYS_SENDFILE, fd, uintptr(s.file), uintptr(unsafe.Pointer(&s.off)), uintptr(min(s.n, 1<<30)), 0, 0)
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
