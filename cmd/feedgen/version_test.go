package main

import (
	"runtime/debug"
	"testing"
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
		if got := pseudoVersion(tt.v); got != tt.want {
			t.Errorf("pseudoVersion(%q) = %t, want %t", tt.v, got, tt.want)
		}
	}
}

// TestDescribeVersion checks what feedgen version prints for the build
// information of a release, a build from a clone (with and without
// changes), a go install of a commit, and a build with no commit
// recorded.
func TestDescribeVersion(t *testing.T) {
	vcs := func(rev, at, modified string) []debug.BuildSetting {
		return []debug.BuildSetting{{Key: "vcs", Value: "git"}, {Key: "vcs.revision", Value: rev}, {Key: "vcs.time", Value: at}, {Key: "vcs.modified", Value: modified}}
	}
	const rev = "f6bf690410ac261d85dc6e35fa3d420404d36b47"
	tests := []struct {
		name string
		v    string
		info *debug.BuildInfo
		want string
	}{
		{"release", "v1.2.3", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v1.2.3"}}, "v1.2.3 (go1.26.8)"},
		{"clone", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac"}, Settings: vcs(rev, "2026-11-26T18:51:48Z", "false")},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, go1.26.8)"},
		{"clone with changes", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac+dirty"}, Settings: vcs(rev, "2026-11-26T18:51:48Z", "true")},
			"dev (commit f6bf690410ac, 2026-11-26T18:51:48Z, modified, go1.26.8)"},
		{"go install of a commit", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "v0.0.0-20261126185148-f6bf690410ac"}},
			"dev (commit f6bf690410ac, go1.26.8)"},
		{"no commit recorded", "dev", &debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Version: "(devel)"}},
			"dev (go1.26.8; no commit recorded: make build, or go build -buildvcs=auto ./cmd/feedgen, in a clone records it)"},
		{"no build information", "dev", nil, "dev"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeVersion(tt.v, tt.info); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	buildVersion = "v9.9.9"
	defer func() { buildVersion = "" }()
	if got := describeVersion(version(), &debug.BuildInfo{GoVersion: "go1.26.8"}); got != "v9.9.9 (go1.26.8)" {
		t.Errorf("with -X main.buildVersion=v9.9.9: got %s, want v9.9.9 (go1.26.8)", got)
	}
}
