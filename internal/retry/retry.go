// Package retry runs a request again while it fails with an error that
// may go away, as restic's backend/retry wraps every backend: the one
// mechanism of feedgen's requests (publish's to a bucket, import's to a
// site). A Policy says how many tries, how long to wait between them
// (backoff, doubled; longer for a service that throttles, or as long as
// it asks), and where each new try is said; a Detector stops an attempt
// that stalls or trickles, with a *StallError that counts as a transient
// failure.
package retry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"sync"
	"time"
)

// DefaultMaxBackoff bounds a wait between two tries when
// Policy.MaxBackoff is 0.
const DefaultMaxBackoff = 30 * time.Second

// Policy is how a request is tried.
type Policy struct {
	// Retries is how many more times a request is tried after a
	// transient failure; 0 or less: none.
	Retries int
	// Backoff is the wait before the second try; each next one is
	// twice as long, up to MaxBackoff (DefaultMaxBackoff when 0).
	Backoff, MaxBackoff time.Duration
	// Jitter draws each wait between half of it and all of it, so that
	// requests that failed together do not come back together.
	Jitter bool
	// Transient reports whether an error may go away when the request
	// is tried again; nil: any error but a cancelled context's. A
	// *StallError always may.
	Transient func(error) bool
	// Throttled reports whether an error is a service asking for fewer
	// requests: such a request is tried Throttle.Retries more times
	// (when Retries allows any), waiting Throttle.Factor times Backoff,
	// then twice as long each time, up to Throttle.Max. nil: never.
	Throttled func(error) bool
	Throttle  Throttle
	// After returns how long the service asked to be left alone (a
	// Retry-After): waited when longer than the backoff, up to
	// MaxBackoff. nil: never.
	After func(error) time.Duration
	// Notices is where each new try is said, naming the request and
	// why the one before failed (see Notices.SayTry); nil: nowhere.
	Notices *Notices
	// Why says in a few words why a try failed; nil: its error's text
	// (a *StallError's always).
	Why func(error) string
	// Silent reports a failure that is tried again without a word;
	// nil: none.
	Silent func(error) bool
	// Sleep waits d, or until ctx is done (its error then): the tests'
	// own clock; nil: Sleep.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Throttle is how a service that throttles is tried (Policy.Throttled).
type Throttle struct {
	Retries int
	Factor  int
	Max     time.Duration
}

// Do runs op, and runs it again while it fails with a transient error,
// as the policy says; what names the request in what is said ("uploading
// articles/20/0.json", a URL). op is given its try, 1 the first. Do
// returns op's last error as it is, but a *StallError's Tries is set to
// the number of tries made; a cancelled ctx stops the wait between two
// tries and returns the last error.
func (p Policy) Do(ctx context.Context, what string, op func(ctx context.Context, try int) error) error {
	maxWait := p.MaxBackoff
	if maxWait <= 0 {
		maxWait = DefaultMaxBackoff
	}
	wait, slow := p.Backoff, min(time.Duration(p.Throttle.Factor)*p.Backoff, p.Throttle.Max)
	for attempt := 0; ; attempt++ {
		err := op(ctx, attempt+1)
		limit, next := p.Retries, &wait
		if err != nil && p.Retries > 0 && p.Throttled != nil && p.Throttled(err) {
			limit, next = max(p.Retries, p.Throttle.Retries), &slow
		}
		if err == nil || attempt >= limit || ctx.Err() != nil || !p.transient(err) {
			if se := (*StallError)(nil); errors.As(err, &se) {
				se.Tries = attempt + 1
			}
			return err
		}
		d := *next
		if p.Jitter {
			d = d/2 + rand.N(d/2+1)
		}
		if p.After != nil {
			d = max(d, p.After(err))
		}
		d = min(d, maxWait)
		if p.Silent == nil || !p.Silent(err) {
			p.Notices.SayTry(attempt+1, "%s: %s (try %d of %d); trying again", what, p.why(err), attempt+1, limit+1)
		}
		if p.sleep(ctx, d) != nil {
			return err
		}
		wait, slow = min(2*wait, maxWait), min(2*slow, p.Throttle.Max)
		if next == &slow {
			wait = p.Backoff // a failure after throttling starts again
		}
	}
}

func (p Policy) transient(err error) bool {
	if se := (*StallError)(nil); errors.As(err, &se) {
		return true
	}
	if errors.Is(err, context.Canceled) {
		return false
	}
	return p.Transient == nil || p.Transient(err)
}

func (p Policy) why(err error) string {
	if se := (*StallError)(nil); errors.As(err, &se) || p.Why == nil {
		return err.Error()
	}
	return p.Why(err)
}

func (p Policy) sleep(ctx context.Context, d time.Duration) error {
	if p.Sleep != nil {
		return p.Sleep(ctx, d)
	}
	return Sleep(ctx, d)
}

// Sleep waits d, or until ctx is done: then it returns ctx's error.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Tries says how many tries there were: "tried once", "tried 3 times".
func Tries(n int) string {
	if n <= 1 {
		return "tried once"
	}
	return fmt.Sprintf("tried %d times", n)
}

// Notices writes what requests meet while they run, a line at a time.
// Of the requests tried again together (a service that stopped answering
// all of them), one line a second is said per try. A nil *Notices, or
// one with no W, says nothing.
type Notices struct {
	W     io.Writer
	Clock func() time.Time // time.Now when nil

	mu   sync.Mutex
	last map[int]time.Time // when a line of each try was said
}

// Say writes a line.
func (n *Notices) Say(format string, args ...any) { n.SayTry(0, format, args...) }

// SayTry writes a line of a request's try (1 the first), unless one of
// that try was said less than a second ago.
func (n *Notices) SayTry(try int, format string, args ...any) {
	if n == nil || n.W == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if try > 0 {
		now := time.Now()
		if n.Clock != nil {
			now = n.Clock()
		}
		if last, ok := n.last[try]; ok && now.Sub(last) < time.Second {
			return
		}
		if n.last == nil {
			n.last = map[int]time.Time{}
		}
		n.last[try] = now
	}
	fmt.Fprintf(n.W, format+"\n", args...)
}
