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

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
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
// last renewed: the holder renews it every third of the lease, and stops
// changing the bucket when it could not for most of one. A publish that
// finds it waits (Options.LockWait) until the holder deletes it, or
// takes it over, with a conditional write where the service has one, once
// it has seen it unchanged for a whole lease (the holder died), or its
// holder said it stopped. Clocks of two machines need not agree: a lease
// is measured by the waiter's own clock, from when it first saw the lock
// as it is. In a bucket on disk (file://), the lock is a file of the
// bucket's folder that the holder keeps locked (flock): the kernel
// releases it when the process dies, and the file says whether the last
// publish finished.

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
// the bucket's lock, and waited for it as long as it was told to.
type LockedError struct {
	Holder string        // who holds it, as the lock says
	Waited time.Duration // how long this publish waited
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%s is changing the bucket (it holds %s): waited %v; nothing was changed: publish again once it is done, or wait longer (--lock-wait)",
		e.Holder, LockName, e.Waited.Round(time.Second))
}

// errLockLost stops a publish that could not renew its lock in time: another
// publish may have taken it over.
var errLockLost = errors.New("this publish lost the bucket's lock (it could not renew it in time, or another publish took it over) and stopped: publish again")

// locker is the bucket's lock as one publish uses it.
type locker interface {
	// acquire takes the lock, waiting as Options.LockWait says while
	// another publish holds it. dirty is "" when the last publish that
	// held it finished, else a sentence saying that it did not. lost is
	// called, from another goroutine, when the lock is lost.
	acquire(ctx context.Context, lost func(error)) (dirty string, err error)
	// peek reads the lock without taking it (a dry run): dirty as acquire
	// says it, or that a publish is running.
	peek(ctx context.Context) (dirty string, err error)
	// check returns nil while this publish holds the lock.
	check(ctx context.Context) error
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
	stop    chan struct{}
	done    chan struct{}
}

// lease returns how long a lock stays taken without a renewal, and how
// often its holder renews it.
func (l *objectLock) lease() (lease, every time.Duration) {
	lease = l.p.opt.LockLease
	return lease, lease / 3
}

// maxClockSkew is how far behind the clock of a publish that wrote a lock
// may be from this one's: a lock renewed, by its own clock, longer ago than
// a lease and this is taken over at once, without waiting a lease.
const maxClockSkew = 2 * time.Minute

