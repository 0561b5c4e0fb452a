package server

import (
	"bytes"
	"container/list"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"path"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// A build served from a bucket (Bucket) is read as publish wrote it: its
// manifest, and, in the chunks layout, its indexes, when it is loaded;
// the bodies (chunks, page files, feeds) only when a request needs them,
// through a cache of bounded size shared by every build the server
// loads (a body is known by its SHA-256). Each body read is checked
// against the manifest (its size and SHA-256; a chunk, against its
// index too) before it is sent or kept. A body read from a bucket is in
// memory of its own, outside the Go heap (mapBody), held by the cache
// while it keeps it and by each answer that sends it (get, peek), and
// freed as soon as the last lets go: the memory of the bodies is what the
// cache keeps (--cache-size) and what the answers being sent hold, not
// twice that, as the collector would let the heap grow. So every answer
// that holds a body releases it once written: see reply.release and
// assembled.clearParts, and the first rule of doc.go. Such a body is sent
// by writev, never spliced.

// DefaultCacheSize is the default of the bytes of bodies a server of a
// bucket keeps in memory (serve --cache-size).
const DefaultCacheSize = 256 << 20

// DefaultFetchTimeout is the default of Options.FetchTimeout.
const DefaultFetchTimeout = 5 * time.Second

// maxRemoteFile is the largest manifest or index a server of a bucket
// reads: a bound on the memory one file can take, far above any build's.
const maxRemoteFile = 1 << 30

// remoteRef names a body in the bucket: its key, size and SHA-256, as the
// manifest (or an index) gives them.
type remoteRef struct {
	path string
	size int64
	sum  [sha256.Size]byte
}

// errReplaced is the error of a page file (or feed) whose bytes in the
// bucket are no longer those of the build that names it: a publish has
// written the next build's over it.
var errReplaced = errors.New("replaced by a newer build")

// maxReads is the most bodies a server reads from its bucket at once: the
// memory of the reads under way, which the cache does not count, stays
// bounded. A request that finds none free waits for one, up to its
// deadline.
const maxReads = 32

// remote is the bucket of a server and its cache of bodies.
type remote struct {
	bucket  *blob.Bucket
	timeout time.Duration // of a request's reads of bodies
	log     io.Writer
	reads   chan struct{} // a token per read under way: maxReads at most
	mapped  atomic.Int64  // bytes of bodies in memory: kept, or held by answers
	maps    atomic.Int64  // bodies in memory of their own (mapBody)

	// loadedTag is the ETag of the manifest of the build last loaded, as
	// asked before it was read ("" when the bucket did not say).
	loadedTag atomic.Pointer[string]

	mu      sync.Mutex
	entries map[[sha256.Size]byte]*list.Element // of lru: each *remoteEntry
	lru     list.List                           // most recently used first
	held    int64                               // bytes of the entries read
	max     int64                               // of held: the cache's size
	failing bool                                // the bucket's last answer was a failure, logged
}

// remoteEntry is one body in the cache, or being read (done open). Its
// bytes are outside the Go heap (mapBody), freed as soon as no one holds
// them: the cache, while it keeps the entry, and each answer that sends
// them, from get or peek until its bytes are written (release).
type remoteEntry struct {
	r    *remote
	sum  [sha256.Size]byte
	done chan struct{}
	mem  bodyMem // the memory of data
	data []byte  // the body, once read
	err  error
	refs atomic.Int32 // its holders
}

// release lets go of the entry: the last holder frees its memory.
func (e *remoteEntry) release() {
	if e.refs.Add(-1) == 0 {
		e.r.free(e.mem)
	}
}

// bodyMem is the memory of a body read from a bucket: mapped (mapBody), or,
// past maxBodyMaps bodies mapped (the kernel bounds a process's mappings:
// vm.max_map_count), in the Go heap.
type bodyMem struct {
	b      []byte
	mapped bool
}

// maxBodyMaps is the most bodies read from a bucket that are in memory of
// their own at once: a quarter of Linux's default vm.max_map_count.
const maxBodyMaps = 16 << 10

// alloc returns memory for a body of n bytes.
func (r *remote) alloc(n int) (bodyMem, error) {
	if r.maps.Add(1) <= maxBodyMaps {
		b, err := mapBody(n)
		if err != nil {
			r.maps.Add(-1)
			return bodyMem{}, err
		}
		r.mapped.Add(int64(n))
		return bodyMem{b: b, mapped: true}, nil
	}
	r.maps.Add(-1)
	r.mapped.Add(int64(n))
	return bodyMem{b: make([]byte, n)}, nil
}

// free frees memory alloc returned (none: nothing).
func (r *remote) free(m bodyMem) {
	if m.b == nil {
		return
	}
	r.mapped.Add(-int64(len(m.b)))
	if m.mapped {
		unmapBody(m.b)
		r.maps.Add(-1)
	}
}

func newRemote(b *blob.Bucket, cacheSize int64, timeout time.Duration, log io.Writer) *remote {
	if cacheSize <= 0 {
		cacheSize = DefaultCacheSize
	}
	r := &remote{bucket: b, timeout: timeout, log: log, reads: make(chan struct{}, maxReads),
		max: cacheSize, entries: map[[sha256.Size]byte]*list.Element{}}
	r.loadedTag.Store(new(string))
	return r
}

// manifestTag returns the ETag of the bucket's manifest, "" when the
// bucket does not say (reading it then says why).
func (r *remote) manifestTag(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	a, err := r.bucket.Attributes(ctx, manifest.Name)
	if err != nil {
		return ""
	}
	return a.ETag
}

// deadline is when the reads of a request that starts now give up.
func (r *remote) deadline() time.Time { return time.Now().Add(r.timeout) }

// get returns the body ref names, and holds it for the caller, who
// releases e once the bytes are written: from the cache, or read from
// the bucket and checked against ref (and by check, when not nil) once,
// however many requests ask for it meanwhile, each waiting until its
// deadline at most. A body that does not match gives errReplaced
// (wrapped); one the bucket does not have, fs.ErrNotExist.
func (r *remote) get(ref remoteRef, check func([]byte) error, deadline time.Time) (data []byte, e *remoteEntry, err error) {
	r.mu.Lock()
	if el, ok := r.entries[ref.sum]; ok {
		e := el.Value.(*remoteEntry)
		e.refs.Add(1) // before the cache may let go of it
		r.lru.MoveToFront(el)
		r.mu.Unlock()
		select {
		case <-e.done:
		default:
			t := time.NewTimer(time.Until(deadline))
			defer t.Stop()
			select {
			case <-e.done:
			case <-t.C:
				e.release()
				return nil, nil, fmt.Errorf("reading %s: %w", ref.path, context.DeadlineExceeded)
			}
		}
		switch {
		case e.err != nil:
			e.release()
			return nil, nil, e.err
		case int64(len(e.data)) != ref.size:
			e.release()
			return nil, nil, fmt.Errorf("%s: %w", ref.path, errReplaced)
		}
		return e.data, e, nil
	}
	e = &remoteEntry{r: r, sum: ref.sum, done: make(chan struct{})}
	e.refs.Store(2) // the cache's and the caller's
	el := r.lru.PushFront(e)
	r.entries[ref.sum] = el
	r.mu.Unlock()

	var mem bodyMem
	err = errors.New("reading " + ref.path + ": stopped")
	defer func() {
		// Even when read panics, the waiters learn how it went.
		r.mu.Lock()
		e.mem, e.data, e.err = mem, data, err
		var evicted []*remoteEntry
		if err != nil {
			// Not kept: the next request reads it again.
			if r.entries[ref.sum] == el {
				delete(r.entries, ref.sum)
				r.lru.Remove(el)
			}
			e.refs.Add(-1) // the cache's
		} else {
			r.held += int64(len(data))
			evicted = r.evict()
		}
		r.mu.Unlock()
		close(e.done)
		for _, x := range evicted {
			x.release() // the cache's hold, out of the lock: it may unmap
		}
		r.note(err)
		if err != nil {
			e.release()
			data, e = nil, nil
		}
	}()
	mem, data, err = r.read(ref, check, deadline)
	return data, e, err
}

// peek returns the body ref names, held for the caller as get holds it,
// when the cache holds it, read; nil when it does not. It does not
// allocate.
func (r *remote) peek(ref remoteRef) ([]byte, *remoteEntry) {
	r.mu.Lock()
	defer r.mu.Unlock()
	el, ok := r.entries[ref.sum]
	if !ok {
		return nil, nil
	}
	e := el.Value.(*remoteEntry)
	select {
	case <-e.done:
	default:
		return nil, nil // being read
	}
	if e.err != nil || int64(len(e.data)) != ref.size {
		return nil, nil
	}
	e.refs.Add(1)
	r.lru.MoveToFront(el)
	return e.data, e
}

// evict takes out of the cache the least recently used bodies read until
// those kept fit in max, and returns them: the caller holds mu, and
// releases the cache's hold of each once it has let go of mu.
func (r *remote) evict() []*remoteEntry {
	var out []*remoteEntry
	for el := r.lru.Back(); el != nil && r.held > r.max; {
		prev := el.Prev()
		if e := el.Value.(*remoteEntry); e.data != nil {
			r.held -= int64(len(e.data))
			delete(r.entries, e.sum)
			r.lru.Remove(el)
			out = append(out, e)
		}
		el = prev
	}
	return out
}

// read reads the body ref names from the bucket, by the deadline, into
// memory of its own (mem; data is the body in it).
func (r *remote) read(ref remoteRef, check func([]byte) error, deadline time.Time) (mem bodyMem, data []byte, err error) {
	ctx, cancel := context.WithDeadline(context.Background(), deadline)
	defer cancel()
	select {
	case r.reads <- struct{}{}:
		defer func() { <-r.reads }()
	case <-ctx.Done():
		return bodyMem{}, nil, fmt.Errorf("reading %s: %d reads under way: %w", ref.path, maxReads, ctx.Err())
	}
	rd, err := r.bucket.NewReader(ctx, ref.path, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return bodyMem{}, nil, fmt.Errorf("%s: %w", ref.path, fs.ErrNotExist)
		}
		return bodyMem{}, nil, fmt.Errorf("reading %s: %w", ref.path, err)
	}
	defer rd.Close()
	if rd.Size() != ref.size {
		return bodyMem{}, nil, fmt.Errorf("%s: %d bytes, the manifest says %d: %w", ref.path, rd.Size(), ref.size, errReplaced)
	}
	if mem, err = r.alloc(int(ref.size) + 1); err != nil {
		return bodyMem{}, nil, fmt.Errorf("reading %s: %w", ref.path, err)
	}
	data, err = manifest.ReadChecked(rd, manifest.File{Path: ref.path, Size: ref.size, SHA256: hex.EncodeToString(ref.sum[:])}, mem.b)
	var mm *manifest.Mismatch
	switch {
	case errors.As(err, &mm):
		err = fmt.Errorf("%w: %w", mm, errReplaced)
	case err == nil && check != nil:
		if err = check(data); err != nil {
			err = fmt.Errorf("%w: %w", err, errReplaced)
		}
	}
	if err != nil {
		r.free(mem)
		return bodyMem{}, nil, err
	}
	return mem, data[:len(data):len(data)], nil
}

