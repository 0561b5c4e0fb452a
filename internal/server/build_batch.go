package server

import (
	"crypto/sha256"
	"fmt"
	"sync"
)

// A Batch carries pages from the build that renders them to the server,
// in memory: a server switching to that build (Install) then reads none
// of them back from the files. The live preview hands each rebuild's
// pages over this way.
type Batch struct {
	cur *heldBuild // the build being served when the batch began

	mu   sync.Mutex
	st   *store
	refs map[[sha256.Size]byte]stored
	err  error
}

// NewBatch starts a batch of pages for the next build.
func (s *Server) NewBatch() *Batch {
	return &Batch{cur: s.cur.Load(), refs: map[[sha256.Size]byte]stored{}}
}

// NewPages starts a batch of pages for a server not made yet: the pages
// of the build its New loads (see Archive), checked by the caller
// against their SHA-256 as they are added.
func NewPages() *Batch {
	return &Batch{refs: map[[sha256.Size]byte]stored{}}
}

// Add takes a page body and its SHA-256: data is copied, unless the
// server or the batch holds these bytes already. It is safe to call from
// several goroutines at once.
func (b *Batch) Add(data []byte, sum [sha256.Size]byte) {
	if b.cur != nil {
		if at, ok := b.cur.bySum[sum]; ok && at.size == int64(len(data)) {
			return
		}
	}
	b.mu.Lock()
	if _, ok := b.refs[sum]; ok || b.err != nil {
		b.mu.Unlock()
		return
	}
	if b.st == nil {
		if b.st, b.err = newStore(); b.err != nil {
			b.mu.Unlock()
			return
		}
	}
	at := stored{st: b.st, off: b.st.reserve(int64(len(data))), size: int64(len(data))}
	b.refs[sum] = at
	b.mu.Unlock()
	if err := b.st.writeAt(data, at.off); err != nil {
		b.mu.Lock()
		b.err = err
		b.mu.Unlock()
	}
}

// lookup returns where the batch holds the body with SHA-256 sum. A nil
// batch holds nothing.
func (b *Batch) lookup(sum [sha256.Size]byte) (stored, bool) {
	if b == nil {
		return stored{}, false
	}
	at, ok := b.refs[sum]
	return at, ok
}

// seal ends the batch: no more Add.
func (b *Batch) seal() error {
	if b == nil {
		return nil
	}
	if b.err != nil {
		return fmt.Errorf("keeping the pages in memory: %w", b.err)
	}
	if b.st == nil {
		return nil
	}
	if err := b.st.seal(); err != nil {
		return fmt.Errorf("mapping the pages: %w", err)
	}
	return nil
}

// Discard drops a batch whose build failed. A nil batch is nothing to drop.
func (b *Batch) Discard() {
	if b == nil {
		return
	}
	if b.st != nil {
		b.st.discard()
	}
	b.st, b.refs = nil, nil
}
