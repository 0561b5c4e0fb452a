package eventtest

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestWait waits for a count that other goroutines raise: Wait returns
// once it is reached, without missing the change that reached it, and
// reports false when it is never reached.
func TestWait(t *testing.T) {
	var c Cond
	n := 0
	var wg sync.WaitGroup
	for range 100 {
		wg.Go(func() { c.Change(func() { n++ }) })
	}
	if !c.Wait(10*time.Second, func() bool { return n == 100 }) {
		t.Fatal("Wait gave up before the 100th change")
	}
	wg.Wait()
	var got int
	c.Read(func() { got = n })
	if got != 100 {
		t.Fatalf("read %d, want 100", got)
	}
	start := time.Now()
	if c.Wait(50*time.Millisecond, func() bool { return n > 100 }) {
		t.Fatal("Wait reported a condition that never held")
	}
	if d := time.Since(start); d < 50*time.Millisecond {
		t.Fatalf("Wait gave up after %s, before its timeout", d)
	}
}

// TestBuffer writes lines from several goroutines while the test waits
// for the last: it sees every line whole.
func TestBuffer(t *testing.T) {
	var b Buffer
	var wg sync.WaitGroup
	for i := range 10 {
		wg.Go(func() { fmt.Fprintf(&b, "line %d\n", i) })
	}
	if !b.Wait(10*time.Second, func(s string) bool { return strings.Count(s, "\n") == 10 }) {
		t.Fatalf("got %q, want 10 lines", b.String())
	}
	wg.Wait()
	for i := range 10 {
		if !strings.Contains(b.String(), fmt.Sprintf("line %d\n", i)) {
			t.Errorf("line %d is missing from %q", i, b.String())
		}
	}
	if b.Wait(20*time.Millisecond, func(s string) bool { return strings.Contains(s, "line 10") }) {
		t.Error("Wait reported a line never written")
	}
}