// note logs a change of the bucket's state, from the outcome of a
// request to it (err): once when it starts failing, once when it answers
// again. An answer that says something of a file (it is missing, or of
// other bytes) is an answer.
func (r *remote) note(err error) {
	failing := err != nil && !errors.Is(err, errReplaced) && !errors.Is(err, fs.ErrNotExist)
	r.mu.Lock()
	changed := failing != r.failing
	r.failing = failing
	r.mu.Unlock()
	switch {
	case !changed:
	case failing:
		fmt.Fprintf(r.log, "the bucket does not answer (%s); still serving the build loaded, 503 for what is not in memory\n", failure(err, r.timeout))
	default:
		fmt.Fprintln(r.log, "the bucket answers again")
	}
}

// failure says what kind of failure err is, for the log: not the error's
// text, which names a file and differs from one request to the next.
func failure(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	if gcerrors.Code(err) == gcerrors.PermissionDenied {
		return "permission denied: check the credentials"
	}
	var oe *net.OpError
	if errors.As(err, &oe) {
		return oe.Op + " " + oe.Err.Error()
	}
	return gcerrors.Code(err).String()
}

// cached returns the bytes of bodies the cache keeps.
func (r *remote) cached() int64 {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.held
}

// page returns page pg of a build of the bucket with its body, read from
// the bucket (or the cache) by the deadline, held until the answer that
// sends it is released (reply.release).
func (r *remote) page(pg *page, deadline time.Time) (*page, error) {
	body, e, err := r.get(*pg.remote, nil, deadline)
	if err != nil {
		return nil, err
	}
	return &page{body: body, etag: pg.etag, length: pg.length, held: e}, nil
}

