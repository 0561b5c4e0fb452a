package build

import (
	"io/fs"
	"syscall"
)

// changedSince reports whether the file of info may have changed after
// the file of ref: its status change time (ctime, which a write, a
// rename or a copy over it sets, and nothing can set back) is not
// earlier. A build writes its manifest after every page, so a page
// changed since the manifest was written is one no build wrote; one of
// the same time (the clock ticks every few milliseconds) may be too.
func changedSince(info, ref fs.FileInfo) bool {
	a, ok := info.Sys().(*syscall.Stat_t)
	b, ok2 := ref.Sys().(*syscall.Stat_t)
	if !ok || !ok2 {
		return !info.ModTime().Before(ref.ModTime())
	}
	return a.Ctim.Sec > b.Ctim.Sec || a.Ctim.Sec == b.Ctim.Sec && a.Ctim.Nsec >= b.Ctim.Nsec
}
