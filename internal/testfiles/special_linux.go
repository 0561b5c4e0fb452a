package testfiles

import (
	"os"
	"syscall"
	"testing"
)

// BindMount mounts the folder src a second time at the folder dst (mount
// --bind), which must lie in a test's temporary folder, and unmounts it
// when the test ends, before the temporary folder is removed (a removal
// through the mount would delete src's files). It needs root: without,
// the test is skipped, saying so.
func BindMount(t testing.TB, src, dst string) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: mount --bind (run the tests as root to check bind mounts)")
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		t.Skipf("mount --bind %s %s: %v (no mounts here: a container without CAP_SYS_ADMIN?)", src, dst, err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dst, 0); err != nil {
			// Busy (a descriptor left open): detach it, so that the
			// removal of the temporary folder cannot reach src.
			if err := syscall.Unmount(dst, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmounting %s: %v", dst, err)
			}
		}
	})
}
