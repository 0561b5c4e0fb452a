//go:build !linux

package testfiles

import "testing"

// InMountNamespace runs a test as root of new user and mount namespaces,
// on Linux only: here it returns false and the test goes on, its bind
// mounts skipped.
func InMountNamespace(t *testing.T) (ran bool) { return false }

// BindMount is mount --bind, on Linux only: the test is skipped.
func BindMount(t testing.TB, src, dst string) {
	t.Helper()
	t.Skip("mount --bind is Linux only")
}
