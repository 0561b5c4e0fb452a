//go:build linux

package socket

import (
	"sync"
	"sync/atomic"

	"golang.org/x/sys/unix"
)

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

// Pipes keeps the pipes that page bodies are spliced through (see
// Sender.splice), for the connections of one Serve: one is taken for
// each answer and given back empty, so that there are about as many as
// answers being sent at once, not one per connection.
type Pipes struct {
	mu     sync.Mutex
	free   []splicePipe
	open   int // pipes, free or in use
	closed bool
	off    atomic.Bool // vmsplice does not work here (a seccomp filter, say)
}

// get returns an empty pipe: false when none can be had.
func (pp *Pipes) get() (splicePipe, bool) {
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
func (pp *Pipes) put(p splicePipe) {
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
func (pp *Pipes) discard(p splicePipe) {
	unix.Close(p.r)
	unix.Close(p.w)
	pp.mu.Lock()
	pp.open--
	pp.mu.Unlock()
}

// Close closes the pool's free pipes; those in use are closed when given
// back.
func (pp *Pipes) Close() {
	pp.mu.Lock()
	free := pp.free
	pp.free, pp.closed = nil, true
	pp.mu.Unlock()
	for _, p := range free {
		pp.discard(p)
	}
}
