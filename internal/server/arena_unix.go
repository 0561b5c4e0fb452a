//go:build unix

package server

import "syscall"

// allocArena returns n bytes of memory outside the Go heap, and the
// function that frees them. The pages of a build are held there: a heap of
// hundreds of megabytes that never changes would only make the garbage
// collector let the process grow to twice that size before collecting the
// little garbage the requests leave.
func allocArena(n int64) ([]byte, func(), error) {
	if n == 0 {
		return nil, func() {}, nil
	}
	b, err := syscall.Mmap(-1, 0, int(n), syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, nil, err
	}
	return b, func() { syscall.Munmap(b) }, nil
}

// protectArena makes a filled arena read-only: a stray write crashes
// instead of changing an answer.
func protectArena(b []byte) {
	if len(b) > 0 {
		syscall.Mprotect(b, syscall.PROT_READ)
	}
}
