package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestCodeID checks the code a build records: the Go build ID that go tool
// buildid reads, which changes with the code, whatever the version says;
// without one, a release version, but never a development one.
func TestCodeID(t *testing.T) {
	out, err := exec.Command("go", "tool", "buildid", binary).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if got := goBuildID(binary); got != want || want == "" {
		t.Errorf("goBuildID(%s) = %q, want %q", binary, got, want)
	}
	notELF := filepath.Join(t.TempDir(), "feedgen")
	writeFile(t, notELF, "#!/bin/sh\n")
	if got := goBuildID(notELF); got != "" {
		t.Errorf("goBuildID of a script = %q, want \"\"", got)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := goBuildID(exe)
	if id == "" {
		t.Fatal("the test binary has no build ID")
	}
	for _, version := range []string{"dev", "v1.2.3", "v0.0.0-20261123133345-224cf57177b5+dirty"} {
		if got := codeID(version); got != "go build "+id {
			t.Errorf("codeID(%q) = %q, want the build ID of the test binary %q", version, got, id)
		}
	}
	for _, tt := range []struct{ id, version, want string }{
		{"abc/def", "v1.2.3", "go build abc/def"},
		{"", "v1.2.3", "v1.2.3"},
		{"", "v0.0.0-20261123133345-224cf57177b5", "v0.0.0-20261123133345-224cf57177b5"},
		{"", "v0.0.0-20261123133345-224cf57177b5+dirty", ""},
		{"", "dev", ""},
	} {
		if got := code(tt.id, tt.version); got != tt.want {
			t.Errorf("code(%q, %q) = %q, want %q", tt.id, tt.version, got, tt.want)
		}
	}
}

// TestNoChangeRebuild runs the binary twice on one site: the second build
// parses nothing and says so, even after a file was rewritten with the same
// bytes, and an edit is built as usual.
func TestNoChangeRebuild(t *testing.T) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "config.yaml"), e2eConfig)
	art := filepath.Join(dir, "content", "news", "politics", "a.md")
	const text = "---\nid: 1\ntitle: A\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n"
	writeFile(t, art, text)
	build := func() string {
		t.Helper()
		r := runFeedgen(t, dir, nil, "build")
		if r.code != 0 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		return r.stdout
	}
	build()
	for _, step := range []struct {
		name, text, want string
	}{
		{"no change", text, "2 unchanged, 0 deleted"},
		{"same bytes written again", text, "2 unchanged, 0 deleted"},
		{"an edit", strings.Replace(text, "title: A", "title: B", 1), "2 written, 0 unchanged"},
	} {
		if step.name != "no change" {
			writeFile(t, art, step.text)
		}
		out := build()
		skipped := strings.HasSuffix(strings.TrimSpace(out), ", inputs unchanged")
		if !strings.Contains(out, step.want) || skipped != (step.name != "an edit") {
			t.Errorf("%s: summary %q, want %q and the inputs unchanged: %v", step.name, out, step.want, step.name != "an edit")
		}
	}
}
