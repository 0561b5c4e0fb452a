package outdir

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestMarker: a build's marker, from Mark to Unmark, as a build and the
// readers of its folder see it.
func TestMarker(t *testing.T) {
	dir := t.TempDir()
	out := os.DirFS(dir)
	if Marked(dir) || Listed(dir) != nil || Finished(out, "bundle") != nil {
		t.Fatal("a folder without a marker: marked")
	}
	steps := []struct {
		name  string
		pages []string // Mark's, nil: Unmark
	}{
		{"first", []string{"articles/2/0.json", "articles/index.json"}},
		{"replaced", []string{"articles/9/0.json"}},
		{"none listed", []string{}},
		{"finished", nil},
		{"finished twice", nil},
	}
	for _, st := range steps {
		t.Run(st.name, func(t *testing.T) {
			var err error
			if st.pages == nil {
				err = Unmark(dir)
			} else {
				err = Mark(dir, st.pages)
			}
			if err != nil {
				t.Fatal(err)
			}
			if Marked(dir) != (st.pages != nil) {
				t.Errorf("Marked = %v", Marked(dir))
			}
			if got := Listed(dir); !slices.Equal(slices.DeleteFunc(got, func(s string) bool { return s == "" }), st.pages) && st.pages != nil {
				t.Errorf("Listed = %q, want %q", got, st.pages)
			}
			for _, then := range []string{"bundle", "publish"} {
				err := Finished(out, then)
				want := ""
				if st.pages != nil {
					want = "a build of the output folder is running or did not finish (it left .feedgen-unfinished): run feedgen build, and " + then + " once it is done"
				}
				if got := errString(err); got != want {
					t.Errorf("Finished(%s) = %q, want %q", then, got, want)
				}
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("left in the folder: %v", entries)
	}
	if err := Mark(filepath.Join(dir, "missing"), nil); err == nil || !strings.HasPrefix(err.Error(), "marking the build in ") {
		t.Errorf("Mark in a missing folder: %v", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestSite tells a site's folder from a build's, and says where the
// site's build is.
func TestSite(t *testing.T) {
	dir := t.TempDir()
	const cfg = "site_url: https://www.example.com\nbase_url: https://api.example.com\n"
	testfiles.WriteFile(t, filepath.Join(dir, "built", "config.yaml"), cfg+"output_dir: out\n")
	testfiles.WriteFile(t, filepath.Join(dir, "built", "out", "manifest.json"), "{}")
	testfiles.WriteFile(t, filepath.Join(dir, "new", "config.yaml"), cfg)
	testfiles.WriteFile(t, filepath.Join(dir, "broken", "config.yaml"), "site_url: [\n")
	testfiles.WriteFile(t, filepath.Join(dir, "build", "config.yaml"), cfg) // a build of the sample, say
	testfiles.WriteFile(t, filepath.Join(dir, "build", "manifest.json"), "{}")
	testfiles.WriteFile(t, filepath.Join(dir, "hidden", ".git", "HEAD"), "")
	testfiles.WriteFile(t, filepath.Join(dir, "dir", "config.yaml", "x"), "") // not a file
	at := func(p ...string) string { return filepath.Join(append([]string{dir}, p...)...) }
	tests := []struct {
		dir   string
		out   string // SiteOutput's; "" when not a site
		err   string // NotSite's, with flag --root
		empty bool
	}{
		{dir: "built", out: at("built", "out"),
			err: at("built") + " is a site's folder (it has config.yaml), not a build: its build is in " + at("built", "out") + " (output_dir): pass --root " + at("built", "out")},
		{dir: "new", out: at("new", "public"),
			err: at("new") + " is a site's folder (it has config.yaml), not a build: its build goes to " + at("new", "public") + " (output_dir), and there is none there yet: run feedgen build in " + at("new") + ", then pass --root " + at("new", "public")},
		{dir: "broken", out: at("broken", "public"),
			err: at("broken") + " is a site's folder (it has config.yaml), not a build: its build goes to " + at("broken", "public") + " (output_dir), and there is none there yet: run feedgen build in " + at("broken") + ", then pass --root " + at("broken", "public")},
		{dir: "build"},
		{dir: "built/out"},
		{dir: "hidden", empty: true},
		{dir: "dir"},
		{dir: "missing"},
	}
	for _, tt := range tests {
		t.Run(tt.dir, func(t *testing.T) {
			d := at(tt.dir)
			out, ok := SiteOutput(d)
			if out != tt.out || ok != (tt.out != "") {
				t.Errorf("SiteOutput = %q, %v; want %q", out, ok, tt.out)
			}
			if got := errString(NotSite(d, "--root")); got != tt.err {
				t.Errorf("NotSite = %q\nwant %q", got, tt.err)
			}
			if Empty(d) != tt.empty {
				t.Errorf("Empty = %v", !tt.empty)
			}
		})
	}
}

// TestFind: the build folder of a reader command: --dir (not a site's),
// else the config's output_dir, else public.
func TestFind(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "site", "config.yaml"), "site_url: https://www.example.com\nbase_url: https://api.example.com\noutput_dir: out\n")
	if err := os.MkdirAll(filepath.Join(dir, "apart", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	site := filepath.Join(dir, "site")
	tests := []struct {
		name      string
		dir       string // --dir, when given
		config    string // --config, when given
		cwd       string
		out, path string
		err       string
	}{
		{name: "config here", cwd: site, out: "out", path: "config.yaml"},
		{name: "no config", cwd: filepath.Join(dir, "apart"), out: "public"},
		{name: "--dir", dir: "b", cwd: filepath.Join(dir, "apart"), out: "b"},
		{name: "--dir in a site", dir: "b", cwd: site, out: "b", path: "config.yaml"},
		{name: "--config", config: site, cwd: dir, out: filepath.Join(site, "out"), path: filepath.Join(site, "config.yaml")},
		{name: "--dir of a site", dir: site, cwd: dir, err: site + " is a site's folder (it has config.yaml), not a build: its build goes to " + filepath.Join(site, "out") + " (output_dir), and there is none there yet: run feedgen build in " + site + ", then pass --dir " + filepath.Join(site, "out")},
		{name: "--config missing", config: filepath.Join(dir, "apart"), cwd: dir, out: "public", err: "reading config " + filepath.Join(dir, "apart", "config.yaml") + ": no such file or directory"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Chdir(tt.cwd) // the paths Find returns are the process's
			out, path, err := Find(tt.dir, tt.dir != "", tt.config, tt.config != "", tt.cwd)
			if errString(err) != tt.err || out != tt.out || path != tt.path {
				t.Errorf("Find = %q, %q, %v; want %q, %q, %q", out, path, err, tt.out, tt.path, tt.err)
			}
		})
	}
}