// remoteFS is the bucket as an fs.FS for one load (manifest.ReadContext
// and the loaders read the manifest and the indexes through it): each
// file is read whole, with ctx, and kept, so that a file read twice in
// one load (an index, by Expand and then by the loader) is read from the
// bucket once. It is a manifest.Prefetcher: the indexes Expand is about
// to read are read ahead, prefetchers at a time, not one after another.
type remoteFS struct {
	ctx     context.Context
	bucket  *blob.Bucket
	timeout time.Duration // of each file
	ahead   chan struct{} // a token per file read ahead
	mu      sync.Mutex
	files   map[string]*remoteRead
}

// remoteRead is a file of a remoteFS: being read until done is closed.
type remoteRead struct {
	done chan struct{}
	data []byte
	err  error
}

// prefetchers is how many files a remoteFS reads ahead at once.
const prefetchers = 16

func newRemoteFS(ctx context.Context, r *remote) *remoteFS {
	// A manifest or an index may be larger than any body: more time.
	return &remoteFS{ctx: ctx, bucket: r.bucket, timeout: 6 * r.timeout, ahead: make(chan struct{}, prefetchers),
		files: map[string]*remoteRead{}}
}

func (f *remoteFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	rr, read := f.start(name)
	if read {
		rr.data, rr.err = f.readAll(name)
		close(rr.done)
	}
	select {
	case <-rr.done:
	case <-f.ctx.Done():
		return nil, &fs.PathError{Op: "open", Path: name, Err: f.ctx.Err()}
	}
	if rr.err != nil {
		return nil, &fs.PathError{Op: "open", Path: name, Err: rr.err}
	}
	return &remoteFile{name: name, Reader: bytes.NewReader(rr.data), size: int64(len(rr.data))}, nil
}

