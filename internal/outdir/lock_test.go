//go:build unix

package outdir

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// said is a writer a test watches: each write is sent on its channel.
type said chan string

func (w said) Write(p []byte) (int, error) {
	w <- string(p)
	return len(p), nil
}

// TestLock: while a build holds the lock of a folder, a second Lock
// waits, says so once on its writer, and takes the lock when the first
// lets it go (or gives up when its context ends); Busy tells both apart,
// and Hold waits as Lock does.
func TestLock(t *testing.T) {
	dir := t.TempDir()
	if Busy(dir) {
		t.Fatal("Busy of a folder nobody locked")
	}
	if !Busy(filepath.Join(dir, "missing")) {
		t.Error("Busy of a folder that is not there: false, want true (it cannot tell)")
	}
	unlock, err := Lock(context.Background(), dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !Busy(dir) {
		t.Error("Busy while a build holds the lock: false")
	}

	tests := []struct {
		name   string
		cancel bool // the waiting Lock's context ends before the lock is free
	}{
		{name: "given up", cancel: true},
		{name: "taken when free"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			w := make(said, 2)
			got := make(chan error, 1)
			go func() {
				u, err := Lock(ctx, dir, w)
				if err == nil {
					u()
				}
				got <- err
			}()
			select {
			case err := <-got:
				t.Fatalf("second lock returned %v while the first is held", err)
			case msg := <-w: // it found the lock taken, and waits
				if want := "waiting for another build of " + dir + " to finish\n"; msg != want {
					t.Errorf("said %q, want %q", msg, want)
				}
			}
			if tt.cancel {
				cancel()
				if err := <-got; !errors.Is(err, context.Canceled) {
					t.Errorf("got %v, want context.Canceled", err)
				}
				return
			}
			unlock()
			if err := <-got; err != nil {
				t.Fatal(err)
			}
			if len(w) != 0 {
				t.Errorf("said more: %q", <-w)
			}
		})
	}
	if Busy(dir) {
		t.Error("Busy once every lock is let go")
	}
}

// TestHold: Hold takes the same lock as Lock: a build waits while feedgen
// rules holds the folder. (That Hold waits for a build is not tested: it
// waits in the kernel, with no event to watch.)
func TestHold(t *testing.T) {
	dir := t.TempDir()
	release, err := Hold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !Busy(dir) {
		t.Error("Busy while held: false")
	}
	w := make(said, 1)
	got := make(chan error, 1)
	var unlock func()
	go func() {
		var err error
		unlock, err = Lock(context.Background(), dir, w)
		got <- err
	}()
	<-w // Lock waits for Hold
	release()
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	unlock()
	if _, err := Hold(filepath.Join(dir, "missing")); err == nil || !strings.HasPrefix(err.Error(), "locking "+filepath.Join(dir, "missing")+": ") {
		t.Errorf("Hold of a missing folder: %v", err)
	}
	if _, err := Lock(context.Background(), filepath.Join(dir, "missing"), nil); err == nil || !strings.HasPrefix(err.Error(), "locking output folder: ") {
		t.Errorf("Lock of a missing folder: %v", err)
	}
}
