//go:build unix

package build

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// lock takes an exclusive lock on the output folder, so that two builds
// never write it at once. A second build waits for the first, saying so on
// log. The lock is released by the returned function (and by the kernel
// when the process dies, so a killed build never leaves it held).
func lock(ctx context.Context, dir string, log io.Writer) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking output folder: %w", err)
	}
	said := false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			return func() { f.Close() }, nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return nil, fmt.Errorf("locking output folder %s: %w", dir, err)
		}
		if !said && log != nil {
			fmt.Fprintf(log, "waiting for another build of %s to finish\n", dir)
			said = true
		}
		select {
		case <-ctx.Done():
			f.Close()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}
