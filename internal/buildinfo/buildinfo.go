// Package buildinfo says what this program is: the version line feedgen
// version prints, from the build information the Go toolchain stamps into
// the binary, and the ID of its code that a build records (so that a new
// feedgen parses all content again).
package buildinfo

import (
	"bytes"
	"debug/elf"
	"os"
	"runtime/debug"
	"strings"
)

// Line is what feedgen version and --version print after "feedgen"
// for the version v and the commit vcs given at link time, from the build information the Go toolchain stamped into the
// binary (runtime/debug.ReadBuildInfo), or buildVCS.
func Line(v, vcs string) string {
	info, _ := debug.ReadBuildInfo()
	return Describe(v, vcs, info)
}

// Describe is Line for the version v (a release, or "dev"),
// the commit vcs given at link time (buildVCS; "" for none) and the build
// information info (nil when there is none): the release, or for a build
// from source "dev" and the commit (from the VCS stamp, a pseudo-version's
// or vcs), its time and whether the tree had changes; then the Go
// version: "v1.2.3 (go1.26.8)", "dev (commit 0123456789ab,
// 2026-11-23T17:00:00Z, modified, go1.26.8)". A build with no commit
// recorded (go run, go build in a git worktree, or -buildvcs=false, which
// GOFLAGS may set) says how to get one.
func Describe(v, vcs string, info *debug.BuildInfo) string {
	if info == nil {
		return v
	}
	var details []string
	note := ""
	if v == "dev" {
		var rev, at string
		modified := false
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				rev = s.Value[:min(12, len(s.Value))]
			case "vcs.time":
				at = s.Value
			case "vcs.modified":
				modified = s.Value == "true"
			}
		}
		if rev == "" && PseudoVersion(info.Main.Version) {
			// go install of a commit: the module's pseudo-version names it.
			base, dirty := strings.CutSuffix(info.Main.Version, "+dirty")
			rev, modified = base[len(base)-12:], dirty
		}
		if f := strings.Fields(vcs); rev == "" && len(f) > 0 {
			// make build in a git worktree: the commit it passed.
			rev = f[0][:min(12, len(f[0]))]
			if len(f) > 1 {
				at = f[1]
			}
			modified = len(f) > 2 && f[2] == "modified"
		}
		switch {
		case rev != "":
			details = append(details, "commit "+rev)
			if at != "" {
				details = append(details, at)
			}
			if modified {
				details = append(details, "modified")
			}
		default:
			note = "; no commit recorded: make build records it, as go build -buildvcs=auto ./cmd/feedgen does in a clone (not in a git worktree)"
		}
	}
	if info.GoVersion != "" {
		details = append(details, info.GoVersion)
	}
	if len(details) == 0 {
		return v
	}
	return v + " (" + strings.Join(details, ", ") + note + ")"
}

// Version is the version feedgen was built as: set, when set at link
// time, or the module's version, or "dev".
func Version(set string) string {
	if set != "" {
		return set
	}
	info, ok := debug.ReadBuildInfo()
	if !ok || info.Main.Version == "" || info.Main.Version == "(devel)" || PseudoVersion(info.Main.Version) {
		return "dev"
	}
	return info.Main.Version
}

// PseudoVersion reports whether v is a Go pseudo-version, which the go
// command stamps on a build from a source tree (v0.0.0-20261123170000-0123456789ab,
// maybe +dirty): not a release.
func PseudoVersion(v string) bool {
	v, _, _ = strings.Cut(v, "+")
	i := strings.LastIndexByte(v, '-')
	if i < 15 || len(v)-i-1 != 12 {
		return false
	}
	stamp := v[i-14 : i]
	if v[i-15] != '-' && v[i-15] != '.' {
		return false
	}
	return strings.Trim(stamp, "0123456789") == "" && strings.Trim(v[i+1:], "0123456789abcdef") == ""
}

// CodeID names the code of this program for build.Options.Code: the Go
// build ID of its executable, which changes with any change to the code or
// the toolchain that built it; where none can be read (not ELF), a release
// version. A development build's version ("dev", or a VCS pseudo-version
// that stays the same through uncommitted edits, "+dirty") names no code:
// "", and builds then parse all content every time.
func CodeID(version string) string {
	id := ""
	if exe, err := os.Executable(); err == nil {
		id = GoBuildID(exe)
	}
	return Code(id, version)
}

// Code is CodeID, given the build ID (or "") and the version.
func Code(buildID, version string) string {
	switch {
	case buildID != "":
		return "go build " + buildID
	case version == "dev", strings.Contains(version, "+dirty"):
		return ""
	}
	return version
}

// GoBuildID returns the Go build ID of the ELF executable at path: the
// note "Go" of type 4 that the Go linker writes in section
// .note.go.buildid.
func GoBuildID(path string) string {
	f, err := elf.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	s := f.Section(".note.go.buildid")
	if s == nil {
		return ""
	}
	data, err := s.Data()
	if err != nil || len(data) < 16 {
		return ""
	}
	order := f.ByteOrder
	nameSize, descSize, typ := order.Uint32(data), order.Uint32(data[4:]), order.Uint32(data[8:])
	if nameSize != 4 || typ != 4 || !bytes.Equal(data[12:16], []byte("Go\x00\x00")) || uint64(descSize) > uint64(len(data)-16) {
		return ""
	}
	return string(data[16 : 16+descSize])
}
