//go:build unix

package outdir

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Lock takes an exclusive lock on the output folder dir, so that two
// builds never write it at once. A second build waits for the first
// until ctx is done, saying so once on waiting (nil: it says nothing).
// The lock is released by the returned function (and by the kernel when
// the process dies, so a killed build never leaves it held).
func Lock(ctx context.Context, dir string, waiting io.Writer) (func(), error) {
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
		if !said && waiting != nil {
			fmt.Fprintf(waiting, "waiting for another build of %s to finish\n", dir)
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

// Hold takes an exclusive lock on the folder dir, as Lock does, for a
// moment: it waits for whoever holds it, as long as that takes, and says
// nothing (feedgen rules holds the folder of its records, beside a site's
// config, from reading them to writing them).
func Hold(dir string) (func(), error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("locking %s: %w", dir, err)
	}
	return func() { f.Close() }, nil
}

// Busy reports whether a build may be writing the output folder dir:
// false only when it can tell that none is. A build holds Lock while it
// writes, which the kernel drops when the build dies: a shared lock
// taken without waiting, and let go at once, tells.
func Busy(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return true
	}
	defer f.Close() // drops the lock
	return syscall.Flock(int(f.Fd()), syscall.LOCK_SH|syscall.LOCK_NB) != nil
}
