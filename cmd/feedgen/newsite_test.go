package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestNewSiteFileServer follows what feedgen rules says to a new site
// (layout: chunks) that asks for a target mapping requests onto files:
// the lines it says to put in config.yaml in place of layout: chunks,
// applied as written, make a build that the target takes (nginx last).
func TestNewSiteFileServer(t *testing.T) {
	root := t.TempDir()
	site := filepath.Join(root, "mysite")
	if r := runFeedgen(t, root, nil, "new", "site", site); r.code != 0 {
		t.Fatal(r.stderr)
	}
	if r := runFeedgen(t, site, nil, "build", "-q"); r.code != 0 {
		t.Fatal(r.stderr)
	}
	for _, target := range []string{"caddy", "apache", "cloudfront", "nginx"} {
		r := runFeedgen(t, site, nil, "rules", target, "-o", "deploy")
		if r.code != 1 {
			t.Fatalf("rules %s of a chunks build: exit %d, want 1\n%s", target, r.code, r.stderr)
		}
		_, after, ok := strings.Cut(r.stderr, "\nto serve it with "+target+", a file per page: in config.yaml, under pagination:, replace layout: chunks with\n")
		lines, _, ok2 := strings.Cut(after, "then run feedgen build and feedgen rules "+target+" again\n")
		if !ok || !ok2 || lines == "" {
			t.Fatalf("rules %s does not say what to put in config.yaml:\n%s", target, r.stderr)
		}
		if target != "nginx" {
			continue
		}
		name := filepath.Join(site, "config.yaml")
		cfg, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(cfg), "\n  layout: chunks\n") {
			t.Fatalf("config.yaml of a new site has no line layout: chunks under pagination:\n%s", cfg)
		}
		if err := os.WriteFile(name, []byte(strings.Replace(string(cfg), "  layout: chunks\n", lines, 1)), 0o644); err != nil {
			t.Fatal(err)
		}
		if r := runFeedgen(t, site, nil, "build", "-q"); r.code != 0 {
			t.Fatalf("build after the change: %s", r.stderr)
		}
		if r := runFeedgen(t, site, nil, "rules", target, "-o", "deploy"); r.code != 0 {
			t.Fatalf("rules %s after the change: exit %d\n%s", target, r.code, r.stderr)
		}
	}
}
