package retry

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// fakeClock is a Clock that stands still until the test advances it: its
// timers then fire, in the order they are due, in the test's goroutine.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	f      func()
	due    time.Time
	active bool
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1e9, 0)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := &fakeTimer{c: c, f: f, due: c.now.Add(d), active: true}
	c.timers = append(c.timers, t)
	return t
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.due, t.active = t.c.now.Add(d), true
	return was
}

// Advance moves the clock on by d, firing each timer due by then at the
// time it is due.
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	end := c.now.Add(d)
	for {
		var next *fakeTimer
		for _, t := range c.timers {
			if t.active && !t.due.After(end) && (next == nil || t.due.Before(next.due)) {
				next = t
			}
		}
		if next == nil {
			break
		}
		c.now, next.active = next.due, false
		c.mu.Unlock()
		next.f()
		c.mu.Lock()
	}
	c.now = end
	c.mu.Unlock()
}

// waiting counts the timers that have not fired nor been stopped.
func (c *fakeClock) waiting() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, t := range c.timers {
		if t.active {
			n++
		}
	}
	return n
}

// A step is what happens to an attempt under a Detector: time passes, or
// the attempt calls one of its methods.
type step struct {
	wait    time.Duration
	call    string // "progress", "count", "arm", or none
	n       int    // bytes of progress, count
	after   time.Duration
	flag    string
	sending bool
}

func wait(d time.Duration) step { return step{wait: d} }
func progress(n int) step       { return step{call: "progress", n: n} }
func count(n int) step          { return step{call: "count", n: n} }
func arm(after time.Duration, flag string, sending bool) step {
	return step{call: "arm", after: after, flag: flag, sending: sending}
}

// repeat is steps n times over.
func repeat(n int, steps ...step) []step {
	var all []step
	for range n {
		all = append(all, steps...)
	}
	return all
}

func (s step) String() string {
	switch s.call {
	case "progress", "count":
		return fmt.Sprintf("%s(%d)", s.call, s.n)
	case "arm":
		return fmt.Sprintf("arm(%v, %q, %v)", s.after, s.flag, s.sending)
	}
	return fmt.Sprintf("wait(%v)", s.wait)
}

// TestDetector runs attempts under a Detector on a clock the test
// advances: each case's steps, after the last of which the attempt must
// have just been stopped with its *StallError (want) or must still go
// (want nil). An attempt stopped a step too early or too late fails, as
// does one stopped with the wrong bound, flag or kind of stall.
func TestDetector(t *testing.T) {
	const kib = 1 << 10
	tests := []struct {
		name    string
		stall   Stall
		steps   []step
		want    *StallError
		wantErr string
	}{
		{"silent",
			Stall{After: 30 * time.Millisecond, Flag: "--connect-timeout", Timeout: time.Second, TimeoutFlag: "--timeout"},
			[]step{wait(30*time.Millisecond - 1), wait(1)},
			&StallError{After: 30 * time.Millisecond, Flag: "--connect-timeout", MinRate: DefaultMinRate}, "no answer for 30ms"},
		{"first progress, then silent: the bound is the timeout",
			Stall{After: 30 * time.Millisecond, Flag: "--connect-timeout", Timeout: time.Second, TimeoutFlag: "--timeout"},
			[]step{wait(29 * time.Millisecond), progress(64 * kib), wait(time.Second - 1), wait(1)},
			&StallError{After: time.Second, Flag: "--timeout", MinRate: DefaultMinRate}, "no answer for 1s"},
		{"progress, however long it takes",
			Stall{After: time.Second, Timeout: time.Second},
			repeat(25, wait(time.Second-1), progress(64*kib)),
			nil, ""},
		{"progress that is no bytes (an answer's headers)",
			Stall{After: time.Second, Timeout: time.Second},
			[]step{wait(time.Second - 1), progress(0), wait(time.Second - 1)},
			nil, ""},
		{"no bound",
			Stall{},
			[]step{wait(time.Hour), progress(1), wait(time.Hour), count(1), wait(time.Hour)},
			nil, ""},
		// A byte each 10ms: past the timeout, 21 bytes in 210ms.
		{"trickle",
			Stall{After: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, TimeoutFlag: "--timeout"},
			repeat(21, wait(10*time.Millisecond), progress(1)),
			&StallError{After: 200 * time.Millisecond, Trickle: true, Flag: "--timeout", MinRate: DefaultMinRate}, "slower than 1024 bytes a second after 200ms"},
		{"at the rate, then below it",
			Stall{After: time.Second, Timeout: time.Second, TimeoutFlag: "--timeout", MinRate: 100},
			append(repeat(3, wait(500*time.Millisecond), progress(50)), wait(500*time.Millisecond), progress(0)),
			&StallError{After: time.Second, Trickle: true, Flag: "--timeout", MinRate: 100}, "slower than 100 bytes a second after 1s"},
		{"slow before the timeout is no trickle",
			Stall{After: time.Second, Timeout: time.Second},
			repeat(100, wait(10*time.Millisecond-1), progress(1)),
			nil, ""},
		{"a bound armed while a body goes",
			Stall{After: time.Hour, Timeout: time.Hour},
			[]step{arm(20*time.Millisecond, "--timeout", true), wait(20*time.Millisecond - 1), wait(1)},
			&StallError{After: 20 * time.Millisecond, Flag: "--timeout", Sending: true, MinRate: DefaultMinRate}, "nothing more sent for 20ms"},
		{"counted bytes leave the bound armed",
			Stall{After: time.Hour, Timeout: time.Hour},
			[]step{arm(20*time.Millisecond, "--timeout", true), wait(15 * time.Millisecond), count(64 * kib), wait(5 * time.Millisecond)},
			&StallError{After: 20 * time.Millisecond, Flag: "--timeout", Sending: true, MinRate: DefaultMinRate}, "nothing more sent for 20ms"},
		{"counted bytes count for the rate",
			Stall{After: 2 * time.Second, Timeout: time.Second, MinRate: 100},
			[]step{wait(1500 * time.Millisecond), count(150), progress(0), wait(time.Second - 1)},
			nil, ""},
		{"progress after an armed bound: the timeout",
			Stall{After: time.Hour, Timeout: time.Second, TimeoutFlag: "--timeout"},
			[]step{arm(20*time.Millisecond, "--timeout", true), wait(10 * time.Millisecond), progress(0), wait(time.Second - 1), wait(1)},
			&StallError{After: time.Second, Flag: "--timeout", MinRate: DefaultMinRate}, "no answer for 1s"},
		{"none armed",
			Stall{After: 10 * time.Millisecond, Flag: "--timeout"},
			[]step{arm(0, "", false), wait(time.Hour)},
			nil, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := newFakeClock()
			tt.stall.Clock = clock
			ctx, d := Detect(context.Background(), tt.stall)
			for i, s := range tt.steps {
				if ctx.Err() != nil {
					t.Fatalf("stopped before step %d of %d (%v): %v", i+1, len(tt.steps), s, context.Cause(ctx))
				}
				switch s.call {
				case "progress":
					d.Progress(s.n)
				case "count":
					d.Count(s.n)
				case "arm":
					d.Arm(s.after, s.flag, s.sending)
				default:
					clock.Advance(s.wait)
				}
			}
			own := errors.New("own")
			if tt.want == nil {
				if ctx.Err() != nil {
					t.Fatalf("stopped at the last step: %v", context.Cause(ctx))
				}
				if err := d.Err(ctx, own); err != own {
					t.Errorf("got %v, want the attempt's own error", err)
				}
			} else {
				var se *StallError
				err := d.Err(ctx, ctx.Err())
				if !errors.As(err, &se) {
					t.Fatalf("got %v after the last step, want %s", err, tt.wantErr)
				}
				if *se != *tt.want || se.Error() != tt.wantErr {
					t.Fatalf("got %#v (%v), want %#v (%s)", se, se, tt.want, tt.wantErr)
				}
			}
			d.Stop()
			if n := clock.waiting(); n != 0 {
				t.Errorf("%d timers still waiting after Stop", n)
			}
			if err := d.Err(ctx, ctx.Err()); tt.want == nil && err != context.Canceled {
				t.Errorf("after Stop, got %v, want %v", err, context.Canceled)
			}
		})
	}
}

