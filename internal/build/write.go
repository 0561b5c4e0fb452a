package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/feedgen/feedgen/internal/pool"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// pageWriter writes the pages of one build to its output: what the steps
// of write share.
type pageWriter struct {
	b     *Builder
	out   output
	site  *content.Site
	l     *feed.Listing // the listing of site
	pages []feed.Page   // l's pages
	m     *manifest.Manifest
	res   *Result
	// lw writes the files of the build's layout; pages are those it
	// renders. The chunks layout's (chunks.go) has none, and its plan
	// sets chunks.
	lw     layoutWriter
	chunks *chunkPlan
	// keepSources, when set, writes the cache of the build's sources
	// into the output folder (see sourcesName), once the manifest is.
	keepSources func(dir string) error

	// Learnt by plan from the last build's manifest, prev.
	prev    *manifest.Manifest
	old     map[string]manifest.File   // prev's pages by path
	changes map[*feed.Collection][]int // the watcher's change counts of each collection; none when unknown
	byInput bool                       // pages may be kept by the input prev records

	files                         []manifest.File // what pages[i] became
	feedFiles                     []manifest.File // what the feeds became (feeds.go)
	done, written, rendered, size atomic.Int64
	repaired                      atomic.Int64 // of written: the same bytes as the last build's (see repairs)

	// The pages are done in order (see feed.Listing.Order): pages[order[k]]
	// is the k-th; the first low of them, and those marked finished, are
	// done.
	order    []int
	orderMu  sync.Mutex
	low      int
	finished []bool
}

// write renders every page and writes those whose bytes changed, deletes
// the pages that no longer exist, then writes the manifest.
func (w *pageWriter) write(ctx context.Context) error {
	_, release, err := w.out.open(ctx, func(prev *manifest.Manifest) ([]string, error) {
		paths, err := w.lw.plan(ctx, w, prev)
		return append(paths, w.feedPaths()...), err
	})
	if err != nil {
		return err
	}
	defer release()
	if err := w.lw.write(ctx, w); err != nil {
		return err
	}
	if err := w.writeFeeds(ctx); err != nil {
		return err
	}
	w.files = append(w.files, w.feedFiles...)
	if err := w.deleteStale(ctx); err != nil {
		return err
	}
	w.b.step("deleted")
	data, err := w.writeManifest()
	if err != nil {
		return err
	}
	w.b.step("manifest")
	if dir := w.out.fsDir(); dir != "" {
		if err := w.lw.keepInputs(w, dir); err != nil {
			return err
		}
		if w.keepSources != nil {
			if err := w.keepSources(dir); err != nil {
				return err
			}
		}
	}
	if err := w.out.finish(); err != nil {
		return err
	}
	b := w.b
	b.prev, b.prevDir, b.last = w.m, w.out.dir(), w.l
	w.res.Manifest, w.res.ManifestData = w.m, data
	return nil
}

// plan learns from the last build's manifest which pages may be kept
// without rendering them.
func (w *pageWriter) plan(prev *manifest.Manifest) {
	b, l := w.b, w.l
	w.prev = prev
	w.old = make(map[string]manifest.File)
	if prev != nil {
		for _, f := range prev.Files {
			w.old[f.Path] = f
		}
	}
	// Pages of the last build of this Builder whose inputs did not change
	// are known without rendering them: same count, links and article bytes.
	// A new Builder (a new process) learns which pages are unchanged from
	// the inputs the manifest records, if the same feedgen wrote it; not
	// in memory, and not for OnPage, which must see every page of a
	// Builder's first build (the preview's server holds none yet).
	// After a build that did not finish, every page is rendered and
	// compared with the bytes on disk: the dead build may have replaced
	// any of them.
	intact := w.out.intact()
	w.byInput = intact && w.out.byInput() && prev != nil && prev.Generator == b.opt.Generator && (b.opt.OnPage == nil || b.last != nil)
	if last := b.last; intact && last != nil && prev != nil && b.prevDir == w.out.dir() && last.BaseURL == l.BaseURL &&
		samePaging(last.Pagination, l.Pagination) {
		// A collection of the same folder and count as one of the last
		// build: its pages whose articles are the same bytes are the same.
		w.changes = make(map[*feed.Collection][]int, len(l.Collections))
		before := last.ByDir()
		for _, c := range l.Collections {
			if lc := before[c.Dir]; lc != nil && lc.Count() == c.Count() {
				w.changes[c] = c.Changes(lc)
			}
		}
	}
	w.files = make([]manifest.File, len(w.pages))
}

func samePaging(a, b listing.Pagination) bool {
	return a.DefaultLimit == b.DefaultLimit && a.Offsets == b.Offsets && slices.Equal(a.Limits, b.Limits)
}

// run does every page with a pool of goroutines, then counts them in the
// Result. It stops at the first error.
func (w *pageWriter) run(ctx context.Context) error {
	w.order = w.l.Order(w.pages)
	w.finished = make([]bool, len(w.pages))
	err := pool.Run(ctx, len(w.pages), pool.Size(2), func() func(context.Context, int) error {
		var s scratch
		return func(_ context.Context, k int) error {
			if err := w.page(w.order[k], &s); err != nil {
				return err
			}
			w.finish(k)
			return nil
		}
	})
	if err != nil {
		return err
	}
	res := w.res
	res.Written = int(w.written.Load())
	res.Repaired = int(w.repaired.Load())
	res.Rendered = int(w.rendered.Load())
	res.Unchanged = len(w.pages) - res.Written
	res.Bytes = w.size.Load()
	return nil
}

