//go:build darwin || freebsd || netbsd

package build

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTimes returns the status change times (ctime) of the files of a
// and b; ok is false when they are not known. Not their modification
// times, which cp -p and rsync -t set back (openbsd and dragonfly:
// changed_ctim.go).
func changeTimes(a, b fs.FileInfo) (x, y time.Time, ok bool) {
	sa, ok := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if !ok || !ok2 {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(int64(sa.Ctimespec.Sec), int64(sa.Ctimespec.Nsec)), time.Unix(int64(sb.Ctimespec.Sec), int64(sb.Ctimespec.Nsec)), true
}
