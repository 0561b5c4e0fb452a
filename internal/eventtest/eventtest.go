// Package eventtest lets a test wait for what other goroutines do (a
// server's retries, a watcher's calls) instead of sleeping: they change
// some state through a Cond, and the test waits until a condition on that
// state holds, checked again at each change.
package eventtest

import (
	"sync"
	"testing"
	"time"
)

// A Cond guards some state and wakes the goroutines waiting on a
// condition of it each time it changes. The zero Cond is ready to use.
type Cond struct {
	mu      sync.Mutex
	changed chan struct{} // closed, and made anew, at each change
}

// Change runs f, which changes the state, with the state locked, then
// wakes the waiters.
func (c *Cond) Change(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// Read runs f, which reads the state, with the state locked.
func (c *Cond) Read(f func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f()
}

// Wait waits until cond, run with the state locked, holds, or timeout
// passes; it reports whether cond held. cond is checked at once and
// after each change, never on a timer.
func (c *Cond) Wait(timeout time.Duration, cond func() bool) bool {
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	for {
		c.mu.Lock()
		if cond() {
			c.mu.Unlock()
			return true
		}
		if c.changed == nil {
			c.changed = make(chan struct{})
		}
		changed := c.changed
		c.mu.Unlock()
		select {
		case <-changed:
		case <-deadline.C:
			return false
		}
	}
}

// A Buffer is a log that other goroutines write (a server's, a
// command's output) and the test reads, or waits on. The zero Buffer is
// ready to use.
type Buffer struct {
	cond Cond
	b    []byte
}

// Write appends p, and wakes the waiters.
func (b *Buffer) Write(p []byte) (int, error) {
	b.cond.Change(func() { b.b = append(b.b, p...) })
	return len(p), nil
}

// String returns what was written so far.
func (b *Buffer) String() string {
	var s string
	b.cond.Read(func() { s = string(b.b) })
	return s
}

// Wait waits until cond holds of what was written, or timeout passes; it
// reports whether cond held.
func (b *Buffer) Wait(timeout time.Duration, cond func(written string) bool) bool {
	return b.cond.Wait(timeout, func() bool { return cond(string(b.b)) })
}

// Returns runs f and returns what it returns, or fails the test at once
// (t.Fatalf) when f has not returned within d: for a call that must not
// block, such as an open of a named pipe that no writer opens. f is left
// running then (testfiles.FIFO's cleanup wakes a reader of its pipe).
func Returns[T any](t testing.TB, d time.Duration, what string, f func() T) T {
	t.Helper()
	done := make(chan T, 1)
	go func() { done <- f() }()
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case v := <-done:
		return v
	case <-timer.C:
		t.Fatalf("%s: still running after %s (blocked?)", what, d)
		panic("unreachable")
	}
}
