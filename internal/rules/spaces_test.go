package rules

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestFoldersWithSpaces runs the server targets on files written into a
// folder with a space in its name, for a build in another ("my site"),
// as feedgen rules suggests to a user whose folder is named so (plain
// nginx refusing a chunks build suggests feedgen rules nginx-njs
// --standalone -o 'deploy/my nginx'): the servers read these paths
// quoted, so a space is no reason to refuse them. nginx-njs runs with a
// --cache folder with a space too, and as the file that a main config of
// the test's, in a folder with a space, includes.
func TestFoldersWithSpaces(t *testing.T) {
	dir := t.TempDir()
	pagesSite := filepath.Join(dir, "my pages site")
	if err := os.CopyFS(filepath.Join(pagesSite, "public"), os.DirFS(sampleRoot)); err != nil {
		t.Fatal(err)
	}
	chunksSite := filepath.Join(dir, "my chunks site")
	if err := os.CopyFS(chunksSite, os.DirFS(chunkSite)); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, target string
		chunks       bool
		standalone   bool
		cache        string
		start        func(t *testing.T) startFunc
	}{
		{"nginx", "nginx", false, true, "", startNginx},
		{"apache", "apache", false, true, "", startApache},
		{"caddy", "caddy", false, false, "", startCaddy},
		{"nginx-njs", "nginx-njs", true, true, "", startNginxNJS},
		{"nginx-njs cached", "nginx-njs", true, true, "my cache", startNginxNJS},
		{"nginx-njs included", "nginx-njs", true, false, "", startNginxIncluded},
	} {
		t.Run(tc.name, func(t *testing.T) {
			start := tc.start(t)
			m, root := sampleMan, filepath.Join(pagesSite, "public")
			if tc.chunks {
				m, root = chunkMan, filepath.Join(chunksSite, "public")
			}
			s, err := NewSite(m, root, "127.0.0.1:"+freePort(t))
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = tc.standalone
			if tc.cache != "" {
				s.Cache = filepath.Join(t.TempDir(), tc.cache)
				if err := os.MkdirAll(s.Cache, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "deploy", "my "+tc.target)
			if _, _, err := Write(tg, s, out, false); err != nil {
				t.Fatal(err)
			}
			base := start(t, out, s)
			if tc.chunks {
				checkChunkTarget(t, base)
			} else {
				checkTarget(t, base, support[tc.target])
			}
		})
	}
}

// startNginxIncluded returns how to run the files of nginx-njs written
// to be included (not --standalone): a main config of the test's, in a
// folder with a space in its name, includes nginx.conf in its http {}
// and loads the module, as the system's nginx.conf would.
func startNginxIncluded(t *testing.T) startFunc {
	t.Helper()
	nginx := needProgram(t, "nginx")
	return func(t *testing.T, out string, s *Site) string {
		module := StandaloneModules(njsTarget(), &Site{Standalone: true})[0]
		if _, err := os.Stat(module); err != nil {
			missingRuntime(t, module+" (libnginx-mod-http-js)")
		}
		host := filepath.Join(t.TempDir(), "host conf")
		if err := os.Mkdir(host, 0o755); err != nil {
			t.Fatal(err)
		}
		conf := "load_module " + nginxQuote(module) + ";\npid " + nginxQuote("nginx.pid") + ";\nerror_log " + nginxQuote("error.log") + ";\n" +
			"events {}\nhttp {\n    access_log off;\n    include " + nginxQuote(filepath.Join(out, "nginx.conf")) + ";\n}\n"
		if err := os.WriteFile(filepath.Join(host, "main.conf"), []byte(conf), 0o644); err != nil {
			t.Fatal(err)
		}
		base := "http://" + s.Listen
		startProcess(t, base, exec.Command(nginx, "-p", host, "-c", "main.conf", "-e", filepath.Join(host, "error.log"), "-g", "daemon off; master_process off;"))
		return base
	}
}
