package rules

import (
	"bytes"
	"path/filepath"
	"testing"
)

// TestStandaloneHoldsInclude checks that the complete config of a server
// target holds the file it writes to include, byte for byte after its
// header: the servers the tests run on the standalone configs (TestNginx,
// TestNginxNJS, TestApache) then run the include files too. The header
// differs: a standalone file is not included ("include /", the directive
// that includes the file itself), and loads its modules.
func TestStandaloneHoldsInclude(t *testing.T) {
	for _, tc := range []struct {
		target, file, notStandalone string
	}{
		{"nginx", "nginx.conf", "include /"},
		{"nginx-njs", "nginx.conf", "include /"},
		{"apache", "apache.conf", "which it does not load"},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSite(sampleMan, sampleRoot, "8080")
			if err != nil {
				t.Fatal(err)
			}
			out := t.TempDir()
			include, _, err := generate(tg, s, out)
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = true
			standalone, _, err := generate(tg, s, out)
			if err != nil {
				t.Fatal(err)
			}
			inc, full := include.Files[tc.file], standalone.Files[tc.file]
			// The paths differ, and nothing else: the standalone config
			// names feedgen.js and the build relative to its prefix,
			// OUTDIR, the included one by their absolute paths (the
			// system's nginx has its own prefix).
			rel, err := filepath.Rel(out, sampleRoot)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range [][2]string{
				{`js_import feedgen from "` + filepath.Join(out, "feedgen.js") + `";`, `js_import feedgen from "feedgen.js";`},
				{`root "` + sampleRoot + `";`, `root "` + rel + `";`},
				{`alias "` + sampleRoot + `/";`, `alias "` + rel + `/";`},
			} {
				inc = bytes.ReplaceAll(inc, []byte(r[0]), []byte(r[1]))
			}
			body := afterHeader(inc)
			if len(body) < len(inc)/2 {
				t.Fatalf("the include file's body is %d of its %d bytes", len(body), len(inc))
			}
			if !bytes.Contains(full, body) {
				t.Errorf("the standalone %s does not hold the include file's body:\n%s", tc.file, body)
			}
			if !bytes.Contains(inc, []byte(tc.notStandalone)) || bytes.Contains(full, []byte(tc.notStandalone)) {
				t.Errorf("%q: in the include file %v (want true), in the standalone one %v (want false)",
					tc.notStandalone, bytes.Contains(inc, []byte(tc.notStandalone)), bytes.Contains(full, []byte(tc.notStandalone)))
			}
			for name, data := range include.Files {
				if name != tc.file && !bytes.Equal(data, standalone.Files[name]) {
					t.Errorf("%s differs in the standalone files", name)
				}
			}
		})
	}
}

// afterHeader is conf without its first lines of comments.
func afterHeader(conf []byte) []byte {
	for bytes.HasPrefix(conf, []byte("#")) {
		i := bytes.IndexByte(conf, '\n')
		if i < 0 {
			return nil
		}
		conf = conf[i+1:]
	}
	return conf
}
