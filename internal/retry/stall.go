package retry

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// DefaultMinRate is the slowest a request may go, on average, once it
// has taken its Stall.Timeout: a service that takes or sends a byte a
// second does not hold a command for ever.
const DefaultMinRate = 1 << 10 // bytes a second

// StallError is an attempt that made no progress for a while, or made
// too little: its context was cancelled with it (see Detector). It is a
// transient failure.
type StallError struct {
	After   time.Duration // how long without progress; the Timeout for a trickle
	Trickle bool          // the request went, but slower than MinRate
	MinRate int64         // bytes a second, of a trickle
	Sending bool          // its body stopped going: the service took no more of it
	Flag    string        // the flag that sets After, e.g. --timeout
	Tries   int           // how many tries there were, all failed: set by Policy.Do
}

func (e *StallError) Error() string {
	switch {
	case e.Trickle:
		return fmt.Sprintf("slower than %d bytes a second after %v", e.MinRate, e.After)
	case e.Sending:
		return fmt.Sprintf("nothing more sent for %v", e.After)
	}
	return fmt.Sprintf("no answer for %v", e.After)
}

// Stall is what a Detector stops.
type Stall struct {
	// After is the first bound: how long the attempt may go before its
	// first progress; 0 or less: none. Flag is the flag that sets it.
	After time.Duration
	Flag  string
	// Timeout is how long the attempt may then go without progress
	// (Detector.Progress), and the time after which it must go at
	// MinRate (DefaultMinRate when 0) on average; 0 or less: none.
	// TimeoutFlag is the flag that sets it.
	Timeout     time.Duration
	TimeoutFlag string
	MinRate     int64
	// Clock is the time the detector goes by, its bounds' and its
	// rate's: the real one when nil.
	Clock Clock
}

// Clock is the time a Detector goes by: the real one (time.Now,
// time.AfterFunc), or a test's that it advances itself.
type Clock interface {
	Now() time.Time
	// AfterFunc calls f once d has passed, as time.AfterFunc does (in
	// its own goroutine); a test's clock, when the test advances it.
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a Clock's timer, as a *time.Timer of time.AfterFunc: Stop
// and Reset report whether it was waiting.
type Timer interface {
	Stop() bool
	Reset(d time.Duration) bool
}

// realClock is the machine's time.
type realClock struct{}

func (realClock) Now() time.Time                            { return time.Now() }
func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// A Detector stops an attempt that stalls: its context is cancelled with
// a *StallError when the bound in force passes without progress, or once
// the attempt has taken Stall.Timeout at less than Stall.MinRate. Its
// methods may be called from several goroutines.
type Detector struct {
	s      Stall
	cancel context.CancelCauseFunc
	start  time.Time

	mu    sync.Mutex
	err   *StallError // changes no more once stopped
	t     Timer
	total int64
	// stopped says that the attempt was stopped with err: what comes of
	// it after (an answer's bytes arriving late) changes nothing.
	stopped bool
	// due is when the bound in force passes (zero: none): a timer that
	// fired for a bound since replaced (its callback waited for mu while
	// progress armed the next) stops nothing.
	due time.Time
}

// Detect returns a context for one attempt, which d cancels when the
// attempt stalls; call d.Stop once the attempt is done.
func Detect(ctx context.Context, s Stall) (context.Context, *Detector) {
	if s.MinRate <= 0 {
		s.MinRate = DefaultMinRate
	}
	if s.Clock == nil {
		s.Clock = realClock{}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	d := &Detector{s: s, cancel: cancel, start: s.Clock.Now(), err: &StallError{After: s.After, Flag: s.Flag, MinRate: s.MinRate}}
	d.t = s.Clock.AfterFunc(time.Hour, d.stalled)
	d.t.Stop()
	if s.After > 0 {
		d.due = d.start.Add(s.After)
		d.t.Reset(s.After)
	}
	return ctx, d
}

func (d *Detector) stalled() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.due.IsZero() || d.s.Clock.Now().Before(d.due) {
		return // the bound it fired for was replaced meanwhile
	}
	d.stop()
}

// stop stops the attempt with d.err; d.mu is held.
func (d *Detector) stop() {
	if !d.stopped {
		d.stopped = true
		d.t.Stop()
		d.cancel(d.err)
	}
}

// Arm sets the bound of the wait that starts now: after, which flag sets,
// while a body is sending or not; none when after is 0 or less.
func (d *Detector) Arm(after time.Duration, flag string, sending bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.arm(after, flag, sending)
}

func (d *Detector) arm(after time.Duration, flag string, sending bool) {
	if d.stopped {
		return
	}
	d.err.After, d.err.Flag, d.err.Sending = after, flag, sending
	if after <= 0 {
		d.due = time.Time{}
		d.t.Stop()
		return
	}
	d.due = d.s.Clock.Now().Add(after)
	d.t.Reset(after)
}

// Progress counts n more bytes of progress (0: progress that is no
// bytes, such as an answer's headers): the bound is Stall.Timeout again,
// and an attempt that has taken longer than that at less than MinRate
// is stopped.
func (d *Detector) Progress(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.progress(n, true)
}

// Count counts n more bytes, as Progress does, but leaves the bound in
// force as it is (see Arm).
func (d *Detector) Count(n int) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.progress(n, false)
}

func (d *Detector) progress(n int, rearm bool) {
	if d.stopped {
		return
	}
	if rearm {
		d.arm(d.s.Timeout, d.s.TimeoutFlag, false)
	}
	d.total += int64(n)
	if took := d.s.Clock.Now().Sub(d.start); d.s.Timeout > 0 && took > d.s.Timeout && float64(d.total) < took.Seconds()*float64(d.s.MinRate) {
		d.err.Trickle, d.err.After = true, d.s.Timeout
		d.stop()
	}
}

// Stop stops the detector: the attempt is done.
func (d *Detector) Stop() {
	d.mu.Lock()
	d.stopped = true
	d.t.Stop()
	d.mu.Unlock()
	d.cancel(nil)
}

// Err returns err, the attempt's, or the *StallError that stopped it.
func (d *Detector) Err(ctx context.Context, err error) error {
	if err != nil && context.Cause(ctx) == error(d.err) {
		return d.err
	}
	return err
}
