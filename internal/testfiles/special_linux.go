package testfiles

import (
	"errors"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// mountNamespaceEnv marks the child process InMountNamespace starts: the
// test runs there, as root of its own user and mount namespaces.
const mountNamespaceEnv = "FEEDGEN_TEST_MOUNT_NAMESPACE"

// refusedExit is the child's exit status when it cannot mount in its
// namespaces (a kernel or a security module that gives a user namespace
// no mounts).
const refusedExit = 77

// InMountNamespace lets a test mount (BindMount), root or not, as
// `unshare -Urm` does, without touching the machine's mounts. Called
// first in a test, it runs this test again in a child process of the test
// binary, in a new mount namespace (and, not root, a new user namespace
// where the current user is root), reports the child's result as this
// test's, and returns true: the test returns at once. In the child it
// returns false and the test goes on; its mounts are private and vanish
// with the child. When the kernel refuses such namespaces it logs why and
// returns false: the test goes on in this process, and BindMount skips,
// saying why.
func InMountNamespace(t *testing.T) (ran bool) {
	t.Helper()
	if os.Getenv(mountNamespaceEnv) != "" {
		if os.Geteuid() != 0 {
			t.Fatalf("%s is set but this process is not root of its user namespace", mountNamespaceEnv)
		}
		// Mounts made here stay here: the machine's mounts may be
		// shared, and would receive them. It is also the test that
		// mounts are allowed.
		if err := syscall.Mount("", "/", "", syscall.MS_REC|syscall.MS_PRIVATE, ""); err != nil {
			os.Stderr.WriteString("mount --make-rprivate / in a mount namespace of its own: " + err.Error() + "\n")
			os.Exit(refusedExit)
		}
		return false
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.CommandContext(t.Context(), exe, "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.v", "-test.count=1")
	cmd.Env = append(os.Environ(), mountNamespaceEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNS, Pdeathsig: syscall.SIGKILL}
	if os.Geteuid() != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getuid(), Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: os.Getgid(), Size: 1}}
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return refused(t, "the kernel refuses a user namespace ("+err.Error()+"): run the tests as root, or allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1, user.max_user_namespaces=N)")
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	switch {
	case err == nil:
		t.Logf("run again in a mount namespace of its own:\n%s", out.String())
	case errors.As(err, &exit) && exit.ExitCode() == refusedExit:
		return refused(t, "the kernel gives a namespace of its own no mounts ("+strings.TrimSpace(out.String())+"): run the tests as root, or allow unprivileged user namespaces mounts (an AppArmor or SELinux policy?)")
	default:
		t.Errorf("run again in a mount namespace of its own: %v\n%s", err, out.String())
	}
	return true
}

// mountRefused is why InMountNamespace could not give a test mounts, a
// property of the machine, for BindMount to say.
var mountRefused atomic.Pointer[string]

func refused(t *testing.T, why string) bool {
	t.Helper()
	mountRefused.Store(&why)
	t.Log(why)
	return false
}

// BindMount mounts the folder src a second time at the folder dst (mount
// --bind), which must lie in a test's temporary folder, and unmounts it
// when the test ends, before the temporary folder is removed (a removal
// through the mount would delete src's files). It needs root, which
// InMountNamespace, called first in the test, gives: without, the test
// is skipped, saying why.
func BindMount(t testing.TB, src, dst string) {
	t.Helper()
	if os.Geteuid() != 0 {
		why := "call testfiles.InMountNamespace first in the test"
		if p := mountRefused.Load(); p != nil {
			why = *p
		}
		t.Skip("needs root to mount --bind: " + why)
	}
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := syscall.Mount(src, dst, "", syscall.MS_BIND, ""); err != nil {
		if os.Getenv(mountNamespaceEnv) != "" {
			t.Fatalf("mount --bind %s %s: %v", src, dst, err)
		}
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
