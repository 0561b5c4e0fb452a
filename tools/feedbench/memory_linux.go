package main

import "syscall"

// memoryDir returns a folder in /dev/shm for the content of part (b),
// when it is a tmpfs with need bytes free; "" when not. Content on disk,
// even read into the page cache just before, was partly read again from
// disk during a 30-second build and never during a 2-second one: this VM
// pages out file pages unused for about a minute (DAMON's proactive
// pageout), which compared a build reading from disk with one reading from
// memory. tmpfs pages are not paged out (nor swapped, without swap). The output
// stays on disk.
func memoryDir(need int64) string {
	const dir, tmpfsMagic = "/dev/shm", 0x01021994
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil || st.Type != tmpfsMagic {
		return ""
	}
	if free := int64(st.Bavail) * int64(st.Bsize); free < need+need/2 {
		return ""
	}
	return dir
}
