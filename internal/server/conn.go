package server

import (
	"context"
	"net"
)

// A page is larger than net/http's 4 KB connection buffer, which cuts an
// answer into two writes: the headers with the start of the body, then
// the rest. Each write is a TCP segment of its own (net/http sets
// TCP_NODELAY), which the client wakes up for: on loopback that costs as
// much as all the rest of the answer. So the handler corks the connection
// while it writes a page, and the pieces go out together in one writev
// (nginx does the same with TCP_NOPUSH around sendfile).

// corkListener wraps the TCP connections it accepts in corkConns.
type corkListener struct{ net.Listener }

func (l corkListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		return &corkConn{TCPConn: tc}, nil
	}
	return c, err
}

// corkConn is a TCP connection whose writes can be held while it is
// corked and sent together when it is uncorked. Only the goroutine that
// serves the connection writes to it, so it needs no lock.
type corkConn struct {
	*net.TCPConn
	corked bool
	held   net.Buffers // the pieces held, in order
	spare  net.Buffers // held's backing array, for reuse
	copied []byte      // copies of the small pieces
	err    error       // of the last writev; the connection is closed
}

// smallWrite is the size up to which a held piece is copied: net/http
// hands over its 4 KB buffer, reused once Write returns. Larger pieces
// are the caller's own slices, a page body that does not change.
const smallWrite = 4 << 10

func (c *corkConn) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	if !c.corked {
		return c.TCPConn.Write(p)
	}
	if len(p) <= smallWrite {
		start := len(c.copied)
		c.copied = append(c.copied, p...)
		p = c.copied[start:len(c.copied):len(c.copied)]
	}
	c.held = append(c.held, p)
	return len(p), nil
}

// cork starts holding writes.
func (c *corkConn) cork() {
	c.corked = true
	c.held = c.spare[:0]
	c.copied = c.copied[:0]
}

// uncork sends what was held in one writev and stops holding writes. If
// the write fails, the connection is closed: what the client got is not
// a whole answer.
func (c *corkConn) uncork() {
	c.corked = false
	if len(c.held) == 0 {
		return
	}
	c.spare = c.held[:0]
	var err error
	if len(c.held) == 1 {
		_, err = c.TCPConn.Write(c.held[0])
	} else {
		bufs := c.held
		_, err = bufs.WriteTo(c.TCPConn)
	}
	clear(c.spare[:cap(c.spare)])
	if cap(c.copied) > 64<<10 {
		c.copied = nil // an exceptional answer: do not keep its memory
	}
	if err != nil {
		c.err = err
		c.TCPConn.Close()
	}
}

// corkKey is the context key of a request's corkConn.
type corkKey struct{}

// connContext puts a connection's corkConn in its context (see
// http.Server.ConnContext).
func connContext(ctx context.Context, c net.Conn) context.Context {
	if cc, ok := c.(*corkConn); ok {
		return context.WithValue(ctx, corkKey{}, cc)
	}
	return ctx
}
