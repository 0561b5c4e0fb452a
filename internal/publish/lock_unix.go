//go:build unix

package publish

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/outfile"
)

// folderLock is the lock of a bucket on disk (Options.Folder): the
// folder itself, locked (flock) by the publish that holds it, so that
// the kernel releases it when the process dies, and no file of the lock
// is among the objects a web server serves. While a publish runs, and
// after one that did not finish, the file LockName in the folder says
// so: the publish's lockInfo, its state running while it runs (or once
// it died), interrupted when it stopped half way. A publish that
// finishes removes it: the folder is then the build and nothing else.
// (Before, the lock was that file, always there, and empty once the
// last publish had finished: an empty one says so still. An earlier
// feedgen that flocks that file is not kept out, nor keeps this one out:
// it could not be while the file goes when a publish finishes, since a
// publish waiting on the removed file would then hold a lock of its own.
// docs/publishing.md says to upgrade every publisher of a folder
// together.)
type folderLock struct {
	p    *publisher
	dir  string
	name string // the file that says how the last publish ended
	info lockInfo
	d    *os.File // the folder, locked
}

// newFolderLock returns the lock of the bucket in folder dir.
func newFolderLock(p *publisher, dir string, info lockInfo) locker {
	return &folderLock{p: p, dir: dir, name: filepath.Join(dir, LockName), info: info}
}

func (l *folderLock) acquire(ctx context.Context, _ func(error)) (string, error) {
	d, err := os.Open(l.dir)
	if err != nil {
		return "", fmt.Errorf("opening the bucket folder to lock it: %w", err)
	}
	start, said := time.Now(), false
	for {
		err := syscall.Flock(int(d.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			d.Close()
			return "", fmt.Errorf("locking %s: %w", l.dir, err)
		}
		holder := l.holder()
		waited := time.Since(start)
		if waited >= l.p.opt.LockWait {
			d.Close()
			return "", &LockedError{Holder: holder, Waited: waited}
		}
		if !said {
			fmt.Fprintf(l.p.opt.Notices, "waiting for %s to finish (it holds the lock of %s)\n", holder, l.dir)
			said = true
		}
		t := time.NewTimer(min(50*time.Millisecond, l.p.opt.LockWait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			d.Close()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	l.d = d
	dirty := l.last()
	if err := l.write(l.info); err != nil {
		d.Close()
		l.d = nil
		return "", err
	}
	return dirty, nil
}

// read returns what the file LockName says: nil when it is not there, or
// not a regular file (never opened: a named pipe would block; write
// replaces it).
func (l *folderLock) read() ([]byte, bool) {
	f, err := outfile.Open(l.name)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	return data, true
}

// holder names the publish that holds the lock, as the file says.
func (l *folderLock) holder() string {
	data, _ := l.read()
	var cur lockInfo
	if json.Unmarshal(data, &cur) != nil {
		return "another publish"
	}
	return cur.describe()
}

// last says, with the lock held, whether the publish that held it last
// did not finish: "" when it did (no file, or an empty one).
func (l *folderLock) last() string {
	data, ok := l.read()
	if !ok || len(data) == 0 {
		return ""
	}
	var cur lockInfo
	json.Unmarshal(data, &cur)
	return fmt.Sprintf("%s did not finish", cur.describe())
}

// write replaces the file by one that says info, durably.
func (l *folderLock) write(info lockInfo) error {
	f, err := atomicfile.Create(l.name, 0o644)
	if err == nil {
		defer f.Abort()
		if _, err = f.Write(info.marshal()); err == nil {
			err = f.Commit()
		}
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", l.name, err)
	}
	return nil
}

func (l *folderLock) check(context.Context) error { return nil }

// fence is nil: the kernel holds the lock as long as the process lives.
func (l *folderLock) fence() error { return nil }

func (l *folderLock) release(_ context.Context, clean bool) error {
	if l.d == nil {
		return nil
	}
	defer func() {
		l.d.Close()
		l.d = nil
	}()
	if !clean {
		info := l.info
		info.State, info.Renewed = lockInterrupted, l.p.opt.Clock().UTC()
		return l.write(info)
	}
	if err := os.Remove(l.name); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("removing %s: %w", l.name, err)
	}
	return nil
}

// peek reads the file without locking: a dry run that held the lock,
// even for a moment, could make a publish that may not wait fail.
func (l *folderLock) peek(context.Context) (string, error) {
	data, ok := l.read()
	if !ok || len(data) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%s is changing the bucket, or did not finish", l.holder()), nil
}
