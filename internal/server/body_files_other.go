//go:build !linux

package server

import (
	"errors"
	"strings"

	"github.com/feedgen/feedgen/internal/manifest"
)

// filePages reports whether builds read from a folder are served from
// their files: on Linux only; elsewhere their pages are held in memory,
// as those of other builds are.
const filePages = false

// pageDir is never made on this system.
type pageDir struct{ maps int64 }

func (d *pageDir) same(*pageDir) bool { return false }

var errNoFiles = errors.New("pages are not sent from their files on this system")

func openPageDir(string, int64) (*pageDir, error)     { return nil, errNoFiles }
func (d *pageDir) openChecked(*pageFile) (int, error) { return -1, errNoFiles }
func (d *pageDir) stat(string) fileID                 { return fileID{} }
func closeFD(int)                                     {}
func mapFile(int, int) ([]byte, error)                { return nil, errNoFiles }
func unmapFile([]byte)                                {}
func maxMapCount() int                                { return 0 }
func linked(int) bool                                 { return true }
func outOfFiles(error) bool                           { return false }
func nofileLimit() int                                { return 0 }
func readAt(int, []byte, int64) (int, error)          { return 0, errNoFiles }
func displayPath(p string) string                     { return strings.TrimSuffix(p, "\x00") }
func (d *pageDir) readPage(manifest.File, []byte) (*pageFile, []byte, error) {
	return nil, nil, errNoFiles
}
