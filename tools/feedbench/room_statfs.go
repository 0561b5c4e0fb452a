//go:build linux || darwin || freebsd

package main

import "syscall"

// freeSpace returns the bytes free to a user on the file system of dir.
func freeSpace(dir string) (free int64, ok bool, err error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, false, err
	}
	return int64(st.Bavail) * int64(st.Bsize), true, nil
}
