// Package outfile opens the files of an output folder (pages, chunks,
// indexes, manifest.json, a build's own records) for reading, refusing
// any that is not a regular file. A named pipe put in place of a page
// would otherwise block the open until a writer comes, which never does,
// and a command blocked in open does not stop on SIGINT or SIGTERM; a
// device would be read without end. The file is opened without blocking
// (O_NONBLOCK on Unix), then its type is read from the open descriptor
// (fstat), so there is no race between a check and the open: what is
// read is the file that was checked.
//
// Every reader of an output folder goes through it: the build, the
// server, bundle, publish, rules, through Open and ReadFile, or through
// the fs.FS of DirFS and RootFS, whose Open refuses the same files.
package outfile

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
)

// CheckEvery is how many files or folders of an output folder a loop
// that does little for each handles between two checks of its context:
// one for every reader of a folder (build, server, publish), so that each
// stops as soon after SIGINT.
const CheckEvery = 1024

// ErrNotRegular is what a NotRegularError is (errors.Is).
var ErrNotRegular = errors.New("not a regular file")

// A NotRegularError is a file of an output folder that is not a regular
// file. Its message says what it is and what to do.
type NotRegularError struct {
	Path string      // as the folder was named, for messages
	Mode fs.FileMode // its type
}

func (e *NotRegularError) Error() string {
	return fmt.Sprintf("%s is not a regular file (%s): remove it and run feedgen build --clean", e.Path, Kind(e.Mode))
}

func (e *NotRegularError) Is(target error) bool { return target == ErrNotRegular }

// Kind names the type of a file of mode m, for messages: "a named pipe",
// "a folder".
func Kind(m fs.FileMode) string {
	switch t := m.Type(); {
	case t&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case t&fs.ModeSocket != 0:
		return "a socket"
	case t&fs.ModeCharDevice != 0:
		return "a character device"
	case t&fs.ModeDevice != 0:
		return "a device"
	case t&fs.ModeDir != 0:
		return "a folder"
	case t&fs.ModeSymlink != 0:
		return "a symbolic link"
	case t == 0:
		return "a regular file"
	}
	return "a file of type " + m.Type().String()
}

// Check returns a *NotRegularError, for the file name, when mode is not
// that of a regular file: for a reader that opened the file itself (with
// Flags) and read its type from the descriptor.
func Check(name string, mode fs.FileMode) error {
	if mode.IsRegular() {
		return nil
	}
	return &NotRegularError{Path: name, Mode: mode}
}

// Open opens the file name for reading; a file that is not a regular
// file is closed and refused (a *NotRegularError).
func Open(name string) (*os.File, error) {
	return checked(name, func() (*os.File, error) { return os.OpenFile(name, os.O_RDONLY|Flags, 0) }, false)
}

// ReadFile reads the file name, as os.ReadFile does, refusing a file
// that is not a regular file (a *NotRegularError).
func ReadFile(name string) ([]byte, error) {
	f, err := Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f)
}

// checked opens a file with open and reads its type from the descriptor:
// a regular file, or a folder when dirs, is returned open; anything else
// is closed and refused, as name.
func checked(name string, open func() (*os.File, error), dirs bool) (*os.File, error) {
	f, err := open()
	if err != nil {
		return nil, err
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if dirs && info.IsDir() {
		return f, nil
	}
	if err := Check(name, info.Mode()); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// readAll reads f to its end, sized by its stat.
func readAll(f *os.File) ([]byte, error) {
	size := 512
	if info, err := f.Stat(); err == nil && info.Size() > 0 && info.Size() < 1<<30 {
		size = int(info.Size()) + 1
	}
	data := make([]byte, 0, size)
	for {
		n, err := f.Read(data[len(data):cap(data)])
		data = data[:len(data)+n]
		if err == io.EOF {
			return data, nil
		}
		if err != nil {
			return data, err
		}
		if len(data) == cap(data) {
			data = append(data, 0)[:len(data)]
		}
	}
}

// DirFS returns the files under the folder dir as an fs.FS, as os.DirFS
// does, whose Open refuses what is not a regular file or a folder (a
// *NotRegularError naming the file under dir).
func DirFS(dir string) fs.FS {
	return &regularFS{
		dir:   dir,
		inner: os.DirFS(dir),
		open: func(name string) (*os.File, error) {
			return os.OpenFile(filepath.Join(dir, filepath.FromSlash(name)), os.O_RDONLY|Flags, 0)
		},
	}
}

// RootFS returns the files of root as an fs.FS, as root.FS does, whose
// Open refuses what is not a regular file or a folder. dir names the
// folder in messages.
func RootFS(root *os.Root, dir string) fs.FS {
	return &regularFS{
		dir:   dir,
		inner: root.FS(),
		open: func(name string) (*os.File, error) {
			return root.OpenFile(filepath.FromSlash(name), os.O_RDONLY|Flags, 0)
		},
	}
}

// regularFS is the fs.FS of DirFS and RootFS.
type regularFS struct {
	dir   string
	inner fs.FS // for Stat, ReadDir
	open  func(name string) (*os.File, error)
}

func (r *regularFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	f, err := checked(filepath.Join(r.dir, filepath.FromSlash(name)), func() (*os.File, error) { return r.open(name) }, true)
	if err != nil {
		return nil, err // a nil *os.File is not a nil fs.File
	}
	return f, nil
}

func (r *regularFS) ReadFile(name string) ([]byte, error) {
	f, err := r.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readAll(f.(*os.File))
}

func (r *regularFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(r.inner, name) }

func (r *regularFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(r.inner, name) }
