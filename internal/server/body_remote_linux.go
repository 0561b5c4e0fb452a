//go:build linux

package server

import "golang.org/x/sys/unix"

// mapBody returns n bytes of anonymous memory, outside the Go heap, for a
// body read from a bucket: freed by unmapBody, at once, when the last
// holder lets go of it (see remoteEntry), not when a collection finds it
// unreachable.
func mapBody(n int) ([]byte, error) {
	return unix.Mmap(-1, 0, n, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
}

// unmapBody frees memory mapBody returned, as it returned it.
func unmapBody(b []byte) { unix.Munmap(b) }