// TestDetectorRealClock: with no Clock, a Detector goes by the machine's
// time (the bound's timer fires: the test waits for that; the 10s are
// only how long it takes to fail when it never does).
func TestDetectorRealClock(t *testing.T) {
	ctx, d := Detect(context.Background(), Stall{After: time.Millisecond, Flag: "--timeout"})
	defer d.Stop()
	never := time.NewTimer(10 * time.Second)
	defer never.Stop()
	select {
	case <-ctx.Done():
	case <-never.C:
		t.Fatal("a bound of 1ms did not stop the attempt in 10s")
	}
	var se *StallError
	if err := d.Err(ctx, ctx.Err()); !errors.As(err, &se) || se.Error() != "no answer for 1ms" {
		t.Errorf("got %v, want no answer for 1ms", err)
	}
}

// TestDetectorStoppedStays checks that what an attempt does after it was
// stopped (bytes of an answer arriving late, a body going on) changes
// nothing of the error that stopped it: it still says the bound that
// passed.
func TestDetectorStoppedStays(t *testing.T) {
	clock := newFakeClock()
	ctx, d := Detect(context.Background(), Stall{After: 300 * time.Millisecond, Flag: "--connect-timeout", Timeout: time.Minute, TimeoutFlag: "--timeout", Clock: clock})
	defer d.Stop()
	clock.Advance(300 * time.Millisecond)
	if ctx.Err() == nil {
		t.Fatal("not stopped once the first bound passed")
	}
	d.Progress(100)
	d.Arm(time.Hour, "--timeout", true)
	d.Count(100)
	want := StallError{After: 300 * time.Millisecond, Flag: "--connect-timeout", MinRate: DefaultMinRate}
	var se *StallError
	if err := d.Err(ctx, ctx.Err()); !errors.As(err, &se) || *se != want || context.Cause(ctx) != error(se) {
		t.Errorf("got %v (cause %v), want %v", err, context.Cause(ctx), &want)
	}
}

// TestDetectorLateTimer fires the timer of a bound after progress
// replaced it, as a timer whose callback waited for the detector's lock
// while the progress went on: it stops nothing.
func TestDetectorLateTimer(t *testing.T) {
	clock := newFakeClock()
	ctx, d := Detect(context.Background(), Stall{After: 300 * time.Millisecond, Flag: "--connect-timeout", Timeout: time.Minute, TimeoutFlag: "--timeout", Clock: clock})
	defer d.Stop()
	clock.Advance(299 * time.Millisecond)
	d.Progress(0)
	clock.mu.Lock()
	fired := clock.timers[0].f
	clock.mu.Unlock()
	fired() // the 300ms timer, late
	if ctx.Err() != nil {
		t.Fatalf("stopped by a bound progress replaced: %v", context.Cause(ctx))
	}
	clock.Advance(time.Minute)
	if err := d.Err(ctx, ctx.Err()); err == nil || err.Error() != "no answer for 1m0s" {
		t.Errorf("got %v once the next bound passed, want no answer for 1m0s", err)
	}
}
