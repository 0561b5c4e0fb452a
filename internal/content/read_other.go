//go:build !linux

package content

import (
	"io/fs"
	"os"
)

// readDirFile reads a file and its stamp.
func readDirFile(name string, buf []byte) ([]byte, stamp, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, stamp{}, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, stamp{}, err
	}
	data := buf[:0]
	if int64(cap(data)) < info.Size()+1 {
		data = make([]byte, 0, info.Size()+1)
	}
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err != nil || n == 0 {
			break
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
	mod := modTime(info.ModTime())
	if int64(len(data)) != info.Size() {
		mod = 0
	}
	return data, stamp{int64(len(data)), mod, fileID{}}, nil
}

// fileID is empty here: size and modification time tell versions apart.
type fileID struct{}

func idOf(fs.FileInfo) fileID { return fileID{} }

// parts returns zeros: there is nothing more to hash.
func (fileID) parts() (dev, ino uint64, ctime int64) { return 0, 0, 0 }

// statDirFile returns the stamp of the file name on disk, following links.
func statDirFile(name string) (stamp, error) {
	info, err := os.Stat(name)
	if err != nil {
		return stamp{}, err
	}
	return stamp{info.Size(), modTime(info.ModTime()), fileID{}}, nil
}

// A statter stats the files of a content folder.
type statter struct{}

// stat returns the stamp of the file name in fsys, following links.
func (statter) stat(fsys fs.FS, name string) (stamp, error) { return statFile(fsys, name) }

func (statter) close() {}
