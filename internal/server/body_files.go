package server

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pages sent from their files.
//
// A build served from its output folder keeps no page bytes of its own:
// pages are replaced by rename and never changed in place, so the inode a
// page file had when the build was loaded, read and checked against the
// manifest, holds that build's bytes for as long as it exists. The build
// records the identity of each page file (pageFile), and an answer sends
// the body from that inode, in one of two ways:
//
//   - mapped: loading the build maps each page file (read-only, shared:
//     the mapping is the kernel's page cache, not memory of the server's
//     own) and checks its SHA-256 there, and every answer sends head and
//     body from the mapping, as from memory (see socket.Sender.SendBytes). The
//     mapping belongs to the record, shared by the builds that have the
//     file, and is unmapped once no build has it. Mappings are bounded by
//     a share of the kernel's limit on them (mapLimit); a page not mapped
//     at load (past that bound then) is mapped by the first answer with
//     it, when the bound allows;
//   - from a descriptor: past that bound, the body is sent with
//     sendfile(2) from an open descriptor, which a bounded cache
//     (fileCache) keeps, shared by all builds.
//
// After the load, a mapping or a descriptor is made from a file opened
// by the page's path and compared with the record: another inode there
// means that a newer build has replaced the page, and the request waits
// for the server to switch to that build (see Server.openBody) rather
// than send the newer bytes under the old build's headers. A mapping or
// an open descriptor keeps its inode, and so its bytes, after the file is
// replaced or deleted: the answers from it complete, and a mapped page
// goes on being served from the build's own bytes until the switch.

// fileID identifies a page file: the inode, and its size and time of
// last modification (so that an inode number reused by a later file is
// not taken for the file recorded).
type fileID struct {
	dev, ino    uint64
	size, mtime int64
}

// pageFile is a page file as recorded when its build was loaded: its
// identity, its path in the output folder, and the SHA-256 of its bytes;
// and its mapping, made by the load or by the first answer with it.
// Builds share the records of the files they have in common.
type pageFile struct {
	id   fileID
	path string // slash-separated, relative to the output folder, ending in NUL
	sum  [sha256.Size]byte
	mem  atomic.Pointer[[]byte] // the file mapped; nil past mapLimit
}

// mapped returns the page's bytes, mapped, or nil when the file is not
// mapped. They stay mapped while pf is reachable: the caller keeps the
// build that has pf alive until they are written.
func (pf *pageFile) mapped() []byte {
	if m := pf.mem.Load(); m != nil {
		return *m
	}
	return nil
}

// mapFrom maps the file of pf from fd, a descriptor of it, unless it is
// mapped already or as many files as limit are (see mapLimit); it
// returns the mapping or nil.
func (pf *pageFile) mapFrom(fd int, limit int64) []byte {
	if m := pf.mapped(); m != nil {
		return m
	}
	if pf.id.size == 0 || !reserveMapping(limit) {
		return nil
	}
	mem, err := mapFile(fd, int(pf.id.size))
	if err != nil {
		liveMappings.Add(-1)
		return nil
	}
	if !pf.mem.CompareAndSwap(nil, &mem) { // mapped by another answer meanwhile
		unmap(mem)
		return pf.mapped()
	}
	runtime.AddCleanup(pf, unmap, mem)
	return mem
}

// setMapped makes mem, the file of pf mapped (counted by
// reserveMapping), pf's mapping, unmapped once pf is unreachable.
func (pf *pageFile) setMapped(mem []byte) {
	pf.mem.Store(&mem)
	runtime.AddCleanup(pf, unmap, mem)
}

// liveMappings counts the page files mapped, in all servers.
var liveMappings atomic.Int64

// reserveMapping counts one more page file mapped, unless as many as
// limit are: then it returns false.
func reserveMapping(limit int64) bool {
	if liveMappings.Add(1) > limit {
		liveMappings.Add(-1)
		return false
	}
	return true
}

