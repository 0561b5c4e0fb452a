package retry

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	errBusy     = errors.New("busy")      // transient
	errSlowDown = errors.New("slow down") // transient, throttled
	errDenied   = errors.New("denied")    // not transient
	errRaced    = errors.New("raced")     // transient, tried again without a word
)

// TestDo runs Policy.Do on operations that fail so many times with an
// error, and checks the tries, the waits (the policy's Sleep: none real)
// and what is said.
func TestDo(t *testing.T) {
	const backoff = 100 * time.Millisecond
	throttle := Throttle{Retries: 7, Factor: 4, Max: time.Second}
	tests := []struct {
		name     string
		pol      Policy
		failures int // calls that fail before one succeeds
		err      error
		calls    int
		waits    []time.Duration // the longest of each wait (Jitter: each at least half)
		wantErr  bool
		said     int // lines
	}{
		{"success", Policy{Retries: 2}, 0, nil, 1, nil, false, 0},
		{"transient, then success", Policy{Retries: 2}, 2, errBusy, 3, []time.Duration{backoff, 2 * backoff}, false, 2},
		{"transient every time", Policy{Retries: 2}, 10, errBusy, 3, []time.Duration{backoff, 2 * backoff}, true, 2},
		{"not transient", Policy{Retries: 2}, 10, errDenied, 1, nil, true, 0},
		{"no retries", Policy{}, 10, errBusy, 1, nil, true, 0},
		{"no retries, throttled", Policy{}, 10, errSlowDown, 1, nil, true, 0},
		{"backoff bounded", Policy{Retries: 4, MaxBackoff: 300 * time.Millisecond}, 10, errBusy, 5,
			[]time.Duration{backoff, 2 * backoff, 300 * time.Millisecond, 300 * time.Millisecond}, true, 4},
		{"throttled every time", Policy{Retries: 2, Jitter: true}, 10, errSlowDown, 8,
			[]time.Duration{4 * backoff, 8 * backoff, time.Second, time.Second, time.Second, time.Second, time.Second}, true, 7},
		{"throttled, more retries than the throttle's", Policy{Retries: 9}, 20, errSlowDown, 10,
			[]time.Duration{4 * backoff, 8 * backoff, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second, time.Second}, true, 9},
		{"asked to wait", Policy{Retries: 1, After: func(error) time.Duration { return 250 * time.Millisecond }}, 10, errBusy, 2,
			[]time.Duration{250 * time.Millisecond}, true, 1},
		{"asked to wait too long", Policy{Retries: 1, MaxBackoff: 200 * time.Millisecond, After: func(error) time.Duration { return time.Hour }}, 10, errBusy, 2,
			[]time.Duration{200 * time.Millisecond}, true, 1},
		{"silent", Policy{Retries: 2}, 10, errRaced, 3, []time.Duration{backoff, 2 * backoff}, true, 0},
		{"a stall is transient", Policy{Retries: 1, Transient: func(error) bool { return false }}, 10, &StallError{After: time.Second}, 2,
			[]time.Duration{backoff}, true, 1},
		{"cancelled is not", Policy{Retries: 3}, 10, context.Canceled, 1, nil, true, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				waits []time.Duration
				said  strings.Builder
			)
			pol := tt.pol
			pol.Backoff = backoff
			if pol.Transient == nil {
				pol.Transient = func(err error) bool { return err != errDenied }
			}
			pol.Throttled = func(err error) bool { return err == errSlowDown }
			pol.Throttle = throttle
			pol.Silent = func(err error) bool { return err == errRaced }
			pol.Notices = &Notices{W: &said, Clock: func() time.Time { return time.Unix(int64(len(waits))*10, 0) }}
			pol.Sleep = func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }
			calls := 0
			err := pol.Do(context.Background(), "uploading x", func(_ context.Context, try int) error {
				calls++
				if try != calls {
					t.Errorf("call %d was given try %d", calls, try)
				}
				if calls <= tt.failures {
					return tt.err
				}
				return nil
			})
			if calls != tt.calls || (err != nil) != tt.wantErr || err != nil && !errors.Is(err, tt.err) {
				t.Fatalf("got %d calls, error %v; want %d calls, error %v", calls, err, tt.calls, tt.wantErr)
			}
			if len(waits) != len(tt.waits) {
				t.Fatalf("waited %v, want %v", waits, tt.waits)
			}
			for i, d := range waits {
				if w, lo := tt.waits[i], tt.waits[i]; d > w || d < lo/2 || !pol.Jitter && d != w {
					t.Errorf("wait %d: %v, want %v (jitter %v)", i+1, d, w, pol.Jitter)
				}
			}
			var lines []string
			if said.Len() > 0 {
				lines = strings.Split(strings.TrimSuffix(said.String(), "\n"), "\n")
			}
			if len(lines) != tt.said {
				t.Fatalf("said %q, want %d lines", said.String(), tt.said)
			}
			if tt.said > 0 {
				want := "uploading x: " + tt.err.Error() + " (try 1 of " + strconv.Itoa(tt.calls) + "); trying again"
				if lines[0] != want {
					t.Errorf("said %q, want %q first", lines[0], want)
				}
			}
			if se := (*StallError)(nil); errors.As(err, &se) && se.Tries != tt.calls {
				t.Errorf("a stall after %d tries says %d", tt.calls, se.Tries)
			}
		})
	}
}

// TestDoCancelled cancels the context while Do waits to try again: it
// returns the last error at once, with one try made.
func TestDoCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	calls := 0
	start := time.Now()
	err := Policy{Retries: 5, Backoff: time.Hour}.Do(ctx, "x", func(context.Context, int) error {
		calls++
		cancel()
		return errBusy
	})
	if calls != 1 || err != errBusy || time.Since(start) > 10*time.Second {
		t.Errorf("got %d calls, error %v after %s; want 1 call and its error at once", calls, err, time.Since(start))
	}
}

// TestNotices: of the requests at one try, one line a second is said.
func TestNotices(t *testing.T) {
	var b strings.Builder
	now := time.Unix(0, 0)
	n := &Notices{W: &b, Clock: func() time.Time { return now }}
	n.SayTry(1, "a 1")
	n.SayTry(1, "b 1")    // the same second: not said
	n.SayTry(2, "a 2")    // another try
	n.Say("always %d", 1) // not a try's
	now = now.Add(time.Second)
	n.SayTry(1, "c 1")
	if got, want := b.String(), "a 1\na 2\nalways 1\nc 1\n"; got != want {
		t.Errorf("said %q, want %q", got, want)
	}
	var none *Notices
	none.Say("nothing") // a nil Notices says nothing
}

// TestSleep: Sleep returns at once when its context is done.
func TestSleep(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Sleep(ctx, time.Hour); err != context.Canceled {
		t.Errorf("got %v", err)
	}
	if err := Sleep(context.Background(), time.Millisecond); err != nil {
		t.Errorf("got %v", err)
	}
}

func TestTries(t *testing.T) {
	for n, want := range map[int]string{0: "tried once", 1: "tried once", 3: "tried 3 times"} {
		if got := Tries(n); got != want {
			t.Errorf("Tries(%d) = %q, want %q", n, got, want)
		}
	}
}
