package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"gocloud.dev/blob"
)

// The pages a reader of the chunks puts together: offsets 0, 7, 14... of
// limit 20, so that pages overlap and cross chunks.
const readerStep, readerLimit = 7, 20

// TestPublishChunksReaderDuringPublish publishes three builds of a site in
// the chunks layout to versitygw: v1, v2 (one article more), v3 (v2 with
// an article edited), each cut into leaves of a few chunks (retree), so
// that a collection has several. Before each publish a reader reads the
// bucket's roots (the previous build's: the main listing's and a
// filter's that the publish changes), and keeps putting pages together
// from them, reading the leaves and chunks straight from the bucket,
// while the publish runs: what an edge that cached a root does. The
// publish runs on one worker and waits, after each object it uploads or
// deletes, for a whole pass of the reader: the reader sees every state
// the bucket goes through. Every page it puts together, before, during
// and after the publish, must be the previous build's, byte for byte.
// Each publish uploads exactly the leaves and chunks its roots name that
// the previous build's do not, the roots that changed and
// manifest.json; v3's deletes the leaves and chunks only v1 names, and
// keeps those v2 names.
func TestPublishChunksReaderDuringPublish(t *testing.T) {
	v := versitytest.Start(t)
	url, store := v.NewBucket(t)
	b, rec := record(t, open(t, url))
	direct := open(t, url) // the reader's, past the recorder
	// chunksOpt with more articles: 64 make one chunk a collection, and
	// the reader's pages would cross no chunk's end; 96 make three in the
	// main listing, in two leaves.
	opt := chunksOpt
	opt.Articles = 96
	s := newChunksSite(t, opt)
	v1 := s.retree(t)
	s.add(t)
	v2 := s.retree(t)
	s.edit(t, 33, "An edited title")
	v3 := s.retree(t)
	n1, n2, n3 := namedChunks(t, v1), namedChunks(t, v2), namedChunks(t, v3)

	publishDir(t, b, v1, lockOptions(url, store))
	checkBucket(t, b, v1, config.DefaultCacheControl, nil)

	t.Run("v2, one new article", func(t *testing.T) {
		// The chunks only v1 names stay: the reader's indexes name them.
		publishWhileReading(t, b, rec, direct, url, store, v1, v2, nil)
		checkBucketKeeping(t, b, v2, config.DefaultCacheControl, nil, minus(n1, n2))
	})

	t.Run("v3, one article edited", func(t *testing.T) {
		gone, kept := minus(n1, n2, n3), minus(n2, n3)
		gl, gc := countKinds(gone)
		kl, kc := countKinds(kept)
		if gl == 0 || gc == 0 || kl == 0 || kc == 0 {
			t.Fatalf("%d leaves and %d chunks only v1 names, %d and %d that v2 names and v3 does not: want some of each", gl, gc, kl, kc)
		}
		res := publishWhileReading(t, b, rec, direct, url, store, v2, v3, gone)
		if res.Kept != len(kept) {
			t.Errorf("kept %d chunks and leaves, want the %d v2 names and v3 does not", res.Kept, len(kept))
		}
		// The bucket holds the leaves and chunks v3 or v2 names, and no
		// other.
		held := map[string]bool{}
		it := direct.List(&blob.ListOptions{Prefix: chunk.Dir + "/"})
		for {
			o, err := it.Next(context.Background())
			if err == io.EOF {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			if o.Key != KeptName {
				held[o.Key] = true
			}
		}
		if extra, lost := minus(held, n2, n3), minus(n2, held); len(extra) > 0 || len(lost) > 0 {
			t.Errorf("the bucket holds %q, which neither v3 nor v2 names, and lost %q, which v2 names", extra, lost)
		}
		checkBucketKeeping(t, b, v3, config.DefaultCacheControl, nil, kept)
	})
}

// publishWhileReading publishes the build in newDir over the build in
// oldDir, which the bucket holds, while a pageReader assembles pages from
// the bucket's roots as they were before the publish. It checks every
// page the reader assembled, and what the publish changed in the bucket:
// the leaves, chunks and roots of the new build that the old one does
// not have, and manifest.json, uploaded; deletes, the leaves and chunks
// deleted.
func publishWhileReading(t *testing.T, b *blob.Bucket, rec *recorder, direct *blob.Bucket, url, store, oldDir, newDir string, deletes []string) *Result {
	t.Helper()
	om, nm := readManifest(t, oldDir), readManifest(t, newDir)
	r := &pageReader{b: direct, next: make(chan struct{})}
	for _, dir := range []string{listing.Dir, changedFilter(t, om, nm)} {
		r.held = append(r.held, holdIndex(t, direct, oldDir, chunk.IndexPath(dir)))
	}
	if n := len(r.held[0].root.Leaves); n < 2 {
		t.Fatalf("the main listing has %d leaves, want pages that run from one leaf into the next", n)
	}
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		r.run(ctx)
	}()
	stop := func() {
		cancel()
		<-stopped
	}
	defer stop()
	r.wait(1) // a whole pass before the publish

	before := storeSnapshot(t, store)
	var ticks atomic.Int64
	opt := lockOptions(url, store)
	opt.Workers = 1
	opt.Progress = func(int, int) {
		ticks.Add(1)
		r.fresh()
	}
	r.publishes.Add(1)
	res, keys := recordedPublish(t, b, rec, newDir, opt)
	r.publishes.Add(1)
	r.fresh() // a whole pass after it
	stop()

	for i, err := range r.errs {
		if i == 5 {
			t.Errorf("and %d errors more", len(r.errs)-i)
			break
		}
		t.Error(err)
	}
	for _, h := range r.held {
		t.Logf("the reader holds %s: %d articles in %d leaves, %d pages", h.path, h.root.Count, len(h.root.Leaves), len(h.pages))
	}
	t.Logf("%d passes of the reader, %d while the publish ran; the publish stopped %d times for a pass", r.passes, r.during, ticks.Load())
	if n := int(ticks.Load()); n == 0 || r.during < n {
		t.Errorf("%d passes of the reader ran while the publish did, want one at least after each of its %d uploads and deletes", r.during, n)
	}

	// Uploaded: the leaves and chunks the new roots name and the old
	// ones do not, the roots that changed, manifest.json; nothing else. The
	// recorder says what the bucket was sent, the folder of versitygw's
	// posix backend what it wrote.
	up := minus(namedChunks(t, newDir), namedChunks(t, oldDir))
	for _, f := range nm.Files {
		if chunk.IsIndex(f.Path) && !slices.ContainsFunc(om.Files, func(g manifest.File) bool { return g.Path == f.Path && g.SHA256 == f.SHA256 }) {
			up = append(up, f.Path)
		}
	}
	up = append(up, manifest.Name)
	slices.Sort(up)
	slices.Sort(keys)
	if !slices.Equal(keys, up) || res.Uploaded != len(up) {
		t.Errorf("uploaded %d objects:\n%q\nwant the %d changed leaves, chunks and roots, and %s:\n%q", res.Uploaded, keys, len(up), manifest.Name, up)
	}
	var del []string
	for _, f := range om.Files {
		if !slices.ContainsFunc(nm.Files, func(g manifest.File) bool { return g.Path == f.Path }) && !immutable(f.Path) {
			del = append(del, f.Path)
		}
	}
	del = append(del, deletes...)
	slices.Sort(del)
	written, removed := storeChanges(before, storeSnapshot(t, store))
	written = slices.DeleteFunc(written, func(k string) bool { return k == KeptName }) // publish's record, checked by checkBucketKeeping
	if !slices.Equal(written, up) || !slices.Equal(removed, del) {
		t.Errorf("the bucket's folder: written\n%q\nremoved\n%q\nwant written\n%q\nremoved\n%q", written, removed, up, del)
	}
	return res
}

