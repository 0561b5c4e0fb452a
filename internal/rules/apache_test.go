package rules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestApache runs Apache in the foreground (-X) with a main config of its
// own, in a temporary folder, that loads the modules apache.conf needs
// from Debian's folder and includes it.
func TestApache(t *testing.T) {
	base := runTarget(t, "apache", startApache(t))
	checkPlain(t, base, false)
}

// startApache returns how to run the files of the apache target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startApache(t *testing.T) startFunc {
	t.Helper()
	apache := needProgram(t, "apache2", "/usr/sbin/apache2", "httpd")
	const modules = "/usr/lib/apache2/modules"
	return func(t *testing.T, out string, s *Site) string {
		dir := t.TempDir()
		conf := fmt.Sprintf(`ServerRoot %[1]s
PidFile %[1]s/httpd.pid
ErrorLog %[1]s/error.log
DefaultRuntimeDir %[1]s
Mutex file:%[1]s default
ServerName localhost
LoadModule mpm_event_module %[2]s/mod_mpm_event.so
LoadModule authz_core_module %[2]s/mod_authz_core.so
LoadModule rewrite_module %[2]s/mod_rewrite.so
LoadModule headers_module %[2]s/mod_headers.so
LoadModule setenvif_module %[2]s/mod_setenvif.so
Include %[3]s
`, dir, modules, filepath.Join(out, "apache.conf"))
		main := filepath.Join(dir, "httpd.conf")
		if err := os.WriteFile(main, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(apache, "-X", "-f", main)
		base := "http://" + s.Listen
		startProcess(t, base, cmd)
		t.Cleanup(func() {
			if t.Failed() {
				log, _ := os.ReadFile(filepath.Join(dir, "error.log"))
				t.Logf("error.log:\n%s", log)
			}
		})
		return base
	}
}
