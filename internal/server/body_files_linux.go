//go:build linux

package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// filePages reports whether builds read from a folder are served from
// their files (else their pages are held in memory, as those of other
// builds are).
const filePages = true

// pageDir is a build's output folder, open: the pages are opened relative
// to it, so that a folder made anew (removed and built again) is not
// mixed with the one the build was loaded from. It is closed once
// unreachable; its build keeps it reachable.
type pageDir struct {
	fd       int
	maps     int64  // the most page files mapped at once (see mapLimit); 0: none
	dev, ino uint64 // the folder's identity

	rootOnce sync.Once
	root     *os.Root // for open without openat2
	rootErr  error
}

// openPageDir opens the folder dir, whose page files may be mapped while
// fewer than maps are.
func openPageDir(dir string, maps int64) (*pageDir, error) {
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("opening output folder: %w", &fs.PathError{Op: "open", Path: dir, Err: err})
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		closeFD(fd)
		return nil, fmt.Errorf("opening output folder: %w", &fs.PathError{Op: "stat", Path: dir, Err: err})
	}
	d := &pageDir{fd: fd, maps: maps, dev: st.Dev, ino: st.Ino}
	runtime.AddCleanup(d, closeFD, fd)
	return d, nil
}

// same reports whether d and e are the same folder.
func (d *pageDir) same(e *pageDir) bool {
	return d != nil && e != nil && d.dev == e.dev && d.ino == e.ino
}

// noOpenat2 is set once openat2 is found missing (Linux before 5.6):
// openat is used instead.
var noOpenat2 atomic.Bool

// open opens the file at path (NUL-terminated, relative to the folder)
// for reading, never outside the folder, without allocating, and without
// blocking: a named pipe put there opens at once (O_NONBLOCK), and is
// then refused by its type, as anything that is not a regular file is
// (see outfile).
func (d *pageDir) open(path string) (int, error) {
	p := unsafe.Pointer(unsafe.StringData(path))
	for {
		var fd uintptr
		var errno unix.Errno
		if !noOpenat2.Load() {
			how := unix.OpenHow{
				Flags:   unix.O_RDONLY | unix.O_CLOEXEC | outfile.Flags,
				Resolve: unix.RESOLVE_BENEATH | unix.RESOLVE_NO_MAGICLINKS,
			}
			fd, _, errno = unix.Syscall6(unix.SYS_OPENAT2, uintptr(d.fd), uintptr(p), uintptr(unsafe.Pointer(&how)), unsafe.Sizeof(how), 0, 0)
			if errno == unix.ENOSYS {
				noOpenat2.Store(true)
				continue
			}
		} else {
			return d.openInRoot(path)
		}
		runtime.KeepAlive(d)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, errno
	}
}

// openInRoot is open on a system without openat2: through an os.Root,
// which is slower (a system call per element of the path), never leaving
// the folder either.
func (d *pageDir) openInRoot(path string) (int, error) {
	d.rootOnce.Do(func() {
		d.root, d.rootErr = os.OpenRoot("/proc/self/fd/" + strconv.Itoa(d.fd))
		if d.root != nil {
			runtime.AddCleanup(d, func(r *os.Root) { r.Close() }, d.root)
		}
	})
	if d.rootErr != nil {
		return -1, d.rootErr
	}
	f, err := d.root.OpenFile(displayPath(path), os.O_RDONLY|outfile.Flags, 0)
	if err != nil {
		var errno unix.Errno
		if errors.As(err, &errno) {
			return -1, errno
		}
		return -1, unix.EXDEV // the path leads out of the folder, as openat2 says it
	}
	defer f.Close()
	sc, err := f.SyscallConn()
	if err != nil {
		return -1, err
	}
	fd, derr := -1, error(nil)
	if err := sc.Control(func(raw uintptr) { fd, derr = unix.FcntlInt(raw, unix.F_DUPFD_CLOEXEC, 0) }); err != nil {
		return -1, err
	}
	return fd, derr
}

// identify returns the identity of the open file fd, and whether it is a
// regular file.
func identify(fd int) (fileID, bool, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return fileID{}, false, err
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}, st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}

// typeOf returns the type of the open file fd, as fs.FileMode's bits.
func typeOf(fd int) fs.FileMode {
	var st unix.Stat_t
	if unix.Fstat(fd, &st) != nil {
		return fs.ModeIrregular
	}
	return outfile.TypeOf(st.Mode)
}

// openChecked opens the file of pf: errStale when the file at its path
// is not the one recorded.
func (d *pageDir) openChecked(pf *pageFile) (int, error) {
	fd, err := d.open(pf.path)
	if err != nil {
		if gone(err) {
			return -1, errStale
		}
		return -1, err
	}
	if id, _, err := identify(fd); err != nil || id != pf.id {
		closeFD(fd)
		if err != nil {
			return -1, err
		}
		return -1, errStale
	}
	return fd, nil
}

// gone reports whether an error of open says that the path does not lead
// to a file (any more): what a build's rename or delete leaves.
func gone(err error) bool {
	return errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.EXDEV)
}

// outOfFiles reports whether an error of open says that the process, or
// the system, has no descriptor left.
func outOfFiles(err error) bool {
	return errors.Is(err, unix.EMFILE) || errors.Is(err, unix.ENFILE)
}

// mapFile maps the n bytes of the open file fd, read-only and shared.
func mapFile(fd, n int) ([]byte, error) {
	return unix.Mmap(fd, 0, n, unix.PROT_READ, unix.MAP_SHARED)
}

