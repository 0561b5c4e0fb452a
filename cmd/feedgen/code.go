package main

import (
	"bytes"
	"debug/elf"
	"os"
)

// codeID names the code of this program for build.Options.Code: its
// version, or for a development build (every one of which calls itself
// "dev") "dev " and the Go build ID of its executable, which changes with
// any change to the code. It is "" when the executable carries no build ID
// that can be read (not ELF): builds then parse all content every time.
func codeID(version string) string {
	if version != "dev" {
		return version
	}
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	id := goBuildID(exe)
	if id == "" {
		return ""
	}
	return "dev " + id
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
