package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestApache runs Apache in the foreground (-X) on the complete config
// feedgen rules apache --standalone writes for the sample build, with no
// system config: it loads the modules apache.conf needs from Debian's
// folder.
func TestApache(t *testing.T) {
	base := runTarget(t, "apache", startApache(t))
	checkPlain(t, base, false)
}

// startApache returns how to run the files of the apache target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startApache(t *testing.T) startFunc {
	t.Helper()
	apache := needProgram(t, "apache2", "httpd")
	return func(t *testing.T, out string, s *Site) string {
		for _, m := range StandaloneModules(apacheTarget(), s) {
			if _, err := os.Stat(m); err != nil {
				missingRuntime(t, m+" (apache2)")
			}
		}
		// Started by root, Apache serves as nobody (User), even with -X.
		reachable(t, s.Root)
		cmd := exec.Command(apache, "-X", "-d", out, "-f", "apache.conf")
		base := "http://" + s.Listen
		startProcess(t, base, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				log, _ := os.ReadFile(filepath.Join(out, "error.log"))
				t.Logf("error.log:\n%s", log)
			}
		})
		return base
	}
}

// reachable lets any user reach the folder dir, made by a test: it adds
// o+x to each of its folders inside the system's temporary folder, which
// os.MkdirTemp (and so t.TempDir) makes for their owner only.
func reachable(t *testing.T, dir string) {
	t.Helper()
	tmp := filepath.Clean(os.TempDir())
	for d := filepath.Clean(dir); strings.HasPrefix(d, tmp+string(filepath.Separator)); d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(d, fi.Mode().Perm()|0o001); err != nil {
			t.Fatal(err)
		}
	}
}
