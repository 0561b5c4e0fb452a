package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestCaddy runs caddy on the Caddyfile of the sample build, with its
// home and data folders in a temporary folder.
func TestCaddy(t *testing.T) {
	base := runTarget(t, "caddy", startCaddy(t))
	checkPlain(t, base, true)
}

// startCaddy returns how to run the files of the caddy target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startCaddy(t *testing.T) startFunc {
	t.Helper()
	caddy := needProgram(t, "caddy")
	return func(t *testing.T, out string, s *Site) string {
		dir := t.TempDir()
		cmd := exec.Command(caddy, "run", "--config", filepath.Join(out, "Caddyfile"), "--adapter", "caddyfile")
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "HOME="+dir, "XDG_DATA_HOME="+filepath.Join(dir, "data"), "XDG_CONFIG_HOME="+filepath.Join(dir, "config"))
		base := "http://" + s.Listen
		startProcess(t, base, cmd)
		return base
	}
}
