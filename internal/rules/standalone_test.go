package rules

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestStandaloneInOutDir checks that a standalone config names no file
// outside OUTDIR that its server would write (pid, logs, temporary files,
// mutexes), by its absolute path or relative to the server's prefix,
// OUTDIR: so that any user can run it, with no system folder. The
// tests that run the servers (TestNginx, TestNginxNJS, TestApache) run
// them as root, who could write anywhere.
func TestStandaloneInOutDir(t *testing.T) {
	writes := regexp.MustCompile(`(?m)^\s*(pid|error_log|access_log|\w+_temp_path|ServerRoot|PidFile|ErrorLog|CustomLog|DefaultRuntimeDir|Mutex)\s+"([^"]*)"`)
	for _, tc := range []struct {
		target, file string
		want         int // the directives that name a file
	}{
		{"nginx", "nginx.conf", 8},
		{"nginx-njs", "nginx.conf", 8},
		{"apache", "apache.conf", 6},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			if !tg.Standalone {
				t.Fatalf("%s has no standalone config", tc.target)
			}
			s, err := NewSite(sampleMan, sampleRoot, "8080")
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = true
			out := t.TempDir()
			files, _, err := generate(tg, s, out)
			if err != nil {
				t.Fatal(err)
			}
			conf := string(files.Files[tc.file])
			ms := writes.FindAllStringSubmatch(conf, -1)
			if len(ms) != tc.want {
				t.Errorf("%d directives name a file the server writes, want %d: %q", len(ms), tc.want, ms)
			}
			for _, m := range ms {
				p := strings.TrimPrefix(m[2], "file:")
				if !filepath.IsAbs(p) {
					// Relative to the server's prefix, OUTDIR (nginx -p,
					// Apache's ServerRoot).
					p = filepath.Join(out, p)
				}
				if p != out && !strings.HasPrefix(p, out+string(filepath.Separator)) {
					t.Errorf("%s %s is not in %s", m[1], m[2], out)
				}
			}
		})
	}
}

// TestCommandsInComments checks that the first comment of a file that
// runs as it is (a standalone config, the Caddyfile) gives the commands
// of its target's Commands, which feedgen's messages give too, and that
// they quote a folder with a space in its name as a shell must have it:
// the lines a reader copies run.
func TestCommandsInComments(t *testing.T) {
	out := filepath.Join(t.TempDir(), "my deploy")
	for _, tc := range []struct {
		target, file string
		standalone   bool
		dir          string    // the folder the comment's commands name
		want         [3]string // start, reload, stop
	}{
		{"nginx", "nginx.conf", true, "DIR", [3]string{"nginx -p DIR -c nginx.conf", "nginx -p DIR -c nginx.conf -s reload", "nginx -p DIR -c nginx.conf -s stop"}},
		{"nginx-njs", "nginx.conf", true, "DIR", [3]string{"nginx -p DIR -c nginx.conf", "nginx -p DIR -c nginx.conf -s reload", "nginx -p DIR -c nginx.conf -s stop"}},
		{"apache", "apache.conf", true, out, [3]string{"apache2 -d '" + out + "' -f apache.conf -k start", "apache2 -d '" + out + "' -f apache.conf -k graceful", "apache2 -d '" + out + "' -f apache.conf -k stop"}},
		{"caddy", "Caddyfile", false, out, [3]string{"caddy run --config '" + filepath.Join(out, "Caddyfile") + "' --adapter caddyfile", "caddy run --config '" + filepath.Join(out, "Caddyfile") + "' --adapter caddyfile"}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			c := tg.CommandsFor(tc.dir, tc.standalone)
			if got := [3]string{c.Start, c.Reload, c.Stop}; got != tc.want {
				t.Errorf("commands %q, want %q", got, tc.want)
			}
			s, err := NewSite(sampleMan, sampleRoot, "8080")
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = tc.standalone
			o, _, err := generate(tg, s, out)
			if err != nil {
				t.Fatal(err)
			}
			comment := string(o.Files[tc.file])
			comment = comment[:strings.Index(comment, "\n\n")]
			for _, cmd := range tc.want {
				if cmd != "" && !strings.Contains(comment, " "+cmd+"\n") {
					t.Errorf("the first comment of %s has no line with %s:\n%s", tc.file, cmd, comment)
				}
			}
		})
	}
}