// scratch is the memory of one worker, used again for every page.
type scratch struct {
	input []byte // for Listing.PageInput
	page  []byte // the page rendered
}

// finish counts the k-th page in order done, releases what the pages
// before the first not done read (see feed.Listing.Release), and reports
// the progress now and then.
func (w *pageWriter) finish(k int) {
	w.orderMu.Lock()
	w.finished[k] = true
	low := w.low
	for w.low < len(w.order) && w.finished[w.low] {
		w.low++
	}
	if w.low != low {
		if w.low < len(w.order) {
			w.l.Release(w.pages[w.order[w.low]])
		} else {
			w.l.ReleaseAll()
		}
	}
	w.orderMu.Unlock()
	total := len(w.pages)
	if n := w.done.Add(1); w.b.opt.Progress != nil && (n%256 == 0 || int(n) == total) {
		w.b.opt.Progress(int(n), total)
	}
}

// page decides what becomes of pages[i] and does it.
func (w *pageWriter) page(i int, s *scratch) error {
	pg := w.pages[i]
	f, st, err := w.decide(pg, s)
	if err != nil {
		return err
	}
	w.files[i] = f
	w.size.Add(f.Size)
	switch st {
	case create:
		err = w.out.create(pg.Path, s.page)
	case rewrite:
		err = w.out.rewrite(pg.Path, s.page)
	default:
		return nil
	}
	if err != nil {
		return err
	}
	w.written.Add(1)
	w.b.step("page")
	return nil
}

// A step is what becomes of a page.
type step int

const (
	keepCounted step = iota // kept unrendered: the watcher's change counts say none of its articles changed
	keepInput               // kept unrendered: the last build's manifest records the same input for it
	unchanged               // rendered into the bytes the last build wrote
	create                  // rendered, and new: the last build had no such page
	rewrite                 // rendered into other bytes than the last build's
)

// decide says what becomes of page pg and returns its manifest entry: the
// last build's when it is kept unrendered; otherwise pg is rendered into
// s.page and handed to OnPage. The only error is that of reading the
// articles the page is made of, when they are kept in a file.
func (w *pageWriter) decide(pg feed.Page, s *scratch) (manifest.File, step, error) {
	o, known := w.old[pg.Path]
	// A watcher that names what changed vouches that nothing else did;
	// without it, check the file.
	if known && w.counted(pg) && (w.b.hint || w.out.has(o)) {
		return o, keepCounted, nil
	}
	var in [sha256.Size]byte
	in, s.input = w.l.PageInput(pg, s.input)
	input := hex.EncodeToString(in[:])
	if known && w.byInput && o.Input == input && w.out.has(o) {
		// Made of the same head and articles as the file the last build
		// wrote: the same bytes.
		return o, keepInput, nil
	}
	w.rendered.Add(1)
	var err error
	if s.page, err = w.l.AppendPage(s.page[:0], pg); err != nil {
		return manifest.File{}, 0, err
	}
	sum := sha256.Sum256(s.page)
	if w.b.opt.OnPage != nil {
		w.b.opt.OnPage(pg.Path, s.page, sum)
	}
	f := manifest.File{Path: pg.Path, Size: int64(len(s.page)), SHA256: hex.EncodeToString(sum[:]), Input: input}
	switch {
	case known && w.repairs(o, f):
		return f, rewrite, nil
	case known && o.SHA256 == f.SHA256 && o.Size == f.Size:
		return f, unchanged, nil
	case known:
		return f, rewrite, nil
	}
	return f, create, nil
}

// repairs reports whether f, the bytes the last build wrote as o, is to
// be written again because the file is not as that build left it
// (changed or damaged since, at the same size or not: see output.has),
// and counts it.
func (w *pageWriter) repairs(o, f manifest.File) bool {
	if o.SHA256 != f.SHA256 || o.Size != f.Size || w.out.has(f) {
		return false
	}
	w.repaired.Add(1)
	return true
}

// counted reports whether the watcher's change counts say that none of
// the articles of pg changed since the last build.
func (w *pageWriter) counted(pg feed.Page) bool {
	n := w.changes[pg.Coll]
	if n == nil {
		return false
	}
	end := min(pg.Offset+pg.Limit, len(n)-1)
	return pg.Offset >= end || n[end]-n[pg.Offset] == 0
}

// deleteStale deletes the pages of the last build that this one does not
// have.
func (w *pageWriter) deleteStale(ctx context.Context) error {
	keep := make(map[string]bool, len(w.files))
	for _, f := range w.files {
		keep[f.Path] = true
	}
	var err error
	w.res.Deleted, err = w.out.removeStale(ctx, w.prev, keep)
	return err
}

// writeManifest completes the manifest with the pages and what they were
// made of, and writes it. The build time stays the last build's when no
// page changed.
func (w *pageWriter) writeManifest() ([]byte, error) {
	m, res := w.m, w.res
	slices.SortFunc(w.files, func(a, b manifest.File) int { return strings.Compare(a.Path, b.Path) })
	m.Files = w.files
	if w.b.opt.Code != "" && len(res.Warnings) == 0 {
		m.Source = w.b.source(w.site)
	}
	if w.prev != nil && res.Written == res.Repaired && res.Deleted == 0 {
		// Same pages (some written again as they were): keep the
		// manifest (and its build time) unless something else in it
		// changed.
		m.BuildTime = w.prev.BuildTime
	}
	if m.Source != nil {
		// Sealed last: the digest covers every other byte written.
		m.Source.Digest = w.b.sourceDigest(w.l.BaseURL, w.site.Digest, m.Marshal())
	}
	data := m.Marshal()
	return data, w.out.writeManifest(data, res.Repaired > 0)
}