// storeChanges returns the keys of the files that are new or rewritten
// in snapshot after, and those that it no longer has, sorted.
func storeChanges(before, after map[string]fileState) (written, removed []string) {
	for k, v := range after {
		if w, ok := before[k]; !ok || w != v {
			written = append(written, filepath.ToSlash(k))
		}
	}
	for k := range before {
		if _, ok := after[k]; !ok {
			removed = append(removed, filepath.ToSlash(k))
		}
	}
	slices.Sort(written)
	slices.Sort(removed)
	return written, removed
}

// namedChunks returns the leaves and chunks the roots of the build in
// dir name, read from its files (not from its manifest's expansion).
func namedChunks(t *testing.T, dir string) map[string]bool {
	t.Helper()
	set := map[string]bool{}
	for _, f := range readManifest(t, dir).Files {
		if !chunk.IsIndex(f.Path) {
			continue
		}
		root, ix, _ := readTree(t, dir, f.Path)
		for _, l := range root.Leaves {
			set[l.Path] = true
		}
		for _, r := range ix.Chunks {
			set[r.Path] = true
		}
	}
	return set
}

// changedFilter returns the folder of the largest collection of a filter
// that builds a and b both have, with other indexes.
func changedFilter(t *testing.T, a, b *manifest.Manifest) string {
	t.Helper()
	sums := map[string]string{}
	for _, f := range a.Files {
		sums[f.Path] = f.SHA256
	}
	dir, count := "", 0
	for _, c := range b.Collections {
		ix := chunk.IndexPath(c.Dir)
		f := b.Files[slices.IndexFunc(b.Files, func(f manifest.File) bool { return f.Path == ix })]
		if c.Dir != listing.Dir && sums[ix] != "" && sums[ix] != f.SHA256 && c.Count > count {
			dir, count = c.Dir, c.Count
		}
	}
	if dir == "" {
		t.Fatal("no filter's index changed")
	}
	return dir
}

