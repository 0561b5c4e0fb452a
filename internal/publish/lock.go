package publish

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/layout"
	"gocloud.dev/blob"
)

// Two publishes to one bucket never run at once: a publish holds the
// bucket's lock, LockName, from before it reads what the bucket holds
// until its manifest is in place and the stale pages are deleted. The
// lock also says how the last publish ended: one that stopped half way
// (an error, SIGINT, or killed) leaves it behind, and the next publish
// then trusts no manifest of the bucket, lists it and checks every page.
//
// In a bucket of a cloud, the lock is an object created only if it does
// not exist (a conditional write), holding its owner and the time it was
// last renewed. The holder renews it every sixth of the lease, each time
// only over the version it read (see conditional.go), and stops changing
// the bucket two thirds of a lease after it sent the last renewal that
// succeeded: every request of the publish runs under a context cancelled
// then. A publish that finds the lock waits (Options.LockWait) until the
// holder deletes it, or takes it over, with a write conditional on the
// version it saw, once it has seen that version unchanged for a whole
// lease (the holder died: it has stopped a third of a lease before), or
// its holder said it stopped. Clocks of two machines need not agree: the
// lease is measured by each one's own clock. Where the service has no
// conditional write of a version, a lock left behind is not taken over:
// the error says to delete it. In a bucket on disk (file://), the lock is
// a file of the bucket's folder that the holder keeps locked (flock): the
// kernel releases it when the process dies, and the file says whether the
// last publish finished.

// LockName is the key of the bucket's lock: outside articles/, so that a
// publish never lists it as a page.
const LockName = ".feedgen-publish-lock"

// Defaults of the lock's options.
const (
	DefaultLockWait  = 2 * time.Minute
	DefaultLockLease = 30 * time.Second
)

// The states of a lock.
const (
	lockRunning     = "running"     // a publish holds it, or died holding it
	lockInterrupted = "interrupted" // the publish that held it stopped half way
)

// lockInfo is what a lock says.
type lockInfo struct {
	Owner   string    `json:"owner"`   // host and process id
	Token   string    `json:"token"`   // tells this publish from any other
	Started time.Time `json:"started"` // when it took the lock
	Renewed time.Time `json:"renewed"` // when it last said it was alive
	State   string    `json:"state"`
}

func (l *lockInfo) marshal() []byte {
	data, _ := json.Marshal(l)
	return append(data, '\n')
}

// describe names the publish of a lock for a person.
func (l *lockInfo) describe() string {
	if l.Owner == "" {
		return "a publish"
	}
	return fmt.Sprintf("the publish of %s, started %s", l.Owner, l.Started.UTC().Format(time.RFC3339))
}

// LockedError is the error of a publish that found another one holding
// the bucket's lock, and waited for it as long as it was told to; or one
// that found a lock left behind that the service cannot let it replace
// safely (Stuck).
type LockedError struct {
	Holder string        // who holds it, as the lock says
	Waited time.Duration // how long this publish waited
	// Stuck says that the holder is gone, but the lock cannot be taken
	// over: the bucket's service has no conditional write of a version.
	Stuck bool
}

func (e *LockedError) Error() string {
	if e.Stuck {
		return fmt.Sprintf("%s left the bucket's lock %s, and this bucket's service cannot replace it safely: nothing was changed; if no publish is running, delete %s from the bucket and publish again",
			e.Holder, LockName, LockName)
	}
	return fmt.Sprintf("%s is changing the bucket (it holds %s): waited %v; nothing was changed: publish again once it is done, or wait longer (--lock-wait; a lock whose holder died is taken over after %v unchanged)",
		e.Holder, LockName, e.Waited.Round(time.Second), DefaultLockLease)
}

// errLockLost stops a publish that could not renew its lock in time: another
// publish may have taken it over.
var errLockLost = errors.New("this publish lost the bucket's lock (it could not renew it in time, or another publish took it over) and stopped: publish again, with --full if another publish finished meanwhile")

// lockExpiredError is errLockLost when no renewal succeeded in time:
// the service stopped answering them (or failed them), or the process
// was stopped.
type lockExpiredError struct {
	since time.Duration // since the last renewal (or the write that took it) was sent
	last  error         // the last renewal's error; nil when none failed
}

