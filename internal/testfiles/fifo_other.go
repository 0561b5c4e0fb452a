//go:build !unix

package testfiles

import "testing"

// FIFO is a named pipe, on Unix only: the test is skipped.
func FIFO(t testing.TB, name string) {
	t.Helper()
	t.Skip("named pipes are Unix only")
}