// unmap unmaps a page file mapped by mapFrom.
func unmap(mem []byte) {
	unmapFile(mem)
	liveMappings.Add(-1)
}

// mapLimit is the most page files mapped at once: half the mappings the
// kernel allows a process (vm.max_map_count), the rest left to the Go
// runtime and the libraries.
var mapLimit = sync.OnceValue(func() int64 { return int64(maxMapCount() / 2) })

// errStale says that the file at a page's path is no longer the one its
// build recorded (a newer build replaced or deleted it).
var errStale = errors.New("the page file was replaced")

// openFile is an open descriptor of a page file, in a fileCache.
type openFile struct {
	id   fileID
	fd   int
	refs int // guarded by the cache's mu: 1 while cached, plus 1 per user

	prev, next *openFile // in the cache's LRU list, while cached
}

// fileCache keeps at most limit page files open, the least recently used
// closed first. A descriptor is closed only once no answer is being sent
// from it: acquire takes a reference, release gives it back.
type fileCache struct {
	mu    sync.Mutex
	limit int
	files map[fileID]*openFile
	lru   openFile // the list's sentinel: lru.next is the most recently used
}

func newFileCache(limit int) *fileCache {
	c := &fileCache{limit: max(limit, 1), files: map[fileID]*openFile{}}
	c.lru.prev, c.lru.next = &c.lru, &c.lru
	return c
}

// acquire returns the open file of pf, opened from dir when it is not
// cached; errStale when the file at its path is another one. The caller
// releases it.
func (c *fileCache) acquire(dir *pageDir, pf *pageFile) (*openFile, error) {
	c.mu.Lock()
	if f := c.files[pf.id]; f != nil {
		f.refs++
		c.front(f)
		c.mu.Unlock()
		return f, nil
	}
	c.mu.Unlock()
	fd, err := dir.openChecked(pf)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	if f := c.files[pf.id]; f != nil { // opened by another request meanwhile
		f.refs++
		c.front(f)
		c.mu.Unlock()
		closeFD(fd)
		return f, nil
	}
	f := &openFile{id: pf.id, fd: fd, refs: 2}
	c.files[f.id] = f
	c.front(f)
	var unused []*openFile
	for len(c.files) > c.limit {
		if g := c.lru.prev; c.drop(g) {
			unused = append(unused, g)
		}
	}
	c.mu.Unlock()
	for _, g := range unused {
		closeFD(g.fd)
	}
	return f, nil
}

// release gives back a file from acquire, closing it when the cache
// dropped it meanwhile and no one else uses it.
func (c *fileCache) release(f *openFile) {
	c.mu.Lock()
	f.refs--
	last := f.refs == 0
	c.mu.Unlock()
	if last {
		closeFD(f.fd)
	}
}

// front makes f, cached or new, the most recently used. The caller holds
// mu.
func (c *fileCache) front(f *openFile) {
	if f.next != nil {
		f.prev.next, f.next.prev = f.next, f.prev
	}
	f.prev, f.next = &c.lru, c.lru.next
	c.lru.next.prev = f
	c.lru.next = f
}

// drop removes f from the cache, and reports whether no one uses it any
// more: then the caller closes it, after letting go of mu.
func (c *fileCache) drop(f *openFile) (unused bool) {
	f.prev.next, f.next.prev = f.next, f.prev
	f.prev, f.next = nil, nil
	delete(c.files, f.id)
	f.refs--
	return f.refs == 0
}

// shrink closes up to n of the least recently used files no one is
// sending from, and reports whether it closed any: to make room when
// opening a file ran out of descriptors.
func (c *fileCache) shrink(n int) bool {
	c.mu.Lock()
	var unused []*openFile
	for f := c.lru.prev; f != &c.lru && len(unused) < n; {
		prev := f.prev
		if f.refs == 1 {
			c.drop(f)
			unused = append(unused, f)
		}
		f = prev
	}
	c.mu.Unlock()
	for _, f := range unused {
		closeFD(f.fd)
	}
	return len(unused) > 0
}

