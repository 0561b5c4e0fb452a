package rules

import (
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNginx runs nginx on the complete config feedgen rules nginx
// --standalone writes for the sample build, with no system config.
func TestNginx(t *testing.T) {
	base := runTarget(t, "nginx", startNginx(t))
	checkPlain(t, base, true)
}

// startNginx returns how to run the files of the nginx target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startNginx(t *testing.T) startFunc {
	t.Helper()
	nginx := needProgram(t, "nginx")
	return func(t *testing.T, out string, s *Site) string {
		base := "http://" + s.Listen
		startProcess(t, base, nginxCommand(nginx, out))
		return base
	}
}

// nginxCommand runs nginx in the foreground on the standalone nginx.conf
// in out, as docs/deploying.md does but for -g: in one process, which
// keeps the user it runs as (started by root, nginx's workers run as
// nobody, who could not read the tests' folders), and with what nginx
// says before it reads its config on stderr, not in the system's log.
func nginxCommand(nginx, out string) *exec.Cmd {
	return exec.Command(nginx, "-p", out, "-c", "nginx.conf", "-e", filepath.Join(out, "error.log"), "-g", "daemon off; master_process off;")
}
