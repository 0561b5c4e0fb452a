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