func (l *objectLock) acquire(ctx context.Context, lost func(error)) (string, error) {
	p := l.p
	lease, _ := l.lease()
	start := time.Now()
	var (
		seen   []byte
		seenAt time.Time
		said   bool
	)
	for {
		err := l.write(ctx, &blob.WriterOptions{IfNotExist: true})
		if err == nil {
			l.renewals(lost)
			return "", nil
		}
		if !preconditionFailed(err) {
			return "", explain("creating the lock "+LockName, err)
		}
		data, etag, err := l.read(ctx)
		if isNotFound(err) {
			continue // released meanwhile
		}
		if err != nil {
			return "", explain("reading the lock "+LockName, err)
		}
		var cur lockInfo
		damaged := json.Unmarshal(data, &cur) != nil
		now := time.Now()
		if !bytes.Equal(data, seen) {
			seen, seenAt = data, now
		}
		if damaged || cur.State == lockInterrupted || now.Sub(seenAt) >= lease || p.opt.Clock().Sub(cur.Renewed) > lease+maxClockSkew {
			took, err := l.takeOver(ctx, etag)
			if err != nil {
				return "", explain("taking over the lock "+LockName, err)
			}
			if !took {
				continue // another publish took it first
			}
			l.renewals(lost)
			if cur.State == lockInterrupted || damaged {
				return fmt.Sprintf("%s did not finish", cur.describe()), nil
			}
			return fmt.Sprintf("%s stopped renewing its lock (killed?): it did not finish", cur.describe()), nil
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

// preconditionFailed reports whether a conditional write failed because
// the object is there (or not the version named).
func preconditionFailed(err error) bool {
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return true
	}
	var ae apiError
	return errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict")
}

// write uploads the lock as l.info says, with opts.
func (l *objectLock) write(ctx context.Context, opts *blob.WriterOptions) error {
	data := l.info.marshal()
	opts.ContentType = ContentType
	opts.CacheControl = "no-store"
	return l.p.retry(ctx, func(ctx context.Context, kick func()) error {
		return l.p.bucket.Upload(ctx, LockName, kicking{bytes.NewReader(data), kick}, opts)
	})
}

// read returns the lock's bytes and ETag: the ETag is read first, so that
// a write conditional on it fails if the lock changed after it.
func (l *objectLock) read(ctx context.Context) ([]byte, string, error) {
	var (
		data []byte
		etag string
	)
	err := l.p.retry(ctx, func(ctx context.Context, kick func()) error {
		a, err := l.p.bucket.Attributes(ctx, LockName)
		if err != nil {
			return err
		}
		etag = a.ETag
		r, err := l.p.bucket.NewReader(ctx, LockName, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(io.LimitReader(kicking{r, kick}, 64<<10))
		return err
	})
	return data, etag, err
}

// takeOver replaces a lock that its holder left, if it is still the
// version etag: with a conditional write where the service has one (S3's
// If-Match), else by deleting it and creating it anew. It reports false
// when another publish took it first.
func (l *objectLock) takeOver(ctx context.Context, etag string) (bool, error) {
	now := l.p.opt.Clock().UTC()
	l.info.Started, l.info.Renewed = now, now
	err := l.write(ctx, &blob.WriterOptions{BeforeWrite: func(as func(any) bool) error {
		var in *transfermanager.UploadObjectInput
		if etag == "" || !as(&in) {
			return errNoIfMatch
		}
		in.IfMatch = aws.String(etag)
		return nil
	}})
	if errors.Is(err, errNoIfMatch) {
		// No conditional write of a version: delete the lock and create
		// it anew, which only one publish can.
		err = l.p.retry(ctx, func(ctx context.Context, _ func()) error { return l.p.bucket.Delete(ctx, LockName) })
		if err != nil && !isNotFound(err) {
			return false, err
		}
		err = l.write(ctx, &blob.WriterOptions{IfNotExist: true})
	}
	if preconditionFailed(err) || isNotFound(err) {
		return false, nil
	}
	return err == nil, err
}

// errNoIfMatch stops a write that the service cannot make conditional on
// the version of the object.
var errNoIfMatch = errors.New("no conditional write of a version")

// renewals renews the lock every third of the lease until release: a
// renewal that finds the lock another's, or none succeeding for two
// thirds of a lease, loses it.
func (l *objectLock) renewals(lost func(error)) {
	l.stop, l.done = make(chan struct{}), make(chan struct{})
	lease, every := l.lease()
	go func() {
		defer close(l.done)
		last := time.Now()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-l.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), every)
			err := l.renew(ctx)
			cancel()
			switch {
			case err == nil:
				last = time.Now()
			case errors.Is(err, errLockLost) || time.Since(last) > lease-every:
				l.mu.Lock()
				l.lostErr = errLockLost
				l.mu.Unlock()
				lost(errLockLost)
				return
			}
		}
	}()
}

// renew writes the lock again with the time now, if it is still this
// publish's.
func (l *objectLock) renew(ctx context.Context) error {
	l.renewMu.Lock()
	defer l.renewMu.Unlock()
	data, _, err := l.read(ctx)
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
	return l.write(ctx, &blob.WriterOptions{})
}

func (l *objectLock) check(ctx context.Context) error {
	l.mu.Lock()
	err := l.lostErr
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if err := l.renew(ctx); err != nil {
		if errors.Is(err, errLockLost) {
			return err
		}
		return explain("renewing the lock "+LockName, err)
	}
	return nil
}

func (l *objectLock) release(ctx context.Context, clean bool) error {
	if l.stop == nil {
		return nil // never acquired
	}
	close(l.stop)
	<-l.done
	l.mu.Lock()
	lostErr := l.lostErr
	l.mu.Unlock()
	if lostErr != nil {
		return nil // another's now
	}
	if clean {
		err := l.p.retry(ctx, func(ctx context.Context, _ func()) error { return l.p.bucket.Delete(ctx, LockName) })
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
