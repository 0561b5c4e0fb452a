// Package heaptest measures, for tests, how much a function grows the
// heap: the bounded-memory promises (an import, a publish, a build of a
// huge article) are held by tests that run the real code and look.
package heaptest

import (
	"runtime"
	"runtime/metrics"
	"sync/atomic"
	"time"
)

// Growth runs f and returns by how much the heap's objects grew at most
// meanwhile, over what they were after a collection before it, sampled
// every millisecond. Garbage not yet collected counts: it is an upper
// bound of what f holds.
func Growth(f func()) uint64 {
	const name = "/memory/classes/heap/objects:bytes"
	runtime.GC()
	s := []metrics.Sample{{Name: name}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: name}}
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-done:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}
