//go:build linux

package server

import (
	"errors"
	"io"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
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

// sender reads requests from one connection and writes their answers.
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
type sender struct {
	conn      *net.TCPConn
	raw       syscall.RawConn
	pipes     *pipePool
	readFn    func(fd uintptr) bool // s.readFD
	write     func(fd uintptr) bool // s.writeFD
	spliceFn  func(fd uintptr) bool // s.spliceFD
	writeFile func(fd uintptr) bool // s.writeFileFD

	buf         []byte // read: where to, and how many bytes came
	got         int
	head, body  []byte
	iov         [2]unix.Iovec
	pipe        splicePipe // splice: the pipe, and how many bytes it holds
	inPipe      int
	spliced     bool  // splice: some of the body went into the pipe
	unsupported bool  // splice: vmsplice does not work here
	file        int   // the page file being sent (sendFile)
	off, n      int64 // where in it, and how many bytes are left
	err         error
}

// newSender returns the sender of connection c; it splices page bodies
// through the pipes of pipes (nil: never).
func newSender(c *net.TCPConn, pipes *pipePool) (*sender, error) {
	raw, err := c.SyscallConn()
	s := &sender{conn: c, raw: raw, pipes: pipes}
	s.readFn, s.write, s.spliceFn, s.writeFile = s.readFD, s.writeFD, s.spliceFD, s.writeFileFD
	return s, err
}

// read reads from the connection into p, which is not empty, as
// net.Conn.Read does (deadlines included).
func (s *sender) read(p []byte) (int, error) {
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
func (s *sender) readFD(fd uintptr) bool {
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

// sendBytes writes head, then body. head is in the Go heap; body, when
// not empty, is not: it is a page in a store or a mapped page file, whose
// bytes never change. With splice, a body of spliceMin bytes or more is
// spliced (see splice); else head and body go with one writev.
func (s *sender) sendBytes(head, body []byte, splice bool) error {
	s.head, s.body, s.err = head, body, nil
	var err error
	if splice {
		err = s.splice()
	}
	if err == nil && len(s.head)+len(s.body) > 0 {
		if err = s.raw.Write(s.write); err == nil {
			err = s.err
		}
	}
	s.head, s.body, s.iov = nil, nil, [2]unix.Iovec{} // keep no reference to the page
	return err
}

// writeFD writes s.head and s.body to the socket fd, with writev, as far
// as it goes without blocking; it returns false to be called again once
// the socket is writable.
func (s *sender) writeFD(fd uintptr) bool {
	for len(s.head)+len(s.body) > 0 {
		iov := s.iov[:0]
		for _, b := range [2][]byte{s.head, s.body} {
			if len(b) > 0 {
				iov = append(iov, unix.Iovec{Base: &b[0]})
				iov[len(iov)-1].SetLen(len(b))
			}
		}
		w, _, errno := unix.RawSyscall(unix.SYS_WRITEV, fd, uintptr(unsafe.Pointer(&iov[0])), uintptr(len(iov)))
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

// splice sends s.head and, when it has spliceMin bytes or more, s.body,
// through a pipe of the pool: the head is sent (copied) with MSG_MORE,
// so that the kernel holds it for the body; the pages of the body are
// put in the pipe by reference (vmsplice), and the pipe is spliced into
// the socket, whose buffers then hold those very pages, as sendfile's
// do: the body is not copied before the client reads it (on loopback; a
// network card reads it from there). That is why the body must never be
// Go memory, and never change. Copying 27 kB pages into the socket
// instead made answers a tenth slower, the client's reads included.
//
// It leaves in s.head and s.body what the caller is to copy: both when
// the body is smaller or no pipe can be had; the body when vmsplice does
// not work here (which turns splicing off).
func (s *sender) splice() error {
	if len(s.body) < spliceMin {
		return nil
	}
	p, ok := s.pipes.get()
	if !ok {
		return nil
	}
	s.pipe, s.inPipe, s.spliced, s.unsupported = p, 0, false, false
	err := s.raw.Write(s.spliceFn)
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

// sendHead sends s.head with MSG_MORE, so that the kernel holds it for
// the body, as far as it goes without blocking: false when the socket is
// full (call again once it is writable) or s.err is set.
func (s *sender) sendHead(fd uintptr) bool {
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

// spliceFD sends what splice asked for to the socket fd, as far as it
// goes without blocking; it returns false to be called again once the
// socket is writable.
func (s *sender) spliceFD(fd uintptr) bool {
	if !s.sendHead(fd) {
		return s.err != nil
	}
	for len(s.body) > 0 || s.inPipe > 0 {
		for len(s.body) > 0 {
			s.iov[0] = unix.Iovec{Base: &s.body[0]}
			s.iov[0].SetLen(len(s.body))
			n, _, errno := unix.RawSyscall6(unix.SYS_VMSPLICE, uintptr(s.pipe.w), uintptr(unsafe.Pointer(&s.iov[0])), 1, unix.SPLICE_F_NONBLOCK, 0, 0)
			if errno == unix.EAGAIN {
				break // the pipe is full
			} else if errno == unix.EINTR {
				continue
			} else if errno != 0 {
				switch errno {
				case unix.ENOSYS, unix.EPERM, unix.EINVAL, unix.EOPNOTSUPP:
					// Not allowed here (a seccomp filter, say): the
					// body, untouched, is copied instead.
					s.unsupported = s.inPipe == 0 && !s.spliced
				}
				if !s.unsupported {
					s.err = errno
				}
				return true
			}
			s.body, s.inPipe, s.spliced = s.body[n:], s.inPipe+int(n), true
		}
		flags := uintptr(unix.SPLICE_F_NONBLOCK)
		if len(s.body) > 0 {
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

// splicePipe is a pipe, non-blocking: its read and write ends.
type splicePipe struct{ r, w int }

// The most pipes a pool keeps empty, and has at all: an answer to a
// client that reads slowly holds its pipe until the client has read all
// but what the socket's buffer takes, and a crowd of such clients must
// not take the descriptors that connections and page files need. Past
// maxPipes, bodies are copied.
const (
	maxIdlePipes = 16
	maxPipes     = 128
)

// pipePool keeps the pipes that page bodies are spliced through (see
// sender.splice), for the connections of one Serve: one is taken for
// each answer and given back empty, so that there are about as many as
// answers being sent at once, not one per connection.
type pipePool struct {
	mu     sync.Mutex
	free   []splicePipe
	open   int // pipes, free or in use
	closed bool
	off    atomic.Bool // vmsplice does not work here (a seccomp filter, say)
}

// get returns an empty pipe: false when none can be had.
func (pp *pipePool) get() (splicePipe, bool) {
	if pp == nil || pp.off.Load() {
		return splicePipe{}, false
	}
	pp.mu.Lock()
	if n := len(pp.free); n > 0 {
		p := pp.free[n-1]
		pp.free = pp.free[:n-1]
		pp.mu.Unlock()
		return p, true
	}
	if pp.open >= maxPipes {
		pp.mu.Unlock()
		return splicePipe{}, false
	}
	pp.open++
	pp.mu.Unlock()
	var fds [2]int
	if err := unix.Pipe2(fds[:], unix.O_CLOEXEC|unix.O_NONBLOCK); err != nil {
		pp.mu.Lock()
		pp.open--
		pp.mu.Unlock()
		return splicePipe{}, false
	}
	return splicePipe{fds[0], fds[1]}, true
}

// put gives back an empty pipe from get.
func (pp *pipePool) put(p splicePipe) {
	pp.mu.Lock()
	if !pp.closed && len(pp.free) < maxIdlePipes {
		pp.free = append(pp.free, p)
		pp.mu.Unlock()
		return
	}
	pp.mu.Unlock()
	pp.discard(p)
}

// discard closes a pipe from get.
func (pp *pipePool) discard(p splicePipe) {
	unix.Close(p.r)
	unix.Close(p.w)
	pp.mu.Lock()
	pp.open--
	pp.mu.Unlock()
}

// close closes the pool's free pipes; those in use are closed when given
// back.
func (pp *pipePool) close() {
	pp.mu.Lock()
	free := pp.free
	pp.free, pp.closed = nil, true
	pp.mu.Unlock()
	for _, p := range free {
		pp.discard(p)
	}
}

// sendFile writes head, then n bytes of the open file fd from off: the
// head with MSG_MORE, so that the kernel holds it for the body, and the
// body with sendfile(2) at an explicit offset, which leaves the file's
// own position alone (answers from one file are sent at once on other
// connections).
func (s *sender) sendFile(head []byte, fd int, off, n int64) error {
	if n == 0 {
		return s.sendBytes(head, nil, false)
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
