package rules

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMachinePaths checks that the files which a platform reads with
// paths relative to themselves, or to a prefix that is their folder, name
// no folder of this machine: wrangler.toml names the build relative to
// itself, a standalone nginx.conf its own files and the build relative to
// nginx's prefix (nginx -p OUTDIR). workerd reads a relative path from the
// folder it is started in, and the system's nginx from its own prefix:
// those keep absolute paths.
func TestNoMachinePaths(t *testing.T) {
	site := filepath.Join(t.TempDir(), "my-site")
	root, out := filepath.Join(site, "public"), filepath.Join(site, "deploy", "out")
	for _, tc := range []struct {
		target     string
		standalone bool
		file       string
		has        []string // lines it must have
	}{
		{"cloudflare", false, "wrangler.toml", []string{`directory = "../../public"`}},
		{"nginx-njs", true, "nginx.conf", []string{`js_import feedgen from "feedgen.js";`, `pid "nginx.pid";`, `    access_log "access.log";`,
			`    root "../../public";`, `        alias "../../public/";`}},
		{"nginx", true, "nginx.conf", []string{`pid "nginx.pid";`, `error_log "error.log";`, `    proxy_temp_path "proxy_temp";`, `    root "../../public";`}},
	} {
		t.Run(tc.target, func(t *testing.T) {
			tg, err := Find(tc.target)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSite(sampleMan, root, "8080")
			if err != nil {
				t.Fatal(err)
			}
			s.Standalone = tc.standalone
			o, _, err := generate(tg, s, out)
			if err != nil {
				t.Fatal(err)
			}
			data := o.Files[tc.file]
			if bytes.Contains(data, []byte(site)) {
				t.Errorf("%s names this machine's folders:\n%s", tc.file, data)
			}
			for _, line := range tc.has {
				if !bytes.Contains(data, []byte("\n"+line+"\n")) {
					t.Errorf("%s has no line %s:\n%s", tc.file, line, data)
				}
			}
		})
	}
}

// TestWorkerdListens checks where workerd.capnp listens: where feedgen
// serve listens by default, 127.0.0.1, for a port alone; every interface
// for an empty host, as for serve --addr :PORT; the host given.
func TestWorkerdListens(t *testing.T) {
	tg, err := Find("cloudflare")
	if err != nil {
		t.Fatal(err)
	}
	for listen, want := range map[string]string{
		"8080":           `"127.0.0.1:8080"`,
		":8080":          `"*:8080"`,
		"0.0.0.0:8080":   `"0.0.0.0:8080"`,
		"127.0.0.2:9000": `"127.0.0.2:9000"`,
		"[::1]:9000":     `"[::1]:9000"`,
	} {
		s, err := NewSite(sampleMan, sampleRoot, listen)
		if err != nil {
			t.Fatal(err)
		}
		o, _, err := generate(tg, s, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if line := `(name = "http", address = ` + want + `, http = (), service = "feedgen"),`; !strings.Contains(string(o.Files["workerd.capnp"]), line) {
			t.Errorf("--listen %s: workerd.capnp has no line %s:\n%s", listen, line, o.Files["workerd.capnp"])
		}
	}
}

// TestNginxPathThroughLink checks how a standalone nginx.conf names the
// build when OUTDIR is reached through a link: nginx joins a relative
// path to its prefix, and the kernel takes a link's .. from the folder
// it points to, so that ../../public would be another folder: the build
// is then named by its absolute path. Through no link, relative.
func TestNginxPathThroughLink(t *testing.T) {
	dir := t.TempDir()
	root := filepath.Join(dir, "site", "public")
	for _, d := range []string{root, filepath.Join(dir, "elsewhere", "deploy")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "elsewhere", "deploy"), filepath.Join(dir, "site", "linked")); err != nil {
		t.Fatal(err)
	}
	tg, err := Find("nginx")
	if err != nil {
		t.Fatal(err)
	}
	for out, want := range map[string]string{
		filepath.Join(dir, "site", "linked", "nginx"): root,
		filepath.Join(dir, "site", "deploy", "nginx"): "../../public",
		filepath.Join(dir, "site", "public", "nginx"): "..",
	} {
		s, err := NewSite(sampleMan, root, "8080")
		if err != nil {
			t.Fatal(err)
		}
		s.Standalone = true
		o, _, err := generate(tg, s, out)
		if err != nil {
			t.Fatal(err)
		}
		if line := "\n    root " + nginxQuote(want) + ";\n"; !strings.Contains(string(o.Files["nginx.conf"]), line) {
			t.Errorf("-o %s: nginx.conf has no line %q", out, strings.TrimSpace(line))
		}
	}
}
