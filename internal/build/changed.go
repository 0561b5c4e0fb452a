package build

import (
	"errors"
	"io/fs"
	"os"
	"sync"
	"time"
)

// changedSince reports whether the file of info may have changed after
// the file of ref: its status change time (ctime, which a write, a
// rename or a copy over it sets, and nothing can set back; see
// changeTime) is not earlier. A build writes its manifest after every
// page, so a page changed since the manifest was written is one no build
// wrote; one of the same time (the clock ticks every few milliseconds)
// may be too.
func changedSince(info, ref fs.FileInfo) bool {
	a, b, ok := changeTimes(info, ref)
	if !ok {
		return !info.ModTime().Before(ref.ModTime())
	}
	return !a.Before(b)
}

// rechecked are the files a build read in full because their times said
// that they changed since the last manifest was written (changedSince),
// and found as it says. A copy that keeps bytes and modification times (cp -rp, rsync -a,
// a CI cache restored), chmod -R or a new hard link (cp -al, rsync
// --link-dest) gives every file a new status change time: unless the
// manifest is written again after them (same bytes, a later time: see
// moved, and settle), every later build would read them all again.
type rechecked struct {
	mu    sync.Mutex
	files []checkedFile
}

// checkedFile is a file read in full, and its stat before it was read.
type checkedFile struct {
	name string
	info fs.FileInfo
}

// add records the file name, found as the manifest says, whose stat
// before it was read is info.
func (r *rechecked) add(name string, info fs.FileInfo) {
	r.mu.Lock()
	r.files = append(r.files, checkedFile{name, info})
	r.mu.Unlock()
}

// moved reports whether the manifest is to be written again, after the
// files read: there are some, and none changed since it was read (one
// changed while the build read the others must be left for the next
// build to read again). One deleted since (a stale page) does not
// matter: any build sees that a file is missing.
func (r *rechecked) moved() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.files) == 0 {
		return false
	}
	for _, f := range r.files {
		now, err := os.Stat(f.name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil || !sameChange(f.info, now) {
			return false
		}
	}
	return true
}

// any reports whether files were read.
func (r *rechecked) any() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.files) > 0
}

// settleFor bounds how long settle waits for the file system's clock.
const settleFor = 50 * time.Millisecond

// settle makes the status change time of the manifest, name, just
// written, later than that of every file changed before it, so that the
// next build reads none of them (see changedSince): it changes the
// file's status (chmod to its own mode) until its time passes the one
// the write gave it, which a file system's clock does within a tick (a
// few milliseconds). A build that wrote pages, or read pages because of
// their times, settles its manifest. It gives up after settleFor (a
// file system whose times count seconds): the next build then reads
// again the few pages of the manifest's time.
func settle(name string) {
	first, err := os.Stat(name)
	if err != nil {
		return
	}
	if _, _, ok := changeTimes(first, first); !ok {
		return // times that a chmod does not change
	}
	for start := time.Now(); time.Since(start) < settleFor; time.Sleep(time.Millisecond) {
		if os.Chmod(name, first.Mode().Perm()) != nil {
			return
		}
		now, err := os.Stat(name)
		if err != nil || !os.SameFile(first, now) {
			return
		}
		if !changedSince(first, now) {
			return
		}
	}
}

// sameChange reports whether a and b are the same file, of the same size,
// with the same status change time (modification time where it is not
// known).
func sameChange(a, b fs.FileInfo) bool {
	if !os.SameFile(a, b) || a.Size() != b.Size() {
		return false
	}
	x, y, ok := changeTimes(a, b)
	if !ok {
		return a.ModTime().Equal(b.ModTime())
	}
	return x.Equal(y)
}
