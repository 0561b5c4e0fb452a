// Package pool runs the jobs of a loop on several goroutines: the one
// worker pool of feedgen, used wherever files are read, rendered, written
// or uploaded in parallel (build, server, bundle, publish, import).
package pool

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// Size returns the number of workers for work that keeps perCore
// goroutines busy on each core: at least 2, so that one blocked in the
// file system does not stop the others.
func Size(perCore int) int {
	return max(2, perCore*runtime.GOMAXPROCS(0))
}

// Run calls a worker's function for each job i in [0, n), in ascending
// order of start, on at most workers goroutines (at least one). Each
// goroutine gets its function from worker once, so that what it reuses
// from one job to the next (a buffer) is its own. The first error stops
// the jobs not yet started, cancels the context the running ones were
// given, and is returned once they return; so is the cause of ctx's end,
// which stops Run the same way.
func Run(ctx context.Context, n, workers int, worker func() func(ctx context.Context, i int) error) error {
	if n <= 0 {
		return context.Cause(ctx)
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(n, max(1, workers)) {
		wg.Go(func() {
			do := worker()
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= n {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	return context.Cause(ctx)
}

// Each is Run with a function that needs nothing of its own.
func Each(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	return Run(ctx, n, workers, func() func(context.Context, int) error { return do })
}