// start returns the read of file name, and whether the caller is to read
// it: no one has yet.
func (f *remoteFS) start(name string) (*remoteRead, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if rr, ok := f.files[name]; ok {
		return rr, false
	}
	rr := &remoteRead{done: make(chan struct{})}
	f.files[name] = rr
	return rr, true
}

// Prefetch reads the files names ahead, in their order, prefetchers at a
// time, each kept for Open.
func (f *remoteFS) Prefetch(names []string) {
	for _, name := range names {
		rr, read := f.start(name)
		if !read {
			continue
		}
		select {
		case f.ahead <- struct{}{}:
		case <-f.ctx.Done():
			rr.err = f.ctx.Err()
			close(rr.done)
			continue
		}
		go func() {
			defer func() { <-f.ahead }()
			rr.data, rr.err = f.readAll(name)
			close(rr.done)
		}()
	}
}

// readAll reads the object name whole: at most maxRemoteFile bytes.
func (f *remoteFS) readAll(name string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(f.ctx, f.timeout)
	defer cancel()
	rd, err := f.bucket.NewReader(ctx, name, nil)
	if err != nil {
		if gcerrors.Code(err) == gcerrors.NotFound {
			return nil, fs.ErrNotExist
		}
		return nil, err
	}
	defer rd.Close()
	if rd.Size() > maxRemoteFile {
		return nil, fmt.Errorf("%d bytes, more than a build's file can be", rd.Size())
	}
	buf := bytes.NewBuffer(make([]byte, 0, rd.Size()+1))
	if _, err := buf.ReadFrom(io.LimitReader(rd, maxRemoteFile+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxRemoteFile {
		return nil, fmt.Errorf("more than %d bytes, more than a build's file can be", maxRemoteFile)
	}
	return buf.Bytes(), nil
}

// remoteFile is a file of a remoteFS, read.
type remoteFile struct {
	*bytes.Reader
	name string
	size int64
}

func (f *remoteFile) Stat() (fs.FileInfo, error) { return remoteInfo{f}, nil }
func (f *remoteFile) Close() error               { return nil }

type remoteInfo struct{ f *remoteFile }

func (i remoteInfo) Name() string       { return path.Base(i.f.name) }
func (i remoteInfo) Size() int64        { return i.f.size }
func (i remoteInfo) Mode() fs.FileMode  { return 0o444 }
func (i remoteInfo) ModTime() time.Time { return time.Time{} }
func (i remoteInfo) IsDir() bool        { return false }
func (i remoteInfo) Sys() any           { return nil }
