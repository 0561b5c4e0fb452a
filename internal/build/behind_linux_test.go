//go:build linux

package build

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// cached returns how many of the pages of file name are in the page cache.
func cached(t *testing.T, name string) int {
	t.Helper()
	f, err := os.Open(name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	mem, err := unix.Mmap(int(f.Fd()), 0, int(st.Size()), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(mem)
	vec := make([]byte, (len(mem)+os.Getpagesize()-1)/os.Getpagesize())
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Fatal(errno)
	}
	n := 0
	for _, v := range vec {
		n += int(v & 1)
	}
	return n
}

// TestWriteBehind checks that a writeBehind leaves alone the files before
// its first after bytes, holds at most its number of files, drops those it
// lets go from the page cache, and closes every descriptor it took.
func TestWriteBehind(t *testing.T) {
	dir := t.TempDir()
	const size, files = 64 << 10, 10
	data := []byte(strings.Repeat("x", size))
	dropsSynced(t, dir, data)
	fds := openFDs(t)
	if fds < 0 {
		t.Skip("cannot count descriptors")
	}
	w := newWriteBehind(2 * size) // the first two files are not taken
	w.files = 3
	for i := range files {
		name := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		if !createNew(name, data, w) {
			t.Fatalf("createNew %s: false", name)
		}
		w.mu.Lock()
		held := len(w.held)
		w.mu.Unlock()
		if want := min(max(i-1, 0), w.files); held != want {
			t.Errorf("after file %d: got %d files held, want %d", i, held, want)
		}
		if got, want := openFDs(t)-fds, held; got != want {
			t.Errorf("after file %d: got %d more descriptors open, want %d", i, got, want)
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	if got := openFDs(t); got != fds {
		t.Errorf("after close: got %d descriptors open, want %d", got, fds)
	}
	for i := range files {
		name := filepath.Join(dir, fmt.Sprintf("%d.json", i))
		got, err := os.ReadFile(name)
		if err != nil || string(got) != string(data) {
			t.Fatalf("%s: got %d bytes (%v), want %d", name, len(got), err, size)
		}
	}
	// Reading them back cached them all again: write a fresh set and look
	// before reading.
	w = newWriteBehind(0)
	w.files = 1
	for i := range 3 {
		if !createNew(filepath.Join(dir, fmt.Sprintf("new%d.json", i)), data, w) {
			t.Fatal("createNew: false")
		}
	}
	if err := w.finish(); err != nil {
		t.Fatal(err)
	}
	for i, want := range []bool{false, false, true} { // the last was held
		name := filepath.Join(dir, fmt.Sprintf("new%d.json", i))
		if got := cached(t, name) > 0; got != want {
			t.Errorf("%s: got in the page cache %v, want %v", name, got, want)
		}
	}
}

// dropsSynced skips the test unless the file system of dir drops a file
// that is on disk from the page cache when asked (not a tmpfs, nor a
// network file system that caches elsewhere).
func dropsSynced(t *testing.T, dir string, data []byte) {
	t.Helper()
	name := filepath.Join(dir, "probe")
	f, err := os.Create(name)
	if err != nil {
		t.Fatal(err)
	}
	defer os.Remove(name)
	defer f.Close()
	if _, err := f.Write(data); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Skipf("cannot sync a file here: %v", err)
	}
	unix.Fadvise(int(f.Fd()), 0, 0, unix.FADV_DONTNEED)
	if cached(t, name) > 0 {
		t.Skip("this file system keeps a synced file in the page cache when asked to drop it")
	}
}

// TestWriteBehindFails checks that a file the disk refused fails the
// build at the next page and at finish, and is removed so that the next
// build writes it again.
func TestWriteBehindFails(t *testing.T) {
	dir := t.TempDir()
	w := newWriteBehind(0)
	names := make([]string, 3)
	for i := range names {
		names[i] = filepath.Join(dir, fmt.Sprintf("%d.json", i))
		if !createNew(names[i], []byte("{}"), w) {
			t.Fatal("createNew: false")
		}
	}
	if err := w.error(); err != nil {
		t.Fatalf("before a failure: got %v", err)
	}
	w.fail(names[1], unix.EIO)
	if err := w.error(); !errors.Is(err, unix.EIO) || !strings.Contains(err.Error(), names[1]) {
		t.Errorf("error(): got %v, want EIO naming %s", err, names[1])
	}
	if err := w.finish(); !errors.Is(err, unix.EIO) {
		t.Errorf("finish(): got %v, want EIO", err)
	}
	for i, want := range []bool{true, false, true} {
		if _, err := os.Stat(names[i]); (err == nil) != want {
			t.Errorf("%s: got exists %v, want %v", names[i], err == nil, want)
		}
	}
}

// TestWriteBehindNil checks that a nil writeBehind takes nothing.
func TestWriteBehindNil(t *testing.T) {
	var w *writeBehind
	if w.take(-1, 1, "x") {
		t.Error("nil writeBehind took a file")
	}
	if err := w.error(); err != nil {
		t.Error(err)
	}
	if err := w.finish(); err != nil {
		t.Error(err)
	}
	w.close()
}
