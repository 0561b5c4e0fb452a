package main

import (
	"sync"
	"time"
)

// sampler reads a value (a process's memory) every period, keeping the
// last one and the peak, as peak combines them.
type sampler[T any] struct {
	stopc chan struct{}
	done  chan struct{}
	mu    sync.Mutex
	max   T
	cur   T
}

// sample starts reading with read every period until stop.
func sample[T any](period time.Duration, read func() (T, error), peak func(a, b T) T) *sampler[T] {
	s := &sampler[T]{stopc: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		t := time.NewTicker(period)
		defer t.Stop()
		for {
			if v, err := read(); err == nil {
				s.mu.Lock()
				s.cur, s.max = v, peak(s.max, v)
				s.mu.Unlock()
			}
			select {
			case <-s.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return s
}

// last returns the last value read.
func (s *sampler[T]) last() T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// stop ends the sampling and returns the peak and the last value.
func (s *sampler[T]) stop() (peak, last T) {
	close(s.stopc)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.max, s.cur
}
