package main

import (
	"bytes"
	"debug/elf"
	"os"
	"strings"
)

// codeID names the code of this program for build.Options.Code: the Go
// build ID of its executable, which changes with any change to the code or
// the toolchain that built it; where none can be read (not ELF), a release
// version. A development build's version ("dev", or a VCS pseudo-version
// that stays the same through uncommitted edits, "+dirty") names no code:
// "", and builds then parse all content every time.
func codeID(version string) string {
	id := ""
	if exe, err := os.Executable(); err == nil {
		id = goBuildID(exe)
	}
	return code(id, version)
}

// code is codeID, given the build ID (or "") and the version.
func code(buildID, version string) string {
	switch {
	case buildID != "":
		return "go build " + buildID
	case version == "dev", strings.Contains(version, "+dirty"):
		return ""
	}
	return version
}

// goBuildID returns the Go build ID of the ELF executable at path: the
// note "Go" of type 4 that the Go linker writes in section
// .note.go.buildid.
func goBuildID(path string) string {
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
