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

	"github.com/feedgen/feedgen/internal/outfile"
)

// folderLock is the lock of a bucket on disk: the file LockName in the
// bucket's folder, locked (flock) by the publish that holds it. The file
// stays: its content is empty when the last publish finished, else that
// publish's lockInfo (state running when it died, interrupted when it
// stopped). It is never deleted: a publish waiting on the old file while
// another created a new one would hold a lock of its own.
type folderLock struct {
	p    *publisher
	name string
	info lockInfo
	f    *os.File
}

// newFolderLock returns the lock of the bucket in folder dir.
func newFolderLock(p *publisher, dir string, info lockInfo) locker {
	return &folderLock{p: p, name: filepath.Join(dir, LockName), info: info}
}

func (l *folderLock) acquire(ctx context.Context, _ func(error)) (string, error) {
	f, err := openLock(l.name, os.O_RDWR|os.O_CREATE)
	if err != nil {
		return "", err
	}
	start, said := time.Now(), false
	for {
		err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
		if err == nil {
			break
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) && !errors.Is(err, syscall.EINTR) {
			f.Close()
			return "", fmt.Errorf("locking %s: %w", l.name, err)
		}
		holder := l.holder(f)
		waited := time.Since(start)
		if waited >= l.p.opt.LockWait {
			f.Close()
			return "", &LockedError{Holder: holder, Waited: waited}
		}
		if !said {
			fmt.Fprintf(l.p.opt.Notices, "waiting for %s to finish (it holds %s)\n", holder, l.name)
			said = true
		}
		t := time.NewTimer(min(50*time.Millisecond, l.p.opt.LockWait-waited))
		select {
		case <-ctx.Done():
			t.Stop()
			f.Close()
			return "", ctx.Err()
		case <-t.C:
		}
	}
	l.f = f
	dirty := l.last()
	if err := l.write(l.info); err != nil {
		f.Close()
		l.f = nil
		return "", err
	}
	return dirty, nil
}

// holder names the publish that holds the lock of f, as its content says.
func (l *folderLock) holder(f *os.File) string {
	var cur lockInfo
	data, _ := io.ReadAll(io.NewSectionReader(f, 0, 64<<10))
	if json.Unmarshal(data, &cur) != nil {
		return "another publish"
	}
	return cur.describe()
}

// last says, with the lock held, whether the publish that held it last
// did not finish: "" when it did.
func (l *folderLock) last() string {
	data, _ := io.ReadAll(io.NewSectionReader(l.f, 0, 64<<10))
	if len(data) == 0 {
		return ""
	}
	var cur lockInfo
	json.Unmarshal(data, &cur)
	return fmt.Sprintf("%s did not finish", cur.describe())
}

// write replaces the file's content by info, or empties it for a zero
// info, durably.
func (l *folderLock) write(info lockInfo) error {
	var data []byte
	if info.Token != "" {
		data = info.marshal()
	}
	err := l.f.Truncate(0)
	if err == nil && len(data) > 0 {
		_, err = l.f.WriteAt(data, 0)
	}
	if err == nil {
		err = l.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("writing the lock %s: %w", l.name, err)
	}
	return nil
}

func (l *folderLock) check(context.Context) error { return nil }

// fence is nil: the kernel holds the lock as long as the process lives.
func (l *folderLock) fence() error { return nil }

func (l *folderLock) release(_ context.Context, clean bool) error {
	if l.f == nil {
		return nil
	}
	info := lockInfo{}
	if !clean {
		info = l.info
		info.State, info.Renewed = lockInterrupted, l.p.opt.Clock().UTC()
	}
	err := l.write(info)
	l.f.Close()
	l.f = nil
	return err
}

// peek reads the lock file without locking it: a dry run that held it,
// even for a moment, could make a publish that may not wait fail.
func (l *folderLock) peek(context.Context) (string, error) {
	f, err := openLock(l.name, os.O_RDONLY)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	data, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	if len(data) == 0 {
		return "", nil
	}
	return fmt.Sprintf("%s is changing the bucket, or did not finish", l.holder(f)), nil
}

// openLock opens the lock file name with flag, without blocking on a
// named pipe put in its place, which it refuses, as any file that is not
// a regular file.
func openLock(name string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag|outfile.Flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("opening the lock: %w", err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file (%s): remove it and publish again", name, outfile.Kind(info.Mode()))
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening the lock: %w", err)
	}
	return f, nil
}
