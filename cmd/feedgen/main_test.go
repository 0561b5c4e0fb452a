package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
)

// binary is the feedgen executable built once for the end-to-end tests.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "feedgen-e2e")
	if err != nil {
		panic(err)
	}
	binary = filepath.Join(dir, "feedgen")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		os.Stderr.Write(out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

type result struct {
	code           int
	stdout, stderr string
}

// runFeedgen runs the binary in dir with args and extra environment.
func runFeedgen(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return result{code, stdout.String(), stderr.String()}
}

func writeFile(t *testing.T, name, data string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestBuildSample(t *testing.T) {
	dir := t.TempDir()
	r := runFeedgen(t, dir, nil, "build")
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	if !strings.Contains(r.stderr, "no config.yaml here: using the embedded sample site") {
		t.Errorf("stderr = %q, want the sample-site notice", r.stderr)
	}
	if !strings.Contains(r.stdout, "pages in public/articles") || !strings.Contains(r.stdout, "written, 0 unchanged, 0 deleted") {
		t.Errorf("summary = %q", r.stdout)
	}
	data, err := os.ReadFile(filepath.Join(dir, "public", "articles", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	var page struct {
		Count int
		Next  string
	}
	if err := json.Unmarshal(data, &page); err != nil || page.Count < 60 || page.Next != "https://api.example.com/articles/?limit=20&offset=20" {
		t.Errorf("index.json: count %d, next %q, err %v", page.Count, page.Next, err)
	}
	r = runFeedgen(t, dir, nil, "build", "--quiet")
	if r.code != 0 || r.stdout != "" {
		t.Errorf("quiet rebuild: exit %d, stdout %q", r.code, r.stdout)
	}
}

const e2eConfig = "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {politics: Politics}}\nauthors: {ivan: {name: Ivan, url: /a/}}\n"

func TestExitCodes(t *testing.T) {
	site := t.TempDir()
	writeFile(t, filepath.Join(site, "config.yaml"), e2eConfig)
	writeFile(t, filepath.Join(site, "content/news/politics/ok.md"), "---\nid: 1\ntitle: OK\npublished: 2025-01-01T10:00:00\nauthor: ivan\n---\n")
	writeFile(t, filepath.Join(site, "content/news/politics/bad.md"), "---\nid: 1\ntitle: Bad\npublished: someday\nauthor: nobody\n---\n")
	tests := []struct {
		name     string
		args     []string
		code     int
		inStderr []string
	}{
		{"content errors", []string{"build", "--config", filepath.Join(site, "config.yaml")}, 1, []string{
			filepath.Join(site, "content/news/politics/bad.md") + `:4: published: "someday" is not a date and time`,
			filepath.Join(site, "content/news/politics/bad.md") + `:5: unknown author "nobody"`,
			"feedgen: 2 errors, nothing written\n",
		}},
		{"missing config given explicitly", []string{"build", "--config", filepath.Join(site, "nope.yaml")}, 1, []string{"reading config " + filepath.Join(site, "nope.yaml") + ": no such file or directory"}},
		{"unknown flag", []string{"build", "--frobnicate"}, 2, []string{"unknown flag: --frobnicate", "Run 'feedgen --help' for usage."}},
		{"extra argument", []string{"build", "extra"}, 2, []string{`feedgen build takes no arguments, got ["extra"]`}},
		{"unknown command", []string{"frobnicate"}, 2, []string{`unknown command "frobnicate"`}},
		{"bad SOURCE_DATE_EPOCH", []string{"build", "--config", filepath.Join(site, "config.yaml")}, 2, []string{`SOURCE_DATE_EPOCH="yesterday" is not a whole number`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if strings.HasPrefix(tt.name, "bad SOURCE") {
				env = []string{"SOURCE_DATE_EPOCH=yesterday"}
			}
			r := runFeedgen(t, t.TempDir(), env, tt.args...)
			if r.code != tt.code {
				t.Errorf("exit code %d, want %d (stderr %q)", r.code, tt.code, r.stderr)
			}
			for _, s := range tt.inStderr {
				if !strings.Contains(r.stderr, s) {
					t.Errorf("stderr %q does not contain %q", r.stderr, s)
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(site, "public")); err == nil {
		t.Errorf("a failed build created the output folder")
	}
}

func TestVersionAndHelp(t *testing.T) {
	if r := runFeedgen(t, t.TempDir(), nil, "version"); r.code != 0 || !strings.HasPrefix(r.stdout, "feedgen ") {
		t.Errorf("version: exit %d, stdout %q", r.code, r.stdout)
	}
	for _, cmd := range []string{"build", "version"} {
		r := runFeedgen(t, t.TempDir(), nil, cmd, "--help")
		if r.code != 0 || !strings.Contains(r.stdout, "Examples:") {
			t.Errorf("%s --help: exit %d, no example in %q", cmd, r.code, r.stdout)
		}
	}
}

func TestReproducible(t *testing.T) {
	env := []string{"SOURCE_DATE_EPOCH=1767225600"}
	var manifests []string
	for range 2 {
		dir := t.TempDir()
		if r := runFeedgen(t, dir, env, "build", "-q"); r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		data, err := os.ReadFile(filepath.Join(dir, "public", "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		manifests = append(manifests, string(data))
		time.Sleep(1100 * time.Millisecond)
	}
	if manifests[0] != manifests[1] {
		t.Errorf("two builds with the same SOURCE_DATE_EPOCH differ")
	}
	if !strings.Contains(manifests[0], `"build_time":"2026-01-01T00:00:00Z"`) {
		t.Errorf("manifest does not record SOURCE_DATE_EPOCH as the build time")
	}
}

// TestKilledBuild kills builds at random moments: every page left must be
// complete (old or new, never torn), and the next build must repair the
// output to exactly what a clean build writes.
func TestKilledBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	site := t.TempDir()
	if _, err := corpus.Write(site, corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(site, "config.yaml")
	clean := filepath.Join(t.TempDir(), "clean")
	if r := runFeedgen(t, site, nil, "build", "-q", "--config", cfg, "--out", clean); r.code != 0 {
		t.Fatalf("clean build: %s", r.stderr)
	}
	out := filepath.Join(t.TempDir(), "out")
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		// Alternate between two contents, so that kills land in rewrites too.
		if i%2 == 1 {
			writeFile(t, filepath.Join(site, "config.yaml"), strings.Replace(string(corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7})), "https://api.example.com", "https://api2.example.com", 1))
		} else {
			writeFile(t, filepath.Join(site, "config.yaml"), string(corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7})))
		}
		cmd := exec.Command(binary, "build", "-q", "--config", cfg, "--out", out)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
		cmd.Process.Kill()
		cmd.Wait()
		checkComplete(t, out)
	}
	writeFile(t, filepath.Join(site, "config.yaml"), string(corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7})))
	if r := runFeedgen(t, site, nil, "build", "-q", "--config", cfg, "--out", out); r.code != 0 {
		t.Fatalf("repair build: %s", r.stderr)
	}
	if d := compareTrees(t, clean, out); d != "" {
		t.Errorf("after repair the output differs from a clean build: %s", d)
	}
}

func checkComplete(t *testing.T, dir string) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".tmp") {
			return nil
		}
		data, err := os.ReadFile(p)
		if err == nil && !json.Valid(data) {
			t.Errorf("torn file %s (%d bytes)", p, len(data))
		}
		return nil
	})
}

func compareTrees(t *testing.T, a, b string) string {
	t.Helper()
	read := func(root string) map[string]string {
		m := map[string]string{}
		filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				data, _ := os.ReadFile(p)
				rel, _ := filepath.Rel(root, p)
				m[rel] = string(data)
			}
			return nil
		})
		return m
	}
	ma, mb := read(a), read(b)
	for p, da := range ma {
		if p == "manifest.json" {
			continue // holds the build time
		}
		if mb[p] != da {
			return "file " + p
		}
	}
	if len(ma) != len(mb) {
		return "file count"
	}
	return ""
}
