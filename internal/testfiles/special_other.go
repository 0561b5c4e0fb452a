//go:build !linux

package testfiles

import "testing"

// BindMount is mount --bind, on Linux only: the test is skipped.
func BindMount(t testing.TB, src, dst string) {
	t.Helper()
	t.Skip("mount --bind is Linux only")
}
