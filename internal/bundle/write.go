package bundle

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/pool"
)

// DefaultLevel is the deflate level of Write: about 0.23 of the output's
// size for feedgen's pages, at several hundred MB/s per core.
const DefaultLevel = 5

// Options say what goes into a bundle beside the pages.
type Options struct {
	// Config is the config.yaml the output was built with, stored as it is.
	Config []byte
	// BundledBy names the program writing the bundle, e.g. "feedgen v1.2.3".
	BundledBy string
	// Level is the deflate level, 1 to 9; 0 is DefaultLevel.
	Level int
	// Workers is how many pages are read and compressed at once; 0 is
	// GOMAXPROCS. The bytes written do not depend on it.
	Workers int
	// Progress, when set, is called from time to time with the entries
	// written so far and their total.
	Progress func(done, total int)
}

// Result describes a bundle written.
type Result struct {
	Info  Info
	Size  int64 // bytes of the archive
	Pages int   // page entries
}

// entry is one file of the bundle: a page of the output (page >= 0) or
// one of the bundle's own files (data).
type entry struct {
	name string
	page int // index in the manifest's files, or -1
	data []byte
}

// packed is an entry read, checked and compressed.
type packed struct {
	crc  uint32
	size int64
	comp *bytes.Buffer
	sum  [sha256.Size]byte // of comp, for the seal
}

// Write writes a bundle of the build in output (an output folder: its
// manifest.json and the pages it lists) to w. Every page is checked
// against the manifest's size and SHA-256 as it is read: an output that
// changed since its manifest was written (a build running, a file edited)
// gives an error, never a bundle that mixes two builds. Pages are
// compressed on several cores and written in name order; the bytes
// written depend only on the output, opt.Config, opt.BundledBy and
// opt.Level.
func Write(ctx context.Context, w io.Writer, output fs.FS, opt Options) (*Result, error) {
	level := opt.Level
	if level == 0 {
		level = DefaultLevel
	}
	if level < 1 || level > 9 {
		return nil, fmt.Errorf("writing bundle: deflate level %d is not between 1 and 9", level)
	}
	if err := outdir.Finished(output, "bundle"); err != nil {
		return nil, err
	}
	r, err := manifest.ReadContext(ctx, output)
	if err == nil {
		err = r.Complete()
	}
	if err != nil {
		return nil, err
	}
	m, mdata := r.Manifest, r.Data
	if sum := sha256.Sum256(opt.Config); m.ConfigSHA256 != "" && m.ConfigSHA256 != hex.EncodeToString(sum[:]) {
		return nil, errors.New("the config given is not the one the build used (its SHA-256 differs from the manifest's config_sha256): pass the config.yaml of the build's site, or build again")
	}
	if ps := m.Validate(); len(ps) > 0 { // a page named as one of the bundle's own files too: see reserved
		return nil, fmt.Errorf("checking the output's manifest: %w", ps)
	}
	// In the chunks layout, every index must fit its chunks (each is
	// checked as it is packed): what serving the bundle relies on.
	ix, ps := manifest.ReadIndexes(m, func(f manifest.File) ([]byte, error) { return manifest.ReadPage(output, f, nil) })
	if len(ps) > 0 {
		return nil, fmt.Errorf("%s: %s", ps[0], manifest.UnfitAdvice("bundle"))
	}

	info := Info{
		Format: Format, Generator: m.Generator, BundledBy: opt.BundledBy,
		BuildTime: m.BuildTime.UTC(), Articles: m.Articles, Pages: len(m.Files),
	}
	for _, f := range m.Files {
		info.Bytes += f.Size
	}
	idata, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	entries := make([]entry, 0, len(m.Files)+3)
	for i, f := range m.Files {
		entries = append(entries, entry{name: f.Path, page: i})
	}
	entries = append(entries,
		entry{name: InfoName, page: -1, data: append(idata, '\n')},
		entry{name: ConfigName, page: -1, data: opt.Config},
		entry{name: ManifestName, page: -1, data: mdata},
	)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })

	bw := bufio.NewWriterSize(w, 256<<10)
	zw := newZipWriter(bw, m.BuildTime)
	write := func(e *entry, p *packed) error { return zw.add(e.name, p.crc, p.size, p.comp.Bytes(), p.sum) }
	if err := pack(ctx, output, m, ix, entries, level, opt, write); err != nil {
		return nil, err
	}
	if err := zw.close(); err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	if err := bw.Flush(); err != nil {
		return nil, fmt.Errorf("writing bundle: %w", err)
	}
	return &Result{Info: info, Size: zw.size(), Pages: len(m.Files)}, nil
}

// zipWriter writes a bundle's zip structure (see zipfmt.go) around the
// entries' data.
type zipWriter struct {
	cw   *countWriter
	seal hash.Hash // of the entries' sums
	st   stamp
	dir  []placed
	head []byte
}

// placed is an entry written, and where.
type placed struct {
	e      zentry
	offset uint64
}

func newZipWriter(w io.Writer, built time.Time) *zipWriter {
	return &zipWriter{cw: &countWriter{w: w}, seal: sha256.New(), st: stampOf(built)}
}

