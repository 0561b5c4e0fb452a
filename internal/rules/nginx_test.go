package rules

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestNginx runs nginx with a main config of its own, in a temporary
// folder, that includes the nginx.conf of the sample build in http {}.
func TestNginx(t *testing.T) {
	base := runTarget(t, "nginx", startNginx(t))
	checkPlain(t, base, true)
}

// startNginx returns how to run the files of the nginx target: on
// its platform, started for the test, which answers on the base URL it
// returns.
func startNginx(t *testing.T) startFunc {
	t.Helper()
	nginx := needProgram(t, "nginx", "/usr/sbin/nginx")
	return func(t *testing.T, out string, s *Site) string {
		dir := t.TempDir()
		// One process, which keeps the user it runs as (nginx's workers
		// switch to nobody when run as root, and could not read the build).
		conf := fmt.Sprintf(`master_process off;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log;
events {}
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[2]s;
}
`, dir, filepath.Join(out, "nginx.conf"))
		main := filepath.Join(dir, "main.conf")
		if err := os.WriteFile(main, []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(nginx, "-p", dir, "-e", filepath.Join(dir, "error.log"), "-c", main, "-g", "daemon off;")
		base := "http://" + s.Listen
		startProcess(t, base, cmd)
		return base
	}
}
