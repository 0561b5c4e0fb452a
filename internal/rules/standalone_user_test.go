package rules

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestStandaloneWorkersNotRoot runs nginx's and Apache's standalone
// configs as their docs say (a master that forks workers), started by
// root, and checks that no worker runs as root: a request must never be
// answered by a process that can write anywhere. Run by any other user,
// the servers keep theirs, and there is nothing to check.
func TestStandaloneWorkersNotRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("the servers drop privileges only when started by root")
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc to read the workers' users from")
	}
	for _, tc := range []struct {
		target  string
		command func(out string) *exec.Cmd
	}{
		{"nginx", func(out string) *exec.Cmd {
			nginx := needProgram(t, "nginx")
			return exec.Command(nginx, "-p", out, "-c", "nginx.conf", "-e", filepath.Join(out, "error.log"), "-g", "daemon off;")
		}},
		{"apache", func(out string) *exec.Cmd {
			apache := needProgram(t, "apache2", "httpd")
			return exec.Command(apache, "-d", out, "-f", "apache.conf", "-DFOREGROUND")
		}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			s, err := NewSite(sampleMan, sampleRoot, "127.0.0.1:"+freePort(t))
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = true
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			if _, _, err := Write(tg, s, out, false); err != nil {
				t.Fatal(err)
			}
			cmd := tc.command(out)
			// The workers need not read the build (in the tests' folders,
			// which only root can): any answer says they run.
			startProcess(t, "http://"+s.Listen, cmd)
			workers := children(t, cmd.Process.Pid)
			if len(workers) == 0 {
				t.Fatalf("%s (pid %d) has no workers", tc.target, cmd.Process.Pid)
			}
			for pid, uid := range workers {
				if uid == 0 && stillRoot(pid) {
					t.Errorf("%s's worker %d runs as root", tc.target, pid)
				}
			}
		})
	}
}

// stillRoot reports whether the process pid still runs as root after
// 3 s: a worker the master has just forked is root until it drops its
// privileges, a moment later (Apache forks more workers as it runs). A
// worker that exits meanwhile is not root.
func stillRoot(pid int) bool {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(3 * time.Second)
	for {
		if uid, ok := uidOf(pid); !ok || uid != 0 {
			return false
		}
		select {
		case <-deadline:
			return true
		case <-tick.C:
		}
	}
}

// uidOf returns the real uid of the process pid, from /proc; false when
// it is gone.
func uidOf(pid int) (int, bool) {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0, false
	}
	for line := range strings.Lines(string(data)) {
		if k, v, _ := strings.Cut(line, ":"); k == "Uid" {
			if fields := strings.Fields(v); len(fields) > 0 {
				uid, err := strconv.Atoi(fields[0])
				return uid, err == nil
			}
		}
	}
	return 0, false
}

// children returns the processes whose parent is pid, with the real uid
// of each, from /proc.
func children(t *testing.T, pid int) map[int]int {
	t.Helper()
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	kids := map[int]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		f, err := os.Open(filepath.Join("/proc", e.Name(), "status"))
		if err != nil {
			continue // gone since
		}
		ppid, uid := -1, -1
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), ":")
			fields := strings.Fields(v)
			switch {
			case k == "PPid" && len(fields) > 0:
				ppid, _ = strconv.Atoi(fields[0])
			case k == "Uid" && len(fields) > 0:
				uid, _ = strconv.Atoi(fields[0])
			}
		}
		f.Close()
		if ppid == pid {
			kids[child] = uid
		}
	}
	return kids
}
