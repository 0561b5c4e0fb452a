package main

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/buildinfo"
)

func TestPseudoVersion(t *testing.T) {
	tests := []struct {
		v    string
		want bool
	}{
		{"v0.0.0-20261123170000-0123456789ab", true},
		{"v0.0.0-20261123170000-0123456789ab+dirty", true},
		{"v1.2.4-0.20261123170000-0123456789ab", true},
		{"v1.2.4-pre.0.20261123170000-0123456789ab", true},
		{"v1.2.3", false},
		{"v1.2.3-rc.1", false},
		{"v1.2.3+incompatible", false},
		{"v0.0.0-2026112317000-0123456789ab", false},
		{"v0.0.0-20261123170000-0123456789AB", false},
		{"", false},
	}
	for _, tt := range tests {
		if got := buildinfo.PseudoVersion(tt.v); got != tt.want {
			t.Errorf("buildinfo.PseudoVersion(%q) = %t, want %t", tt.v, got, tt.want)
		}
	}
}

// TestDescribeVersion checks what feedgen version prints for the build
// information of a release, a build from a clone (with and without
// changes), a go install of a commit, make build in a git worktree (where
// go stamps no commit: the Makefile passes it), and a build with no
// commit recorded.
func TestDescribeVersion(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "f6bf690410ac261d85dc6e35fa3d420404d36b47"
	tests := []struct {
		name string
		v    string
		vcs  string // main.buildVCS
		info *debug.BuildInfo
		want string
	}{
		{"release", "v1.2.3", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 (go1.26.8)"},
		{"clone", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac"}, Settings: vcs(rev, "2026-11-26T18:51:48Z", "false")},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, go1.26.8)"},
		{"clone with changes", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac+dirty"}, Settings: vcs(rev, "2026-11-26T18:51:48Z", "true")},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, modified, go1.26.8)"},
		{"go install of a commit", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac"}},
			"dev (commit f6bf690410ac, go1.26.8)"},
		{"make build in a git worktree", "dev", rev + " 2026-11-26T18:51:48Z modified", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, modified, go1.26.8)"},
		{"make build in a git worktree, no changes", "dev", rev + " 2026-11-26T18:51:48Z", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, go1.26.8)"},
		{"stamped and passed", "dev", "0123456789abcdef 2026-01-01T00:00:00Z", &debug.BuildInfo{GoVersion: "go1.26.8", Settings: vcs(rev, "2026-11-26T18:51:48Z", "false")},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, go1.26.8)"},
		{"no commit recorded", "dev", "", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev (go1.26.8; no commit recorded: make build records it, as go build -buildvcs=auto ./cmd/feedgen does in a clone (not in a git worktree))"},
		{"no build information", "dev", "", nil, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := buildinfo.Describe(tt.v, tt.vcs, tt.info); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	buildVersion = "v9.9.9"
	defer func() { buildVersion = "" }()
	if got := buildinfo.Describe(version(), "", &debug.BuildInfo{GoVersion: "go1.26.8"}); got != "v9.9.9 (go1.26.8)" {
		t.Errorf("with -X main.buildVersion=v9.9.9: got %s, want v9.9.9 (go1.26.8)", got)
	}
}

// TestMakeBuildRecordsCommit checks the command make build runs: it
// passes the commit git names (main.buildVCS: the revision, its time in
// UTC, and modified when the tree has changes), which feedgen version
// names where go stamped no commit (a linked git worktree).
func TestMakeBuildRecordsCommit(t *testing.T) {
	for _, p := range []string{"make", "git"} {
		if _, err := exec.LookPath(p); err != nil {
			t.Skipf("no %s here", p)
		}
	}
	repo := filepath.Join("..", "..")
	head, err := exec.Command("git", "-C", repo, "rev-parse", "HEAD").Output()
	if err != nil {
		t.Skipf("not a git checkout: %v", err)
	}
	cmd := exec.CommandContext(t.Context(), "make", "-n", "build")
	cmd.Dir = repo
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("make -n build: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`(?m)^go build .*-ldflags "-X 'main\.buildVCS=` + strings.TrimSpace(string(head)) + ` \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ( modified)?'" .*\./cmd/feedgen$`)
	if !want.Match(out) {
		t.Errorf("make -n build printed\n%s\nwant a line matching %s", out, want)
	}
}