func (e *lockExpiredError) Error() string {
	var se *stallError
	why := "no renewal came back"
	switch {
	case e.last == nil:
	case errors.Is(e.last, context.DeadlineExceeded) || errors.As(e.last, &se):
		why = "the bucket's service stopped answering"
	default:
		why = "the last try: " + detail(e.last)
	}
	return fmt.Sprintf("this publish could not renew the bucket's lock %s for %s (%s), and stopped: past that, another publish may take the bucket over; check that the bucket's service answers, and publish again",
		LockName, e.since.Round(time.Second), why)
}

// Is makes a lockExpiredError errLockLost.
func (e *lockExpiredError) Is(target error) bool { return target == errLockLost }

// locker is the bucket's lock as one publish uses it.
type locker interface {
	// acquire takes the lock, waiting as Options.LockWait says while
	// another publish holds it. dirty is "" when the last publish that
	// held it finished, else a sentence saying that it did not. lost is
	// called, from another goroutine, when the lock is lost, or may be
	// soon: the publish must stop changing the bucket.
	acquire(ctx context.Context, lost func(error)) (dirty string, err error)
	// peek reads the lock without taking it (a dry run): dirty as acquire
	// says it, or that a publish is running.
	peek(ctx context.Context) (dirty string, err error)
	// check returns nil while this publish holds the lock, renewing it.
	check(ctx context.Context) error
	// fence returns nil while this publish may still write: called at
	// once before every write, it costs no request. After a stop of the
	// process (SIGSTOP, a laptop asleep) longer than the hold, it fails
	// before the writes that were waiting go out.
	fence() error
	// release gives the lock up: clean says that the bucket is what its
	// manifest says, else the lock is left saying that this publish
	// stopped half way.
	release(ctx context.Context, clean bool) error
}

// newLockInfo returns the lock of a new publish.
func newLockInfo(owner string, now time.Time) lockInfo {
	var b [12]byte
	rand.Read(b[:])
	if owner == "" {
		host, _ := os.Hostname()
		owner = fmt.Sprintf("%s pid %d", host, os.Getpid())
	}
	return lockInfo{Owner: owner, Token: hex.EncodeToString(b[:]), Started: now.UTC(), Renewed: now.UTC(), State: lockRunning}
}

// objectLock is the lock as an object of the bucket.
type objectLock struct {
	p    *publisher
	info lockInfo

	renewMu sync.Mutex // one renewal at a time: the ticker's, or check's
	mu      sync.Mutex // guards lostErr
	lostErr error
	lost    func(error)
	hold    *time.Timer        // loses the lock when no renewal succeeds in time
	until   time.Time          // when the hold ends, guarded by mu
	sent    time.Time          // when the last renewal that succeeded was sent, guarded by mu
	failed  error              // the last renewal's error since, guarded by mu
	stop    context.CancelFunc // stops the renewals
	done    chan struct{}
}

// lease returns how long a lock stays taken without a renewal, how often
// its holder renews it, and how long after it sent the last renewal that
// succeeded the holder stops.
func (l *objectLock) lease() (lease, every, hold time.Duration) {
	lease = l.p.opt.LockLease
	return lease, lease / 6, lease * 2 / 3
}