// dropDeleted closes the cached files that no longer have a name (a build
// replaced or deleted them): they would hold their disk space until
// pushed out. Called after a switch; the answers being sent from one
// complete first.
func (c *fileCache) dropDeleted() {
	c.mu.Lock()
	var unused []*openFile
	for f := c.lru.next; f != &c.lru; {
		next := f.next
		if !linked(f.fd) && c.drop(f) {
			unused = append(unused, f)
		}
		f = next
	}
	c.mu.Unlock()
	for _, f := range unused {
		closeFD(f.fd)
	}
}

// len returns how many files the cache holds open.
func (c *fileCache) len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.files)
}

// openBody gets the body of the page that rep, decided from build hb,
// answers with: the page file mapped, or else open. When the file at the
// page's path is no longer the one hb recorded, a newer build replaced
// it: the request waits for the server to switch to a newer build (up to
// SwitchTimeout after the first request of hb that found a file
// replaced) and is decided again from that build, whole; past that, or
// when no descriptor can be had, it is answered 503. It returns the build
// and the answer to send, and the body: mapped, or in the open file f,
// which the caller releases (both nil when the answer has no body in a
// file).
func (s *Server) openBody(hb *heldBuild, rep reply, method, path, rawQuery string, cond *conditions) (_ *heldBuild, _ reply, mapped []byte, f *openFile) {
	for {
		if rep.page.body != nil {
			return hb, rep, rep.page.body, nil // mapped at load
		}
		pf := rep.page.file
		if m := pf.mapped(); m != nil {
			return hb, rep, m, nil
		}
		f, err := s.files.acquire(hb.dir, pf)
		if err != nil && outOfFiles(err) && s.files.shrink(16) {
			f, err = s.files.acquire(hb.dir, pf)
		}
		if err == nil {
			if m := pf.mapFrom(f.fd, hb.dir.maps); m != nil {
				s.files.release(f)
				return hb, rep, m, nil
			}
			return hb, rep, nil, f
		}
		if !errors.Is(err, errStale) {
			s.logOpenError(pf, err)
			return hb, s.unavailableReply(), nil, nil
		}
		next := s.waitSwitch(hb)
		if next == nil {
			return hb, s.unavailableReply(), nil, nil
		}
		hb = next
		rep = s.decide(hb, method, path, rawQuery, cond, nil)
		if rep.page == nil || rep.page.file == nil || !rep.hasBody() {
			return hb, rep, nil, nil
		}
	}
}

// waitSwitch waits for the server to switch from build hb, whose page
// files a newer build is replacing, and returns the build it switched
// to; nil when SwitchTimeout has passed since a request of hb first
// found a page file replaced.
func (s *Server) waitSwitch(hb *heldBuild) *heldBuild {
	if cur := s.cur.Load(); cur != hb {
		return cur
	}
	now := time.Now()
	at := hb.staleAt.Load()
	if at == 0 {
		if hb.staleAt.CompareAndSwap(0, now.UnixNano()) {
			// The first: have FollowBuilds look at the folder now, should
			// it have missed the new build.
			select {
			case s.nudge <- struct{}{}:
			default:
			}
		}
		at = hb.staleAt.Load()
	}
	wait := time.Unix(0, at).Add(s.opt.SwitchTimeout).Sub(now)
	if wait <= 0 {
		return nil
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	if s.opt.onStale != nil {
		s.opt.onStale()
	}
	select {
	case <-hb.replaced:
		return s.cur.Load()
	case <-t.C:
		return nil
	}
}

// logOpenError logs, at most once a second, that a page file could not
// be opened for a reason other than a newer build.
func (s *Server) logOpenError(pf *pageFile, err error) {
	now := time.Now().Unix()
	if last := s.openErrorAt.Load(); last == now || !s.openErrorAt.CompareAndSwap(last, now) {
		return
	}
	fmt.Fprintf(s.log, "opening %s: %v; answering 503\n", displayPath(pf.path), err)
}
