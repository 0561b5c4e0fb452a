//go:build linux

package content

import (
	"io/fs"
	"path"
	"syscall"

	"golang.org/x/sys/unix"
)

// readDirFile reads a file with four system calls (open, fstat, read,
// close) where os.ReadFile makes twice as many: it registers the file with
// the poller, and reads once more to see the end.
func readDirFile(name string, buf []byte) ([]byte, stamp, error) {
	fd, err := open(name)
	if err != nil {
		return nil, stamp{}, &fs.PathError{Op: "open", Path: name, Err: err}
	}
	defer syscall.Close(fd)
	var st syscall.Stat_t
	if err := fstat(fd, &st); err != nil {
		return nil, stamp{}, &fs.PathError{Op: "stat", Path: name, Err: err}
	}
	if st.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		return nil, stamp{}, &fs.PathError{Op: "read", Path: name, Err: syscall.EISDIR}
	}
	// One byte more than the size, so that a short read says the end is
	// reached: a file that grew meanwhile is read on to its end.
	b := buf[:0]
	if int64(cap(b)) < st.Size+1 {
		b = make([]byte, 0, st.Size+1+st.Size/4)
	}
	for {
		n, err := syscall.Read(fd, b[len(b):cap(b)])
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return nil, stamp{}, &fs.PathError{Op: "read", Path: name, Err: err}
		}
		if n == 0 {
			break
		}
		b = b[:len(b)+n]
		if len(b) < cap(b) {
			break
		}
		b = append(b, 0)[:len(b)]
	}
	mod := knownMod(st.Mtim.Nano())
	if int64(len(b)) != st.Size {
		mod = 0 // changed while read: unknown, read again next time
	}
	return b, stamp{int64(len(b)), mod, idOfStat(&st)}, nil
}

// fileID is a file's device, inode and change time.
type fileID struct {
	dev, ino uint64
	ctime    int64 // nanoseconds
}

// idOf returns the identity of the file info describes.
func idOf(info fs.FileInfo) fileID {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return idOfStat(st)
	}
	return fileID{}
}

func idOfStat(st *syscall.Stat_t) fileID {
	return fileID{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim.Nano()}
}

// parts returns the parts of id a cache of a build hashes (see stamp.hash).
func (id fileID) parts() (dev, ino uint64, ctime int64) { return id.dev, id.ino, id.ctime }

// statDirFile returns the stamp of the file name on disk, following
// links, with one system call.
func statDirFile(name string) (stamp, error) {
	var st syscall.Stat_t
	for {
		err := syscall.Stat(name, &st)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			return stamp{}, &fs.PathError{Op: "stat", Path: name, Err: err}
		}
		break
	}
	return stamp{st.Size, knownMod(st.Mtim.Nano()), idOfStat(&st)}, nil
}

func open(name string) (int, error) {
	for {
		fd, err := syscall.Open(name, syscall.O_RDONLY|syscall.O_CLOEXEC, 0)
		if err != syscall.EINTR {
			return fd, err
		}
	}
}

func fstat(fd int, st *syscall.Stat_t) error {
	for {
		err := syscall.Fstat(fd, st)
		if err != syscall.EINTR {
			return err
		}
	}
}

// A statter stats the files of a content folder on disk (DirFS) through
// an open descriptor of each file's folder: the system then looks up the
// file's name alone, not every folder of its path (a million stats are a
// second of system time). Not safe for concurrent use; close it when
// done.
type statter struct {
	dirs map[string]int // folder of a name (with its slash) → descriptor, -1 when it could not be opened
}

// stat returns the stamp of the file name in fsys, following links.
func (s *statter) stat(fsys fs.FS, name string) (stamp, error) {
	d, ok := fsys.(dirFS)
	if !ok || !fs.ValidPath(name) {
		return statFile(fsys, name)
	}
	dir, base := path.Split(name)
	fd, ok := s.dirs[dir]
	if !ok {
		var err error
		for {
			fd, err = unix.Open(d.dir+"/"+dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
			if err != unix.EINTR {
				break
			}
		}
		if err != nil {
			fd = -1 // stat'ed by path, which says why
		}
		if s.dirs == nil {
			s.dirs = map[string]int{}
		}
		s.dirs[dir] = fd
	}
	if fd < 0 {
		return statDirFile(d.dir + "/" + name)
	}
	var st unix.Stat_t
	for {
		err := unix.Fstatat(fd, base, &st, 0)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return stamp{}, &fs.PathError{Op: "stat", Path: d.dir + "/" + name, Err: err}
		}
		break
	}
	id := fileID{dev: uint64(st.Dev), ino: st.Ino, ctime: st.Ctim.Nano()}
	return stamp{st.Size, knownMod(st.Mtim.Nano()), id}, nil
}

// close closes the descriptors of s.
func (s *statter) close() {
	for _, fd := range s.dirs {
		if fd >= 0 {
			unix.Close(fd)
		}
	}
	s.dirs = nil
}
