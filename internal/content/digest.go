package content

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"hash"
	"io/fs"
	"math"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/cespare/xxhash/v2"

	"github.com/feedgen/feedgen/internal/diag"
)

// digest is Site.Digest: SHA-256 of a version line and, for each file in
// the order walked, its path, its length and the xxhash of its bytes.
func digest(files []*entry) [sha256.Size]byte {
	d := newDigester()
	for _, e := range files {
		d.add(e.name, e.size, e.sum)
	}
	return d.sum()
}

// A digester computes Site.Digest a file at a time (see digest).
type digester struct {
	h hash.Hash
	b []byte
}

func newDigester() *digester {
	d := &digester{h: sha256.New()}
	d.h.Write([]byte("feedgen content 1\n"))
	return d
}

// add adds the next file in the order walked: its path, length and xxhash.
func (d *digester) add(name string, size int64, sum uint64) {
	b := append(d.b[:0], name...)
	b = append(b, 0)
	b = binary.LittleEndian.AppendUint64(b, uint64(size))
	b = binary.LittleEndian.AppendUint64(b, sum)
	d.h.Write(b)
	d.b = b
}

func (d *digester) sum() [sha256.Size]byte {
	var sum [sha256.Size]byte
	d.h.Sum(sum[:0])
	return sum
}

// checkBatch is how many files a worker of Digest takes at a time.
const checkBatch = 512

// Digest returns the digest a Load of the content under fsys would give
// (Site.Digest), reading only the files cache does not vouch for (one
// whose stamp is the one it records; cache may be nil), parsing none, in
// memory that does not grow with the site: a stat per file, on all cores,
// as the folders are walked. ok is false when a Load would find the
// content broken (files in the wrong place, one that cannot be read):
// sum is then of no use. root is what messages would call fsys.
func (l *Loader) Digest(ctx context.Context, fsys fs.FS, root string, cache *Cache) (sum [sha256.Size]byte, ok bool, err error) {
	if root == "" {
		root = "content"
	}
	if cache != nil {
		cache.articles = false
	}
	workers := runtime.GOMAXPROCS(0)
	// Batches go to the workers and, in the order walked, to the digest:
	// as many in flight as the digest's queue holds.
	todo := make(chan *digestBatch, workers)
	order := make(chan *digestBatch, 4*workers)
	var bad atomic.Bool // a file could not be read
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			var stats statter
			defer stats.close()
			var buf []byte
			for b := range todo {
				if ctx.Err() == nil {
					buf = b.check(fsys, &stats, buf, &bad)
				}
				close(b.done)
			}
		})
	}
	d := newDigester()
	hashed := make(chan struct{})
	go func() {
		defer close(hashed)
		for b := range order {
			<-b.done
			for i := range b.files {
				f := &b.files[i]
				d.add(f.name, f.size, f.sum)
			}
		}
	}()
	var errs diag.List
	cur := &digestBatch{done: make(chan struct{})}
	send := func() {
		order <- cur
		todo <- cur
		cur = &digestBatch{done: make(chan struct{})}
	}
	err = l.list(ctx, fsys, root, &errs, func(p string) {
		f := digestFile{name: p}
		if cache != nil {
			f.known, f.hasKnown = cache.find(p)
		}
		cur.files = append(cur.files, f)
		if len(cur.files) == checkBatch {
			send()
		}
	})
	if len(cur.files) > 0 {
		send()
	}
	close(todo)
	close(order)
	wg.Wait()
	<-hashed
	if err == nil {
		err = ctx.Err()
	}
	if err != nil {
		return sum, false, err
	}
	return d.sum(), len(errs) == 0 && !bad.Load(), nil
}

// digestBatch is files Digest walked, in that order, checked by one
// worker: done is closed when it is.
type digestBatch struct {
	files []digestFile
	done  chan struct{}
}

// digestFile is one file of a digestBatch.
type digestFile struct {
	name     string
	known    known
	hasKnown bool
	size     int64
	sum      uint64
}

// check sets the size and sum of each file of b: those the cache records
// when its stamp is the one recorded, else those of its bytes, read into
// buf (returned, to be used again). bad is set for a file that cannot be
// read.
func (b *digestBatch) check(fsys fs.FS, stats *statter, buf []byte, bad *atomic.Bool) []byte {
	for i := range b.files {
		f := &b.files[i]
		k := &f.known
		if f.hasKnown && k.stamp != 0 {
			if st, err := stats.stat(fsys, f.name); err == nil && st.hash(math.MaxInt64) == k.stamp {
				f.size, f.sum = k.size, k.sum
				continue
			}
		}
		data, _, err := readFile(fsys, f.name, buf)
		if err != nil {
			bad.Store(true)
			continue
		}
		buf = data
		f.size, f.sum = int64(len(data)), xxhash.Sum64(data)
	}
	return buf
}
