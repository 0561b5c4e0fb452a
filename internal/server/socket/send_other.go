//go:build !linux

package socket

import (
	"errors"
	"net"
)

// A Sender reads requests from one connection and writes their answers.
type Sender struct{ conn *net.TCPConn }

func NewSender(c *net.TCPConn, _ *Pipes) (*Sender, error) { return &Sender{conn: c}, nil }

// Read reads from the connection into p.
func (s *Sender) Read(p []byte) (int, error) { return s.conn.Read(p) }

// Pipes is where the pipes that page bodies are spliced through are
// kept, on Linux; there are none here.
type Pipes struct{}

// Close closes nothing.
func (*Pipes) Close() {}

// SendBytes writes head, then body, in one writev.
func (s *Sender) SendBytes(head, body []byte, _ bool) error {
	bufs := net.Buffers{head}
	if len(body) > 0 {
		bufs = append(bufs, body)
	}
	_, err := bufs.WriteTo(s.conn)
	return err
}

// sendFile is never called: pages are sent from their files on Linux only.
func (s *Sender) SendFile(head []byte, fd int, off, n int64) error {
	return errors.New("sending a page file: not supported on this system")
}

// SendVec writes head, then each of parts, in one writev.
func (s *Sender) SendVec(head []byte, parts [][]byte, _ bool) error {
	bufs := make(net.Buffers, 0, len(parts)+1)
	bufs = append(bufs, head)
	bufs = append(bufs, parts...)
	_, err := bufs.WriteTo(s.conn)
	return err
}
