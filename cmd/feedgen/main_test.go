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
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/testfiles"
	"github.com/fsnotify/fsnotify"
)

// feedgenBinary finds the feedgen that the Go end-to-end tests run: the
// copy of this test binary that testscript.Main (see TestMain) put first in
// $PATH, the one the scripts in testdata/script run too.
var feedgenBinary = sync.OnceValues(func() (string, error) { return exec.LookPath("feedgen") })

// binary returns the path of feedgenBinary.
func binary(t *testing.T) string {
	t.Helper()
	path, err := feedgenBinary()
	if err != nil {
		t.Fatal(err)
	}
	return path
}

// feedgenEnv is the environment of feedgen in the Go end-to-end tests:
// this process's, with the race detector's 1s sleep at exit turned off
// (for when feedgen is race-enabled too: FEEDGEN_SCRIPT_RACE, see
// plainCommands).
func feedgenEnv() []string {
	env := os.Environ()
	if os.Getenv("GORACE") == "" {
		env = append(env, "GORACE=atexit_sleep_ms=0")
	}
	return env
}

type result struct {
	code           int
	stdout, stderr string
}

// runFeedgen runs the binary in dir with args and extra environment.
func runFeedgen(t *testing.T, dir string, env []string, args ...string) result {
	t.Helper()
	cmd := exec.Command(binary(t), args...)
	cmd.Dir = dir
	cmd.Env = append(feedgenEnv(), env...)
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

const e2eConfig = "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {politics: Politics}}\nauthors: {ivan: {name: Ivan, url: /a/}}\n"

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
	// The moments are counted in the build's changes to the output folder,
	// not in time: a kill after a random number of them lands while pages
	// are written, however long the build takes to get there.
	pages := len(files(t, clean))
	out := filepath.Join(t.TempDir(), "out")
	rng := rand.New(rand.NewPCG(1, 2))
	killed := 0
	for i := range 8 {
		// Alternate between two contents, so that kills land in rewrites too.
		if i%2 == 1 {
			testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), strings.Replace(string(corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7})), "https://api.example.com", "https://api2.example.com", 1))
		} else {
			testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7}))
		}
		cmd := exec.Command(binary(t), "build", "-q", "--config", cfg, "--out", out)
		cmd.Env = feedgenEnv()
		// Files older than the build are those checked after an earlier
		// one (with a second to spare for the file system's clock).
		started := time.Now().Add(-time.Second)
		if killAfterChanges(t, cmd, out, rng.IntN(2*pages)) {
			killed++
		}
		checkComplete(t, out, started)
	}
	if killed < 4 {
		t.Errorf("%d of 8 builds killed before they ended, want most", killed)
	}
	testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), corpus.Config(corpus.Options{Articles: 1500, Limits: []int{20}, Seed: 7}))
	if r := runFeedgen(t, site, nil, "build", "-q", "--config", cfg, "--out", out); r.code != 0 {
		t.Fatalf("repair build: %s", r.stderr)
	}
	if d := compareTrees(t, clean, out); d != "" {
		t.Errorf("after repair the output differs from a clean build: %s", d)
	}
}

// killAfterChanges runs cmd, a build into the folder out, and kills it
// once it made n changes under out (files created or written, as
// fsnotify reports them; out is made first when missing). It reports
// whether it killed it: a build that ends before is let be.
func killAfterChanges(t *testing.T, cmd *exec.Cmd, out string, n int) bool {
	t.Helper()
	if err := os.MkdirAll(out, 0o755); err != nil {
		t.Fatal(err)
	}
	w, err := fsnotify.NewWatcher()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// watch watches dir and the folders below it: those made before their
	// folder was watched give no event.
	watch := func(dir string) {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				w.Add(p) // a folder gone meanwhile is no change to count
			}
			return nil
		})
	}
	watch(out)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		close(exited)
	}()
	kill := func() bool {
		cmd.Process.Kill()
		<-exited
		return true
	}
	if n == 0 {
		return kill()
	}
	timeout := time.After(time.Minute)
	for changes := 0; ; {
		select {
		case ev := <-w.Events:
			if ev.Has(fsnotify.Create) {
				if info, err := os.Lstat(ev.Name); err == nil && info.IsDir() {
					watch(ev.Name)
					continue
				}
			}
			if ev.Has(fsnotify.Create) || ev.Has(fsnotify.Write) {
				if changes++; changes >= n {
					return kill()
				}
			}
		case err := <-w.Errors:
			// Changes were lost (the queue overflowed): the build is well
			// into its writes.
			t.Logf("watching %s: %v", out, err)
			return kill()
		case <-exited:
			return false
		case <-timeout:
			kill()
			t.Fatalf("the build made %d changes of %d in a minute, and did not end", changes, n)
		}
	}
}

// files returns the paths of the files under dir.
func files(t *testing.T, dir string) []string {
	t.Helper()
	var list []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			list = append(list, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// checkComplete checks that the files under dir modified since since
// (but temporary files and the marker of an unfinished build) are whole
// JSON.
func checkComplete(t *testing.T, dir string, since time.Time) {
	t.Helper()
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || strings.HasSuffix(p, ".tmp") || d.Name() == ".feedgen-unfinished" {
			return nil
		}
		if info, err := d.Info(); err == nil && info.ModTime().Before(since) {
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
	for _, m := range []map[string]string{ma, mb} {
		// A build's caches of its sources: times, inodes, a random id.
		delete(m, ".feedgen-sources")
		delete(m, ".feedgen-encoded")
	}
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