func (l *objectLock) acquire(ctx context.Context, lost func(error)) (string, error) {
	p := l.p
	lease, _, _ := l.lease()
	start := time.Now()
	var (
		seen   []byte
		seenAt time.Time
		said   bool
	)
	for {
		sent := time.Now()
		err := l.write(ctx, &blob.WriterOptions{IfNotExist: true})
		if err == nil {
			l.held(sent, lost)
			return "", nil
		}
		if !preconditionFailed(err) {
			return "", explain("creating the lock "+LockName, err)
		}
		data, v, err := l.read(ctx)
		if isNotFound(err) {
			continue // released meanwhile
		}
		if err != nil {
			return "", explain("reading the lock "+LockName, err)
		}
		var cur lockInfo
		damaged := json.Unmarshal(data, &cur) != nil
		if !damaged && cur.Token == l.info.Token {
			// This publish's own write, which reached the service though
			// its answer did not (tried again, the second found it there).
			l.held(sent, lost)
			return "", nil
		}
		now := time.Now()
		if !bytes.Equal(data, seen) {
			seen, seenAt = data, now
		}
		if damaged || cur.State == lockInterrupted || now.Sub(seenAt) >= lease {
			holder := cur.describe()
			sent := time.Now()
			took, err := l.takeOver(ctx, v)
			switch {
			case errors.Is(err, errNoCondition):
				return "", &LockedError{Holder: holder, Waited: time.Since(start), Stuck: true}
			case err != nil:
				return "", explain("taking over the lock "+LockName, err)
			case !took:
				continue // another publish took it first
			}
			l.held(sent, lost)
			if cur.State == lockInterrupted || damaged {
				return fmt.Sprintf("%s did not finish", holder), nil
			}
			return fmt.Sprintf("%s stopped renewing its lock (killed?): it did not finish", holder), nil
		}
		waited := now.Sub(start)
		if waited >= p.opt.LockWait {
			return "", &LockedError{Holder: cur.describe(), Waited: waited}
		}
		if !said {
			fmt.Fprintf(p.opt.Notices, "waiting for %s to finish (it holds the bucket's %s)\n", cur.describe(), LockName)
			said = true
		}
		wait := min(500*time.Millisecond, lease/4, p.opt.LockWait-waited)
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return "", ctx.Err()
		case <-t.C:
		}
	}
}

// write uploads the lock as l.info says, with opts.
func (l *objectLock) write(ctx context.Context, opts *blob.WriterOptions) error {
	data := l.info.marshal()
	opts.ContentType = layout.ContentType(LockName)
	opts.CacheControl = "no-store"
	return l.p.retry(ctx, "writing the lock "+LockName, func(ctx context.Context, _ func(int)) error {
		return l.p.bucket.Upload(ctx, LockName, bytes.NewReader(data), opts)
	})
}

// read returns the lock's bytes and version: the version is read first, so
// that a write conditional on it fails if the lock changed after it.
func (l *objectLock) read(ctx context.Context) ([]byte, version, error) {
	var (
		data []byte
		v    version
	)
	err := l.p.retry(ctx, "reading the lock "+LockName, func(ctx context.Context, kick func(n int)) error {
		a, err := l.p.bucket.Attributes(ctx, LockName)
		if err != nil {
			return err
		}
		v = versionOf(a)
		r, err := l.p.bucket.NewReader(ctx, LockName, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(io.LimitReader(kicking{r, kick}, 64<<10))
		return err
	})
	return data, v, err
}

// takeOver replaces a lock that its holder left, if it is still the
// version v. It reports false when another publish took it first, and
// errNoCondition when the service cannot make the write conditional.
func (l *objectLock) takeOver(ctx context.Context, v version) (bool, error) {
	now := l.p.opt.Clock().UTC()
	l.info.Started, l.info.Renewed = now, now
	err := l.write(ctx, &blob.WriterOptions{BeforeWrite: ifVersion(v)})
	if preconditionFailed(err) || isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// held starts what a holder of the lock does: it renews it every sixth
// of the lease, and loses it, calling lost, when no renewal sent within
// two thirds of a lease succeeded. sent is when the write that took it
// was sent.
func (l *objectLock) held(sent time.Time, lost func(error)) {
	_, every, hold := l.lease()
	l.lost = lost
	l.mu.Lock()
	l.until, l.sent = sent.Add(hold), sent
	l.mu.Unlock()
	l.hold = time.AfterFunc(time.Until(sent.Add(hold)), func() { l.lose(l.expired()) })
	ctx, stop := context.WithCancel(context.Background())
	l.stop, l.done = stop, make(chan struct{})
	go func() {
		defer close(l.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			rctx, cancel := context.WithTimeout(ctx, every)
			err := l.renew(rctx)
			cancel()
			if errors.Is(err, errLockLost) {
				l.lose(err)
				return
			}
			if err != nil && ctx.Err() == nil {
				l.mu.Lock()
				l.failed = err
				l.mu.Unlock()
			}
		}
	}()
}

// lose records that the lock is lost, and says so to the publish, once.
func (l *objectLock) lose(err error) {
	l.mu.Lock()
	first := l.lostErr == nil
	if first {
		l.lostErr = err
	}
	l.mu.Unlock()
	if first {
		l.lost(err)
	}
}

// expired returns the error of a lock whose hold ended with no renewal.
func (l *objectLock) expired() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := &lockExpiredError{last: l.failed}
	if !l.sent.IsZero() {
		e.since = time.Since(l.sent)
	}
	return e
}

// lostNow returns why the lock is lost, or nil.
func (l *objectLock) lostNow() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.lostErr
}