// unmapFile unmaps what mapFile mapped.
func unmapFile(mem []byte) { unix.Munmap(mem) }

// maxMapCount is how many mappings the kernel allows a process
// (vm.max_map_count), or its usual default when it cannot tell.
func maxMapCount() int {
	data, err := os.ReadFile("/proc/sys/vm/max_map_count")
	if err != nil {
		return 65530
	}
	n, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || n <= 0 {
		return 65530
	}
	return n
}

// closeFD closes a descriptor.
func closeFD(fd int) { unix.Close(fd) }

// linked reports whether the open file fd still has a name.
func linked(fd int) bool {
	var st unix.Stat_t
	return unix.Fstat(fd, &st) != nil || st.Nlink > 0
}

// fdReader reads an open file from its current position.
type fdReader int

func (r fdReader) Read(p []byte) (int, error) {
	for {
		n, err := unix.Read(int(r), p)
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return 0, err
		case n == 0 && len(p) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// readAt reads len(p) bytes of fd at off (pread): p is filled unless the
// file is shorter.
func readAt(fd int, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		k, err := unix.Pread(fd, p[n:], off+int64(n))
		switch {
		case err == unix.EINTR:
			continue
		case err != nil:
			return n, err
		case k == 0:
			return n, io.ErrUnexpectedEOF
		}
		n += k
	}
	return n, nil
}

// nofileLimit returns the process's limit of open descriptors (the soft
// RLIMIT_NOFILE), or 0 when it cannot tell.
func nofileLimit() int {
	var rl unix.Rlimit
	if err := unix.Getrlimit(unix.RLIMIT_NOFILE, &rl); err != nil {
		return 0
	}
	if rl.Cur > 1<<30 {
		return 1 << 30
	}
	return int(rl.Cur)
}

// displayPath is a pageFile path without its NUL.
func displayPath(p string) string { return strings.TrimSuffix(p, "\x00") }

// stat returns the identity of the file at path (relative to the folder,
// without NUL), or a zero identity when there is none. It does not follow
// a symbolic link; the identity only ever matches that of a file the
// build recorded, opened through openat2 or an os.Root.
func (d *pageDir) stat(path string) fileID {
	var st unix.Stat_t
	err := unix.Fstatat(d.fd, path, &st, unix.AT_SYMLINK_NOFOLLOW)
	runtime.KeepAlive(d)
	if err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return fileID{}
	}
	return fileID{dev: st.Dev, ino: st.Ino, size: st.Size, mtime: st.Mtim.Nano()}
}

// readPageBuf is the most a read of a page file for its check keeps of
// its buffer, to be reused for the next file.
const readPageBuf = 1 << 20

// readPage reads the page file f in the folder and checks it against the
// size and SHA-256 the manifest records (a *manifest.Mismatch when it
// differs), as manifest.ReadPage does, and returns the record of the file
// that was read, mapped (see pageFile) while fewer than d.maps files are;
// else the bytes read (in buf when it has room).
func (d *pageDir) readPage(f manifest.File, buf []byte) (*pageFile, []byte, error) {
	path := f.Path + "\x00"
	fd, err := d.open(path)
	if err != nil {
		if gone(err) {
			return nil, nil, &manifest.Mismatch{Path: f.Path, Reason: "missing"}
		}
		return nil, nil, fmt.Errorf("reading page: %w", &fs.PathError{Op: "open", Path: f.Path, Err: err})
	}
	defer closeFD(fd)
	id, regular, err := identify(fd)
	switch {
	case err != nil:
		return nil, nil, fmt.Errorf("reading page: %w", &fs.PathError{Op: "stat", Path: f.Path, Err: err})
	case !regular:
		return nil, nil, manifest.NotRegular(f.Path, typeOf(fd))
	case id.size < f.Size:
		return nil, nil, &manifest.Mismatch{Path: f.Path, Reason: "shorter than the manifest says"}
	case id.size > f.Size:
		return nil, nil, &manifest.Mismatch{Path: f.Path, Reason: "longer than the manifest says"}
	}
	pf := &pageFile{id: id, path: path, sum: f.Sum()}
	if f.Size > 0 && reserveMapping(d.maps) {
		if mem, err := mapFile(fd, int(f.Size)); err != nil {
			liveMappings.Add(-1)
		} else {
			sum, faulted := sumMapped(mem)
			switch {
			case faulted:
				unmap(mem)
				return nil, nil, &manifest.Mismatch{Path: f.Path, Reason: "shorter than the manifest says"}
			case sum != pf.sum:
				unmap(mem)
				return nil, nil, &manifest.Mismatch{Path: f.Path, Reason: "its SHA-256 differs from the manifest"}
			}
			pf.setMapped(mem)
			return pf, nil, nil
		}
	}
	if int64(cap(buf)) < f.Size+1 && f.Size < readPageBuf {
		buf = make([]byte, 0, min(2*(f.Size+1), readPageBuf))
	}
	data, err := manifest.ReadChecked(fdReader(fd), f, buf)
	if err != nil {
		return nil, nil, err
	}
	return pf, data, nil
}

// sumMapped returns the SHA-256 of a mapped file; faulted when the file
// is shorter than its mapping (it was cut short in place since it was
// mapped, which reading past its end tells by a fault, made a panic).
func sumMapped(mem []byte) (sum [sha256.Size]byte, faulted bool) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if recover() != nil {
			faulted = true
		}
	}()
	return sha256.Sum256(mem), false
}
