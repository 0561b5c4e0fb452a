package retry

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestDetector runs attempts that stall, make progress, or trickle, under
// a Detector: the one that stalls or trickles is stopped with a
// *StallError that says so; the one that makes progress however long it
// takes is not.
func TestDetector(t *testing.T) {
	tests := []struct {
		name    string
		stall   Stall
		kicks   int // one every 100 ms; -1: a byte every 10 ms, for ever
		size    int // bytes a kick
		want    *StallError
		wantErr string
	}{
		{"silent", Stall{After: 30 * time.Millisecond, Flag: "--connect-timeout", Timeout: time.Second, TimeoutFlag: "--timeout"}, 0, 0,
			&StallError{After: 30 * time.Millisecond, Flag: "--connect-timeout"}, "no answer for 30ms"},
		// 2.5 s in all, never a second without progress (a loaded
		// machine's 100 ms may be many more).
		{"progress", Stall{After: time.Second, Timeout: time.Second}, 25, 64 << 10, nil, ""},
		{"no bound", Stall{}, 3, 1, nil, ""},
		{"trickle", Stall{After: 200 * time.Millisecond, Timeout: 200 * time.Millisecond, TimeoutFlag: "--timeout"}, -1, 1,
			&StallError{After: 200 * time.Millisecond, Trickle: true, Flag: "--timeout"}, "slower than 1024 bytes a second after 200ms"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, d := Detect(context.Background(), tt.stall)
			defer d.Stop()
			var err error
			switch {
			case tt.kicks == 0:
				<-ctx.Done() // a service that stopped answering
				err = ctx.Err()
			case tt.kicks < 0:
				for err == nil {
					select {
					case <-ctx.Done():
						err = ctx.Err()
					case <-time.After(10 * time.Millisecond):
						d.Progress(tt.size)
					}
				}
			default:
				for range tt.kicks {
					if err = ctx.Err(); err != nil {
						break
					}
					time.Sleep(100 * time.Millisecond)
					d.Progress(tt.size)
				}
			}
			err = d.Err(ctx, err)
			var se *StallError
			if tt.want == nil {
				if err != nil {
					t.Fatalf("got %v, want no error", err)
				}
				return
			}
			if !errors.As(err, &se) || se.Trickle != tt.want.Trickle || se.After != tt.want.After || se.Flag != tt.want.Flag || se.Error() != tt.wantErr {
				t.Fatalf("got %#v (%v), want %#v (%s)", err, err, tt.want, tt.wantErr)
			}
		})
	}
}

// TestDetectorArm: a bound armed while a body goes says so; none armed
// stops nothing; an error of the attempt's own is kept.
func TestDetectorArm(t *testing.T) {
	ctx, d := Detect(context.Background(), Stall{After: time.Hour, Timeout: time.Hour})
	d.Arm(20*time.Millisecond, "--timeout", true)
	<-ctx.Done()
	var se *StallError
	if err := d.Err(ctx, ctx.Err()); !errors.As(err, &se) || !se.Sending || se.Error() != "nothing more sent for 20ms" {
		t.Errorf("got %v", err)
	}
	d.Stop()

	ctx, d = Detect(context.Background(), Stall{After: 10 * time.Millisecond})
	d.Arm(0, "", false)
	time.Sleep(30 * time.Millisecond)
	if ctx.Err() != nil {
		t.Errorf("stopped with no bound armed: %v", context.Cause(ctx))
	}
	own := errors.New("own")
	if err := d.Err(ctx, own); err != own {
		t.Errorf("got %v, want the attempt's own error", err)
	}
	d.Stop()
}
