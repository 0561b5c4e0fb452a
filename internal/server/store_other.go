//go:build !linux

package server

import (
	"errors"
	"net"
	"sync"
)

// store holds pages of builds, back to back: filled at offsets given out
// by reserve, then sealed, after which it never changes.
type store struct {
	mu     sync.Mutex
	mem    []byte
	size   int64
	sealed bool
}

func newStore() (*store, error) { return &store{}, nil }

// writeAt copies p to off, which reserve gave.
func (s *store) writeAt(p []byte, off int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(s.mem)) {
		s.mem = append(s.mem, make([]byte, end-int64(len(s.mem)))...)
	}
	copy(s.mem[off:], p)
	return nil
}

func (s *store) seal() error {
	s.sealed = true
	if int64(len(s.mem)) < s.size {
		s.mem = append(s.mem, make([]byte, s.size-int64(len(s.mem)))...)
	}
	return nil
}

func (s *store) bytes(off, n int64) []byte { return s.mem[off : off+n : off+n] }
func (s *store) discard()                  {}

// sender reads requests from one connection and writes their answers.
type sender struct{ conn *net.TCPConn }

func newSender(c *net.TCPConn, _ *pipePool) (*sender, error) { return &sender{conn: c}, nil }

// read reads from the connection into p.
func (s *sender) read(p []byte) (int, error) { return s.conn.Read(p) }

// pipePool is where the pipes that page bodies are spliced through are
// kept, on Linux; there are none here.
type pipePool struct{}

func (*pipePool) close() {}

// sendBytes writes head, then body, in one writev.
func (s *sender) sendBytes(head, body []byte, _ bool) error {
	bufs := net.Buffers{head}
	if len(body) > 0 {
		bufs = append(bufs, body)
	}
	_, err := bufs.WriteTo(s.conn)
	return err
}

// sendFile is never called: pages are sent from their files on Linux only.
func (s *sender) sendFile(head []byte, fd int, off, n int64) error {
	return errors.New("sending a page file: not supported on this system")
}