// heldIndex is a root of the old build that a reader holds, and the
// results of its pages as the old build has them, by offset.
type heldIndex struct {
	path  string
	root  *chunk.Root
	pages map[int][]byte
}

// holdIndex reads the root at path from the bucket, checks that it is
// the one of the build in dir, and puts together the results of its
// pages from the build's files: article by article, each cut out of its
// chunk where the index says.
func holdIndex(t *testing.T, b *blob.Bucket, dir, path string) *heldIndex {
	t.Helper()
	root, ix, local := readTree(t, dir, path)
	data, err := b.ReadAll(context.Background(), path)
	if err != nil || !bytes.Equal(data, local) {
		t.Fatalf("%s: the bucket's is not the old build's (%v)", path, err)
	}
	var articles [][]byte
	for i := range ix.Chunks {
		r := &ix.Chunks[i]
		data, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(r.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if err := chunk.CheckChunk(r, data); err != nil {
			t.Fatal(err)
		}
		for k := range r.Ends {
			articles = append(articles, data[r.Start(k):r.Ends[k]])
		}
	}
	h := &heldIndex{path: path, root: root, pages: map[int][]byte{}}
	for off := 0; off < ix.Count; off += readerStep {
		page := articles[off:min(off+readerLimit, len(articles))]
		results := append(append([]byte("["), bytes.Join(page, []byte(","))...), ']')
		var items []json.RawMessage
		if err := json.Unmarshal(results, &items); err != nil || len(items) != len(page) {
			t.Fatalf("%s, offset %d: the old build's results are not %d articles (%v)", path, off, len(page), err)
		}
		h.pages[off] = results
	}
	if len(h.pages) == 0 {
		t.Fatalf("%s: no article", path)
	}
	return h
}

// check puts together every page of the root from the bucket and
// compares it with the old build's.
func (h *heldIndex) check(ctx context.Context, b *blob.Bucket) error {
	for off := 0; off < h.root.Count; off += readerStep {
		got, err := assemble(ctx, b, h.root, off, readerLimit)
		if err != nil {
			return fmt.Errorf("%s, offset %d: %w", h.path, off, err)
		}
		if !bytes.Equal(got, h.pages[off]) {
			return fmt.Errorf("%s, offset %d: put together %d bytes that are not the old build's %d", h.path, off, len(got), len(h.pages[off]))
		}
	}
	return nil
}

// assemble puts together the results of the page (offset, limit) of the
// collection of root from the bucket, as an edge does: each leaf the
// page takes articles of, read whole and checked against its root's
// line (the next one's too when the page runs past a leaf's end); then,
// for each chunk the page takes articles of, one ranged read of the
// bytes from its first article's start to its last one's end.
func assemble(ctx context.Context, b *blob.Bucket, root *chunk.Root, offset, limit int) ([]byte, error) {
	end := min(offset+limit, root.Count)
	out := []byte{'['}
	for li := range root.Leaves {
		lr := &root.Leaves[li]
		if lr.First >= end {
			break
		}
		if lr.First+lr.Count <= offset {
			continue
		}
		data, err := b.ReadAll(ctx, lr.Path)
		if err != nil {
			return nil, fmt.Errorf("reading leaf %s: %w", lr.Path, err)
		}
		if err := chunk.CheckLeaf(lr, data); err != nil {
			return nil, err
		}
		leaf, err := chunk.ParseLeaf(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", lr.Path, err)
		}
		first := lr.First // the position of the chunk's first article
		for i := range leaf.Chunks {
			r := &leaf.Chunks[i]
			n := len(r.Ends)
			if first >= end {
				break
			}
			if first+n > offset {
				k0, k1 := max(offset-first, 0), min(end-first, n)-1
				from, to := r.Start(k0), r.Ends[k1]
				rd, err := b.NewRangeReader(ctx, r.Path, int64(from), int64(to-from), nil)
				if err != nil {
					return nil, err
				}
				part, err := io.ReadAll(rd)
				rd.Close()
				if err != nil {
					return nil, fmt.Errorf("reading %s: %w", r.Path, err)
				}
				if len(part) != to-from {
					return nil, fmt.Errorf("%s: %d bytes at %d, want %d", r.Path, len(part), from, to-from)
				}
				if len(out) > 1 {
					out = append(out, ',')
				}
				out = append(out, part...)
			}
			first += n
		}
	}
	return append(out, ']'), nil
}

// pageReader puts together the pages of the indexes it holds from the
// bucket, pass after pass until its context ends, and compares each with
// the old build's: what an edge that cached the indexes does. Tests wait
// for its passes (wait, fresh), never for time.
type pageReader struct {
	b    *blob.Bucket
	held []*heldIndex
	// publishes counts the publishes started and those ended: odd while
	// one runs.
	publishes atomic.Int64

	mu     sync.Mutex
	passes int           // passes done
	during int           // of them, those that ran, in whole or in part, while a publish did
	errs   []error       // what the passes found wrong
	next   chan struct{} // closed at the end of the pass that runs now
}

// run runs passes until ctx ends.
func (r *pageReader) run(ctx context.Context) {
	for ctx.Err() == nil {
		g := r.publishes.Load()
		var errs []error
		for _, h := range r.held {
			if err := h.check(ctx, r.b); err != nil {
				errs = append(errs, err)
			}
		}
		during := g%2 == 1 || r.publishes.Load() != g
		r.mu.Lock()
		r.passes++
		if during {
			r.during++
		}
		if ctx.Err() == nil { // else the pass was cut short: the one before it counts
			for _, err := range errs {
				r.errs = append(r.errs, fmt.Errorf("pass %d: %w", r.passes, err))
			}
		}
		close(r.next)
		r.next = make(chan struct{})
		r.mu.Unlock()
	}
}

// wait waits until n passes are done.
func (r *pageReader) wait(n int) {
	for {
		r.mu.Lock()
		done, next := r.passes, r.next
		r.mu.Unlock()
		if done >= n {
			return
		}
		<-next
	}
}

// fresh waits for a whole pass that starts after it is called: the one
// after the pass that runs now.
func (r *pageReader) fresh() {
	r.mu.Lock()
	n := r.passes + 2
	r.mu.Unlock()
	r.wait(n)
}
