//go:build !unix

package server

// allocArena returns n bytes on the Go heap, where mmap is not available.
func allocArena(n int64) ([]byte, func(), error) {
	return make([]byte, n), func() {}, nil
}

func protectArena([]byte) {}
