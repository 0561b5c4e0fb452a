package pool

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
)

func TestRunEveryJobOnce(t *testing.T) {
	for _, tc := range []struct{ n, workers int }{{0, 4}, {1, 4}, {5, 1}, {1000, 8}, {3, 0}} {
		seen := make([]atomic.Int32, tc.n)
		var made atomic.Int32
		err := Run(context.Background(), tc.n, tc.workers, func() func(context.Context, int) error {
			made.Add(1)
			return func(_ context.Context, i int) error { seen[i].Add(1); return nil }
		})
		if err != nil {
			t.Fatalf("n=%d: %v", tc.n, err)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n=%d workers=%d: job %d ran %d times", tc.n, tc.workers, i, c)
			}
		}
		if w := int(made.Load()); w > max(1, tc.workers) || tc.n > 0 && w == 0 {
			t.Fatalf("n=%d workers=%d: %d workers", tc.n, tc.workers, w)
		}
	}
}

func TestRunFirstErrorStops(t *testing.T) {
	boom := errors.New("boom")
	var started atomic.Int32
	err := Run(context.Background(), 100, 2, func() func(context.Context, int) error {
		return func(ctx context.Context, i int) error {
			if i == 0 {
				return boom
			}
			started.Add(1)
			<-ctx.Done() // a running job sees the cancel
			return ctx.Err()
		}
	})
	if !errors.Is(err, boom) {
		t.Fatalf("got %v, want boom", err)
	}
	if n := started.Load(); n > 1 {
		t.Fatalf("%d jobs started beside the failing one, want at most 1 (2 workers)", n)
	}
}

func TestRunContextDone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	var ran atomic.Int32
	err := Each(ctx, 10, 2, func(context.Context, int) error { ran.Add(1); return nil })
	if !errors.Is(err, context.Canceled) || ran.Load() != 0 {
		t.Fatalf("got %v after %d jobs, want context.Canceled after none", err, ran.Load())
	}
	if err := Each(ctx, 0, 2, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("no jobs, done context: got %v", err)
	}
}

func TestSize(t *testing.T) {
	if Size(0) != 2 || Size(4) < 4 {
		t.Fatalf("Size(0)=%d Size(4)=%d", Size(0), Size(4))
	}
}
