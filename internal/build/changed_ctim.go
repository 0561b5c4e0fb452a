//go:build linux || openbsd || dragonfly || solaris

package build

import (
	"io/fs"
	"syscall"
	"time"
)

// changeTimes returns the status change times (ctime) of the files of a
// and b; ok is false when they are not known.
func changeTimes(a, b fs.FileInfo) (x, y time.Time, ok bool) {
	sa, ok := a.Sys().(*syscall.Stat_t)
	sb, ok2 := b.Sys().(*syscall.Stat_t)
	if !ok || !ok2 {
		return time.Time{}, time.Time{}, false
	}
	return time.Unix(int64(sa.Ctim.Sec), int64(sa.Ctim.Nsec)), time.Unix(int64(sb.Ctim.Sec), int64(sb.Ctim.Nsec)), true
}
