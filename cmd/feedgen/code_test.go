package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/buildinfo"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestCodeID checks the code a build records: the Go build ID that go tool
// buildid reads, which changes with the code, whatever the version says;
// without one, a release version, but never a development one.
func TestCodeID(t *testing.T) {
	feedgen := binary(t)
	out, err := exec.Command("go", "tool", "buildid", feedgen).Output()
	if err != nil {
		t.Fatalf("go tool buildid: %v", err)
	}
	want := strings.TrimSpace(string(out))
	if got := buildinfo.GoBuildID(feedgen); got != want || want == "" {
		t.Errorf("buildinfo.GoBuildID(%s) = %q, want %q", feedgen, got, want)
	}
	notELF := filepath.Join(t.TempDir(), "feedgen")
	testfiles.WriteFile(t, notELF, "#!/bin/sh\n")
	if got := buildinfo.GoBuildID(notELF); got != "" {
		t.Errorf("goBuildID of a script = %q, want \"\"", got)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	id := buildinfo.GoBuildID(exe)
	if id == "" {
		t.Fatal("the test binary has no build ID")
	}
	for _, version := range []string{"dev", "v1.2.3", "v0.0.0-20261123133345-224cf57177b5+dirty"} {
		if got := buildinfo.CodeID(version); got != "go build "+id {
			t.Errorf("buildinfo.CodeID(%q) = %q, want the build ID of the test binary %q", version, got, id)
		}
	}
	for _, tt := range []struct{ id, version, want string }{
		{"abc/def", "v1.2.3", "go build abc/def"},
		{"", "v1.2.3", "v1.2.3"},
		{"", "v0.0.0-20261123133345-224cf57177b5", "v0.0.0-20261123133345-224cf57177b5"},
		{"", "v0.0.0-20261123133345-224cf57177b5+dirty", ""},
		{"", "dev", ""},
	} {
		if got := buildinfo.Code(tt.id, tt.version); got != tt.want {
			t.Errorf("code(%q, %q) = %q, want %q", tt.id, tt.version, got, tt.want)
		}
	}
}
