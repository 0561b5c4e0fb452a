//go:build !linux

package server

import "net"

// store holds the pages of one build, back to back.
type store struct {
	mem []byte
}

func newStore(n int64) (*store, error) { return &store{mem: make([]byte, n)}, nil }
func (s *store) seal()                 {}
func (s *store) release()              {}

// sender writes answers to one connection.
type sender struct{ conn *net.TCPConn }

func newSender(c *net.TCPConn) (*sender, error) { return &sender{conn: c}, nil }

// send writes head, then n bytes of st from off, in one writev.
func (s *sender) send(head []byte, st *store, off, n int64) error {
	bufs := net.Buffers{head}
	if n > 0 {
		bufs = append(bufs, st.mem[off:off+n])
	}
	_, err := bufs.WriteTo(s.conn)
	return err
}
