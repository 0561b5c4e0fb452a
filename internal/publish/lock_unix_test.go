//go:build unix

package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishHeldFolderLock checks the lock of a bucket on disk against
// another process's flock of the folder (another open file of this one,
// to the kernel): the publish waits for it, and fails when it may not.
func TestPublishHeldFolderLock(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	f, err := os.Open(store)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		t.Fatal(err)
	}
	opt := lockOptions(url, store)
	opt.LockWait = -1
	var le *LockedError
	if _, err := Publish(context.Background(), b, os.DirFS(s.out), opt); !errors.As(err, &le) {
		t.Fatalf("got %v, want a LockedError", err)
	}
	notices := newSignal()
	opt.LockWait, opt.Notices = time.Minute, notices
	done := make(chan error, 1)
	go func() {
		_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
		done <- err
	}()
	<-notices.c
	f.Close() // the other process ends
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
	plainFolder(t, store, s.out, nil)
}

// TestPublishStalled stops the S3 service (SIGSTOP): a publish that finds
// no answer fails after its timeout and retries, with a message that says
// so, and never hangs; whether it stalls at its first request or in the
// middle of the uploads.
func TestPublishStalled(t *testing.T) {
	v := versitytest.Start(t)
	s := newSite(t, smallOpt)
	url, _ := v.NewBucket(t)
	b := open(t, url)
	for _, at := range []string{"start", "read"} {
		t.Run(at, func(t *testing.T) {
			s.edit(t, 1, "Stalled at "+at)
			opt := testOptions()
			// The whole-request bound long, the first byte's short: the
			// short one stops each try.
			opt.ConnectTimeout, opt.Timeout, opt.Retries = 200*time.Millisecond, time.Minute, 1
			stop := func() {
				stopProcess(t, v.Process)
			}
			if at == "start" {
				stop()
			} else {
				opt.step = func(_ context.Context, what string) {
					if what == at {
						stop()
					}
				}
			}
			start := time.Now()
			_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
			took := time.Since(start)
			v.Process.Signal(syscall.SIGCONT)
			var be *BucketError
			if !errors.As(err, &be) || be.Kind != TimedOut || !strings.Contains(err.Error(), "did not answer for 200ms, tried 2 times (--connect-timeout sets how long a request may wait for the first byte of an answer)") {
				t.Fatalf("got %v, want a timeout", err)
			}
			// Two tries of 200 ms, a backoff, and the lock's release
			// (bounded by releaseTimeout): far below the two minutes of
			// the SDK's own timeouts.
			if took > 10*time.Second {
				t.Errorf("took %v", took)
			}
			// Once the service answers again, a publish finishes the job:
			// after a lease, if the request that was to create the lock
			// reached the service only then (it could be a live one's).
			opt = testOptions()
			opt.LockLease = 2 * time.Second // short, and long enough to renew under -race
			publishDir(t, b, s.out, opt)
			checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
		})
	}
}

// lines is a writer that sends each line written to it on a channel: a
// test waits on it for a notice.
type lines chan string

func (l lines) Write(p []byte) (int, error) {
	for line := range strings.Lines(string(p)) {
		l <- strings.TrimSuffix(line, "\n")
	}
	return len(p), nil
}

// TestPublishStallSaid stops the S3 service (SIGSTOP) in the middle of a
// publish: each request that stalls is said, with the try, when it is
// tried again, after the short wait for a first byte (not the whole
// request's timeout); once the service answers again, the publish
// finishes.
func TestPublishStallSaid(t *testing.T) {
	v := versitytest.Start(t)
	s := newSite(t, smallOpt)
	url, _ := v.NewBucket(t)
	bk, err := ParseBucketURL(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bk.Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	said := make(lines, 100)
	opt := testOptions()
	opt.ConnectTimeout, opt.Timeout, opt.Retries = 300*time.Millisecond, time.Minute, 20
	opt.Notices = said
	opt.step = func(_ context.Context, what string) {
		if what == "read" {
			if err := v.Process.Signal(syscall.SIGSTOP); err != nil {
				t.Error(err)
			}
		}
	}
	defer v.Process.Signal(syscall.SIGCONT)
	done := make(chan error, 1)
	start := time.Now()
	go func() {
		_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
		done <- err
	}()
	want := regexp.MustCompile(`^uploading articles/\S+\.json: no answer for 300ms \(try 1 of 21\); trying again$`)
	for line := range said {
		if want.MatchString(line) {
			break
		}
		t.Logf("said: %s", line)
	}
	if took := time.Since(start); took > 10*time.Second {
		t.Errorf("the stall was said after %v", took)
	}
	if err := v.Process.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("publish: %v", err)
	}
	close(said)
	for line := range said {
		if !regexp.MustCompile(`^(uploading|writing the lock|reading the lock) \S+: no answer for 300ms \(try \d+ of 21\); trying again$`).MatchString(line) {
			t.Errorf("said %q", line)
		}
	}
	checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
}

// stopProcess stops p (SIGSTOP) and, where /proc tells, returns once it
// is stopped: the signal is delivered when the process is next
// scheduled, and on a loaded machine it could still answer a request
// sent after the signal.
func stopProcess(t *testing.T, p *os.Process) {
	t.Helper()
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("/proc/%d/stat", p.Pid)
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); {
		data, err := os.ReadFile(stat)
		if err != nil {
			return // no /proc: the signal is all there is
		}
		// pid (comm) state ...: comm may hold spaces, the state follows its ')'.
		if i := bytes.LastIndexByte(data, ')'); i > 0 && i+2 < len(data) && (data[i+2] == 'T' || data[i+2] == 't') {
			return
		}
		runtime.Gosched()
	}
	t.Fatalf("process %d did not stop within 10s of SIGSTOP", p.Pid)
}
