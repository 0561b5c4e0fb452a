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
