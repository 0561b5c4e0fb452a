//go:build !linux

package server

import (
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