// add writes the entry name, of size bytes whose CRC-32 is crc, deflated
// into comp, whose SHA-256 is sum. Entries go in name order.
func (z *zipWriter) add(name string, crc uint32, size int64, comp []byte, sum [sha256.Size]byte) error {
	e := zentry{name: name, crc: crc, csize: uint64(len(comp)), usize: uint64(size)}
	z.dir = append(z.dir, placed{e, uint64(z.cw.n)})
	z.seal.Write(sum[:])
	z.head = appendLocal(z.head[:0], &e, z.st)
	if _, err := z.cw.Write(z.head); err != nil {
		return err
	}
	_, err := z.cw.Write(comp)
	return err
}

// close writes the central directory, the end records and the seal.
func (z *zipWriter) close() error {
	start := uint64(z.cw.n)
	for i := range z.dir {
		z.head = appendCentral(z.head[:0], &z.dir[i].e, z.st, z.dir[i].offset)
		if _, err := z.cw.Write(z.head); err != nil {
			return err
		}
	}
	z.head = appendEnd(z.head[:0], uint64(len(z.dir)), uint64(z.cw.n)-start, start, sealLen)
	if _, err := z.cw.Write(z.head); err != nil {
		return err
	}
	_, err := io.WriteString(z.cw, seal(z.seal.Sum(nil)))
	return err
}

// size is the length of the archive written.
func (z *zipWriter) size() int64 { return z.cw.n }

// pack reads, checks and compresses the entries on several goroutines and
// hands them to write one at a time, in order. At most a few entries per
// worker wait in memory to be written: a worker starts entry i only once
// the entries before i-window are written (never the next to write, so
// the writer always gets it).
func pack(ctx context.Context, output fs.FS, m *manifest.Manifest, ix *manifest.Indexes, entries []entry, level int, opt Options, write func(*entry, *packed) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	workers := opt.Workers
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, len(entries))
	window := 4 * workers // entries started and not yet written, at most
	var (
		mu      sync.Mutex
		ready   = sync.NewCond(&mu) // an entry packed, or written, or ctx done
		done    = make([]*packed, len(entries))
		written int // entries written
		waiting int // workers waiting for the window
		bufs    = sync.Pool{New: func() any { return new(bytes.Buffer) }}
		wg      sync.WaitGroup
	)
	stop := context.AfterFunc(ctx, func() {
		mu.Lock()
		ready.Broadcast()
		mu.Unlock()
	})
	defer stop()
	wg.Go(func() {
		pool.Run(ctx, len(entries), workers, func() func(context.Context, int) error {
			c := newCompressor(level)
			var buf []byte
			return func(_ context.Context, i int) error {
				mu.Lock()
				for i >= written+window && ctx.Err() == nil {
					waiting++
					ready.Wait()
					waiting--
				}
				mu.Unlock()
				if ctx.Err() != nil {
					return context.Cause(ctx)
				}
				p, err := packEntry(output, m, ix, &entries[i], c, &buf, bufs.Get().(*bytes.Buffer))
				if err != nil {
					cancel(err) // the writer stops too
					return err
				}
				mu.Lock()
				done[i] = p
				ready.Broadcast()
				mu.Unlock()
				return nil
			}
		})
	})
	var err error
	for i := range entries {
		mu.Lock()
		for done[i] == nil && ctx.Err() == nil {
			ready.Wait()
		}
		p := done[i]
		done[i] = nil
		mu.Unlock()
		if p == nil {
			err = context.Cause(ctx)
			break
		}
		if werr := write(&entries[i], p); werr != nil {
			err = fmt.Errorf("writing bundle: %w", werr)
			cancel(err)
			break
		}
		p.comp.Reset()
		bufs.Put(p.comp)
		mu.Lock()
		written = i + 1
		if waiting > 0 {
			ready.Broadcast()
		}
		mu.Unlock()
		if opt.Progress != nil && (i%256 == 255 || i == len(entries)-1) {
			opt.Progress(i+1, len(entries))
		}
	}
	cancel(nil)
	wg.Wait()
	return err
}

// packEntry reads entry e (a page from output, checked against the
// manifest and, a chunk, against the indexes that name it, or its data),
// and compresses it into comp.
func packEntry(output fs.FS, m *manifest.Manifest, ix *manifest.Indexes, e *entry, c compressor, buf *[]byte, comp *bytes.Buffer) (*packed, error) {
	data := e.data
	if e.page >= 0 {
		f := m.Files[e.page]
		var err error
		if data, err = readPage(output, f, buf); err != nil {
			return nil, err
		}
		if err := ix.Fits(f.Path, data); err != nil {
			return nil, fmt.Errorf("%w: %s", err, manifest.UnfitAdvice("bundle"))
		}
	}
	c.Reset(comp)
	if _, err := c.Write(data); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", e.name, err)
	}
	if err := c.Close(); err != nil {
		return nil, fmt.Errorf("compressing %s: %w", e.name, err)
	}
	return &packed{crc: crc32.ChecksumIEEE(data), size: int64(len(data)), comp: comp, sum: sha256.Sum256(comp.Bytes())}, nil
}

// changedAdvice ends the error of a bundle of an output that is not what
// its manifest says.
const changedAdvice = "the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"

// readPage reads the page file f into *buf and checks it against its size
// and SHA-256 in the manifest.
func readPage(output fs.FS, f manifest.File, buf *[]byte) ([]byte, error) {
	data, err := manifest.ReadPage(output, f, *buf)
	var mm *manifest.Mismatch
	if errors.As(err, &mm) {
		return nil, fmt.Errorf("%w: %s", err, changedAdvice)
	}
	if err != nil {
		return nil, err
	}
	*buf = data[:0]
	return data, nil
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// countWriter counts the bytes written through it.
type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}