// renew writes the lock again with the time now, only over the version
// read and if that is still this publish's lock; errLockLost when it is
// not. A renewal that succeeds gives the holder two thirds of a lease
// from when it was sent.
func (l *objectLock) renew(ctx context.Context) error {
	l.renewMu.Lock()
	defer l.renewMu.Unlock()
	if err := l.lostNow(); err != nil {
		return err
	}
	sent := time.Now()
	data, v, err := l.read(ctx)
	if isNotFound(err) {
		return errLockLost
	}
	if err != nil {
		return err
	}
	var cur lockInfo
	if json.Unmarshal(data, &cur) != nil || cur.Token != l.info.Token {
		return errLockLost
	}
	l.info.Renewed = l.p.opt.Clock().UTC()
	err = l.write(ctx, &blob.WriterOptions{BeforeWrite: ifVersion(v)})
	if errors.Is(err, errNoCondition) {
		err = l.write(ctx, &blob.WriterOptions{}) // read, then written: a race of milliseconds
	}
	switch {
	case preconditionFailed(err):
		return errLockLost
	case err != nil:
		return err
	}
	_, _, hold := l.lease()
	l.mu.Lock()
	if l.lostErr == nil {
		l.until, l.sent, l.failed = sent.Add(hold), sent, nil
		l.hold.Reset(time.Until(l.until))
	}
	l.mu.Unlock()
	return nil
}

func (l *objectLock) fence() error {
	l.mu.Lock()
	err, until := l.lostErr, l.until
	l.mu.Unlock()
	if err == nil && !time.Now().Before(until) {
		err = l.expired()
		l.lose(err)
	}
	return err
}

func (l *objectLock) check(ctx context.Context) error {
	if err := l.renew(ctx); err != nil {
		if errors.Is(err, errLockLost) {
			l.lose(err)
			return err
		}
		return explain("renewing the lock "+LockName, err)
	}
	return nil
}

// release gives the lock up: deleted when clean, else written back
// saying that this publish stopped half way. Until its hold ends the lock
// is this publish's (no other takes it over before a lease from the last
// renewal), so it is not read first; once lost, it is left alone.
func (l *objectLock) release(ctx context.Context, clean bool) error {
	if l.stop == nil {
		return nil // never acquired
	}
	l.stop()
	<-l.done
	l.hold.Stop()
	if l.lostNow() != nil {
		// Another's now, or soon: left alone. But this publish may have
		// written after it lost it (a request in flight when the process
		// stopped): when no publish holds it any more, the lock says that
		// the bucket is not what its manifest says.
		if !clean {
			l.info.State = lockInterrupted
			l.info.Renewed = l.p.opt.Clock().UTC()
			if err := l.write(ctx, &blob.WriterOptions{IfNotExist: true}); err != nil && !preconditionFailed(err) {
				return explain("marking the bucket for the next publish", err)
			}
		}
		return nil
	}
	if clean {
		err := l.p.retry(ctx, "deleting the lock "+LockName, func(ctx context.Context, _ func(int)) error { return l.p.bucket.Delete(ctx, LockName) })
		if err != nil && !isNotFound(err) {
			return explain("deleting the lock "+LockName, err)
		}
		return nil
	}
	l.info.State = lockInterrupted
	l.info.Renewed = l.p.opt.Clock().UTC()
	if err := l.write(ctx, &blob.WriterOptions{}); err != nil {
		return explain("marking the lock "+LockName+" interrupted", err)
	}
	return nil
}

// peek reads the lock without taking it (a dry run).
func (l *objectLock) peek(ctx context.Context) (string, error) {
	data, _, err := l.read(ctx)
	if isNotFound(err) {
		return "", nil
	}
	if err != nil {
		return "", explain("reading the lock "+LockName, err)
	}
	var cur lockInfo
	if json.Unmarshal(data, &cur) == nil && cur.State == lockRunning {
		return fmt.Sprintf("%s holds the bucket's lock: it is running, or was killed", cur.describe()), nil
	}
	return fmt.Sprintf("%s did not finish", cur.describe()), nil
}
