package content

import (
	"cmp"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unicode"

	"github.com/cespare/xxhash/v2"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/diag"
)

// Options control which articles are published.
type Options struct {
	// Now is the build time: articles published later are scheduled and
	// left out unless Future is set.
	Now    time.Time
	Future bool
	// Drafts publishes the articles marked draft: true (a preview of
	// work in progress).
	Drafts bool
	// Root is how the content folder is named in messages, e.g. "content".
	Root string
	// Changed, when not nil, lists the only files and folders
	// (slash-separated, relative to the content folder) that may have
	// changed, been made or been removed since the last Load of a
	// caching Loader: files not among them nor in a folder among them
	// are taken from the cache without a stat, and when every change is
	// a file, the folder is not walked again (see Loader.relist).
	// A watcher that saw every change can say so; nil checks every file.
	Changed []string
	// Unchanged, when set, is asked once every file has been read (or
	// vouched for by Cache) and before any is parsed, with the digest the
	// Site will have: if it says the content is one it already built,
	// Load parses nothing and returns a Site with only Digest, Files,
	// Read and Unchanged set. The bytes read are parsed without reading
	// them again otherwise. A Loader whose cache holds files never asks.
	Unchanged func(Probe) bool
	// Cache, when set, is what a build kept of each file (see Cache): a
	// file whose stamp is the one recorded is not read, and its digest is
	// the one recorded; one whose bytes are those recorded is not parsed
	// when Kept takes the article recorded. A Loader whose Cache field is
	// set ignores it.
	Cache *Cache
	// Kept, when set, is called, from several goroutines at once, with
	// each article taken from Cache instead of parsing its file, and the
	// bytes the build keeps beside it; it returns false when it cannot
	// take it (those bytes are gone), and the file is parsed. Without
	// Kept, every file is parsed (Cache gives digests only).
	Kept func(a *Article, extra []byte) bool
	// FileClock is the clock file systems stamp changes with, time.Now
	// when nil: the Site's WriteCache records the stamp of a file changed
	// shortly before the load began as unknown (see StampSlack).
	FileClock func() time.Time
	// Parsed, when set, is called with each valid article as soon as its
	// file is parsed, from several goroutines at once, before the checks
	// across articles (duplicate ids and URLs), drafts and scheduled ones
	// included. A build that encodes the article there may then Slim it:
	// a site of a million articles need not hold them all at once. A
	// caching Loader calls it only for the files it reads again.
	Parsed func(a *Article)
}

// Site is the outcome of a load.
type Site struct {
	// Articles are the published articles, in no particular order.
	Articles []*Article
	// Warnings are problems that do not stop a build (unknown keys, ...).
	Warnings diag.List
	// Files is the number of article files read; Drafts and Scheduled
	// count the valid articles left out.
	Files     int
	Drafts    int
	Scheduled int
	// Reparsed is how many files were parsed (the rest came from the
	// loader's cache, or Options.Cache); Read how many were read.
	Reparsed int
	Read     int
	// Digest identifies the content: the path and bytes of every article
	// file, drafts and scheduled ones included (see Digest).
	Digest [sha256.Size]byte
	// NextScheduled is the earliest publication instant of the scheduled
	// articles left out, zero when there are none: the build time from
	// which the same content gives another listing.
	NextScheduled time.Time
	// Unchanged is set when Options.Unchanged said the content was
	// already built: the Site holds only Digest, Files and Read.
	Unchanged bool

	// sources are the files loaded, in the order walked (see WriteCache).
	sources []source
}

// Probe is what Load tells Options.Unchanged.
type Probe struct {
	// Digest is the digest the Site will have.
	Digest [sha256.Size]byte
	// Read is how many files were read: those Options.Cache did not
	// vouch for.
	Read int
}

// A Loader loads the articles of one site. It remembers what it parsed, so
// that a later Load re-reads only files whose size or modification time
// changed (watch mode). A Loader is not safe for concurrent use.
type Loader struct {
	cfg   *config.Config
	cache map[string]cached
	// order is the article files of the last Load, in the order its walk
	// found them, when that walk found nothing wrong: with a list of
	// changes, the next Load takes it and the changes instead of walking
	// the folder again (see relist).
	order []string
	walks int   // folder walks: for tests
	keep  int64 // keepLimit, or less in tests
	// Cache enables the per-file cache. A Load with a non-empty cache and
	// no Options.Changed stats every file to find the changed ones.
	Cache bool
}

type cached struct {
	stamp  stamp
	size   int64
	sum    uint64
	result parsed
}

// NewLoader returns a loader for the site configured by cfg.
func NewLoader(cfg *config.Config) *Loader {
	return &Loader{cfg: cfg, cache: map[string]cached{}, keep: keepLimit}
}

// Load reads every article under fsys (the content folder; DirFS for one
// on disk). Errors in content are returned together as a diag.List, sorted
// by path, with a Site that holds only the warnings; any other error is
// returned as it is.
//
// Files are parsed on all cores while the folders are still being walked
// (walk); with Options.Unchanged, once every file has been read and found
// changed (parseKept). The cache then remembers them (remember), and the
// articles are checked across files and sorted into published, drafts and
// scheduled (publish).
func (l *Loader) Load(ctx context.Context, fsys fs.FS, opt Options) (*Site, error) {
	// Asking whether the content is unchanged means reading it all before
	// parsing any: a first pass reads and keeps the bytes.
	ask := opt.Unchanged != nil && len(l.cache) == 0
	clock := opt.FileClock
	if clock == nil {
		clock = time.Now
	}
	// A stamp of a file changed from then on is not to be believed.
	racyFrom := clock().Add(-StampSlack).UnixNano()
	// The files the last walk found, and the changes since: a Load that
	// does not get to remember what it found leaves the next one to walk.
	w, err := l.walk(ctx, fsys, opt, ask)
	l.order = nil
	if err != nil {
		return nil, err
	}
	if ask {
		// A file that could not be read adds an error, and its empty sum
		// matches no build's.
		d := digest(w.files)
		if len(w.errs) == 0 && opt.Unchanged(Probe{Digest: d, Read: int(w.read.Load())}) {
			site := &Site{Files: len(w.files), Read: int(w.read.Load()), Digest: d, Unchanged: true}
			site.sources = sources(w.files, opt, racyFrom)
			return site, nil
		}
		if err := l.parseKept(ctx, fsys, opt, w); err != nil {
			return nil, err
		}
	}
	l.remember(w)
	return publish(w, opt, racyFrom)
}

// sources returns what a Site loaded with opt keeps of files: with the
// article of each file that has one and no warning of its own; for files
// not parsed, what Options.Cache records of them, when they are as it
// says and Options.Kept takes its articles.
func sources(files []*entry, opt Options, racyFrom int64) []source {
	out := make([]source, len(files))
	for i, e := range files {
		out[i] = source{name: e.name, stamp: e.stamp.hash(racyFrom), size: e.size, sum: e.sum}
		switch a := e.art; {
		case a != nil && (e.notes == nil || len(e.notes.warnings) == 0):
			out[i].art, out[i].leftOut = a, leftOut(a, opt) != published
		case a == nil && e.same && e.known.art != nil && opt.Kept != nil:
			out[i].kept = e.known.art
		}
	}
	return out
}

// walked is what walk found: every article file, in the order found,
// with its parse (unless walk only read it), and the errors of the walk.
type walked struct {
	files    []*entry
	read     atomic.Int64 // files read
	reparsed atomic.Int64 // files parsed (the others came from a cache)
	errs     diag.List    // of the walk, and of files that could not be read
	kept     *keptBytes   // with ask: the bytes read, for parseKept
	// clean says that the walk found nothing wrong: no folder it could
	// not read, no file out of place (see list).
	clean bool
}

// walk lists the content folder and reads every file the cache does not
// vouch for, on all cores: parsed at once, or with ask only read (and
// its bytes kept while there is room).
func (l *Loader) walk(ctx context.Context, fsys fs.FS, opt Options, ask bool) (*walked, error) {
	root := opt.Root
	if root == "" {
		root = "content"
	}
	var changed map[string]bool
	if opt.Changed != nil && l.Cache && len(l.cache) > 0 {
		changed = make(map[string]bool, len(opt.Changed))
		for _, c := range opt.Changed {
			changed[c] = true
		}
	}
	// Without a list of changes, a cached file is reused only when a stat
	// says it is unchanged.
	stat := l.Cache && changed == nil && len(l.cache) > 0
	w := &walked{}
	if ask {
		w.kept = &keptBytes{limit: l.keep, data: map[int][]byte{}}
	}
	// The cache a build kept, unless this Loader keeps its own; the
	// articles it records, when they may be taken.
	cache := opt.Cache
	if l.Cache {
		cache = nil
	}
	if cache != nil {
		cache.articles = opt.Kept != nil
	}
	todo := make(chan *entry, 256)
	wg := l.workers(fsys, todo, !ask, opt, w)
	prefix := displayPrefix(root)
	// Entries are made a slab at a time: a site may have a million.
	var slab []entry
	found := func(p string) {
		// One string for both names: a site may have a million of them.
		full := prefix + p
		if len(slab) == cap(slab) {
			slab = make([]entry, 0, 1024)
		}
		slab = append(slab, entry{name: full[len(prefix):], display: full})
		e := &slab[len(slab)-1]
		e.index = len(w.files)
		w.files = append(w.files, e)
		if c, ok := l.cache[e.name]; ok && l.Cache {
			if changed != nil && !underChanged(changed, e.name) {
				e.stamp, e.size, e.sum = c.stamp, c.size, c.sum
				e.set(c.result)
				return
			}
			if stat {
				if st, err := statFile(fsys, e.name); err == nil && st == c.stamp && st.mod != 0 {
					e.stamp, e.size, e.sum = c.stamp, c.size, c.sum
					e.set(c.result)
					return
				}
			}
		}
		if cache != nil {
			e.known, e.hasKnown = cache.find(e.name)
		}
		todo <- e
	}
	var err error
	if names, ok := l.relist(fsys, changed); ok {
		for i, p := range names {
			if i%checkEvery == 0 {
				if err = ctx.Err(); err != nil {
					break
				}
			}
			found(p)
		}
	} else {
		l.walks++
		err = l.list(ctx, fsys, root, &w.errs, found)
	}
	w.clean = err == nil && len(w.errs) == 0
	close(todo)
	wg.Wait()
	return w, err
}

// checkEvery is how many files relist's names are taken between two
// checks of the context.
const checkEvery = 4096

// relist returns the article files of the content folder without
// walking it: those the last walk found (Loader.order), less those
// changed (Options.Changed, a watcher's list) that are gone, with those
// changed that are new. ok is false, and the folder is to be walked,
// when there is no such walk, or when a change is not a plain file the
// walk would take as an article or leave alone (a folder, a link, a file
// out of place), or is there under another name (the same but for
// case, on a file system that ignores it): the walk says what is wrong
// with it, and finds the name it has.
func (l *Loader) relist(fsys fs.FS, changed map[string]bool) (names []string, ok bool) {
	if changed == nil || l.order == nil {
		return nil, false
	}
	var added []string
	// gone are the changes that are gone (files, or folders and what was
	// in them), files those that are files (in place of a folder, maybe).
	gone, files := map[string]bool{}, map[string]bool{}
	// Each change is looked for in its folder, by its exact name: a stat
	// finds a file by another spelling of its name too.
	folders := map[string]map[string]fs.FileMode{}
	for c := range changed {
		if ignoredPath(c) {
			continue // the walk skips it, and what is in it
		}
		dir, name := path.Split(c)
		entries, seen := folders[dir]
		if !seen {
			list, err := fs.ReadDir(fsys, cmp.Or(strings.TrimSuffix(dir, "/"), "."))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return nil, false
			}
			entries = make(map[string]fs.FileMode, len(list))
			for _, e := range list {
				entries[e.Name()] = e.Type()
			}
			folders[dir] = entries
		}
		typ, listed := entries[name]
		switch {
		case !listed:
			if _, err := fs.Stat(fsys, c); err == nil {
				return nil, false // there by another name
			}
			gone[c] = true
			continue
		case !typ.IsRegular():
			return nil, false // a folder, a link
		}
		files[c] = true
		switch {
		case !strings.HasSuffix(c, ".md"):
			// Not an article: the walk leaves it alone.
		case strings.Count(c, "/") != 2:
			return nil, false
		default:
			if _, known := l.cache[c]; !known {
				added = append(added, c)
			}
		}
	}
	names = make([]string, 0, len(l.order)+len(added))
	for _, p := range l.order {
		if !underChanged(gone, p) && !underChanged(files, path.Dir(p)) {
			names = append(names, p)
		}
	}
	for _, p := range added {
		i, found := slices.BinarySearchFunc(names, p, walkCompare)
		if !found {
			names = slices.Insert(names, i, p)
		}
	}
	return names, true
}

// ignoredPath reports whether a part of the slash-separated path p is a
// name the walk skips (Ignored).
func ignoredPath(p string) bool {
	for part := range strings.SplitSeq(p, "/") {
		if Ignored(part) {
			return true
		}
	}
	return false
}

// workers starts a worker per core on the files sent to todo (see work).
func (l *Loader) workers(fsys fs.FS, todo <-chan *entry, parse bool, opt Options, w *walked) *sync.WaitGroup {
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() { l.work(fsys, todo, parse, opt, w) })
	}
	return &wg
}

// parseKept parses the files walk only read, from the bytes it kept or
// read again.
func (l *Loader) parseKept(ctx context.Context, fsys fs.FS, opt Options, w *walked) error {
	todo := make(chan *entry, 256)
	wg := l.workers(fsys, todo, true, opt, w)
	for _, e := range w.files {
		if ctx.Err() != nil {
			break
		}
		if !e.failed {
			todo <- e
		}
	}
	close(todo)
	wg.Wait()
	return ctx.Err()
}

// remember keeps the files of a Load in the cache, for the next one.
func (l *Loader) remember(w *walked) {
	if !l.Cache {
		return
	}
	put := func(m map[string]cached) map[string]cached {
		for _, e := range w.files {
			m[e.name] = cached{stamp: e.stamp, size: e.size, sum: e.sum, result: e.result()}
		}
		return m
	}
	// The cache is written over where it holds the same files and more:
	// a rebuild of the preview, one file changed or new, makes no new map.
	next := l.cache
	if len(next) > len(w.files) {
		next = make(map[string]cached, len(w.files))
	}
	if len(put(next)) != len(w.files) {
		next = put(make(map[string]cached, len(w.files))) // files gone: only those of this Load
	}
	var order []string
	if w.clean {
		order = make([]string, len(w.files))
		for i, e := range w.files {
			order[i] = e.name
		}
	}
	l.cache, l.order = next, order
}

// publish makes the Site of the files parsed: their errors and warnings,
// the checks across articles (slugs, duplicates), and each valid article
// published, or counted as a draft or scheduled.
func publish(w *walked, opt Options, racyFrom int64) (*Site, error) {
	errs := w.errs
	site := &Site{Files: len(w.files), Reparsed: int(w.reparsed.Load()), Read: int(w.read.Load()), Digest: digest(w.files)}
	cand := make([]*Article, 0, len(w.files))
	for _, e := range w.files {
		r := e.result()
		errs = append(errs, r.errs...)
		site.Warnings = append(site.Warnings, r.warnings...)
		a := r.article
		if a == nil {
			continue
		}
		a.Index = e.index // of this Load, for an article from the cache
		if msg, bad := slugProblem(a); msg != "" && bad {
			errs.Add(a.Path, 0, msg)
			continue
		} else if msg != "" {
			site.Warnings.Add(a.Path, 0, msg)
		}
		cand = append(cand, a)
	}
	all := unique(cand, &errs)
	if len(errs) > 0 {
		errs.Sort()
		site.Warnings.Sort()
		return &Site{Warnings: site.Warnings}, errs // the warnings still say something
	}
	site.Warnings.Sort()
	for _, a := range all {
		switch leftOut(a, opt) {
		case draft:
			site.Drafts++
		case scheduled:
			site.Scheduled++
			if site.NextScheduled.IsZero() || a.Instant.Before(site.NextScheduled) {
				site.NextScheduled = a.Instant
			}
		default:
			site.Articles = append(site.Articles, a)
		}
	}
	site.sources = sources(w.files, opt, racyFrom)
	return site, nil
}

// Why an article is left out of a build (leftOut).
const (
	published = iota
	draft
	scheduled
)

// leftOut says whether a is left out of a build of opt: a draft, a
// scheduled article, or not (published).
func leftOut(a *Article, opt Options) int {
	switch {
	case a.Draft && !opt.Drafts:
		return draft
	case !opt.Future && a.Instant.After(opt.Now):
		return scheduled
	}
	return published
}

// underChanged reports whether name, or a folder it is in, is among
// changed: a folder moved in over another reports its path alone.
func underChanged(changed map[string]bool, name string) bool {
	for p := name; p != "." && p != "/"; p = path.Dir(p) {
		if changed[p] {
			return true
		}
	}
	return false
}

// keepLimit bounds the bytes a Load that first asks whether the content
// changed keeps between its two passes; files past it are read again.
const keepLimit = 256 << 20

// work reads the files sent on todo and parses them or, when parse is
// false, keeps their bytes in w.kept (up to its limit) for a second call
// that parses them. Each file's sum is that of the bytes it is parsed from.
// A file the cache of a build records (entry.known) is first stat'ed: one
// whose stamp is the one recorded is not read, and one whose bytes are
// those recorded is not parsed when Options.Kept takes the article the
// cache records. Valid articles parsed are handed to Options.Parsed, when
// set.
func (l *Loader) work(fsys fs.FS, todo <-chan *entry, parse bool, opt Options, w *walked) {
	fp := &fileParser{cfg: l.cfg, md: newMarkdownParser()}
	kept := w.kept
	var buf, arena []byte
	var stats statter
	defer stats.close()
	for e := range todo {
		k := &e.known
		if e.hasKnown && !e.statted {
			e.statted = true
			if st, err := stats.stat(fsys, e.name); err == nil && k.stamp != 0 && st.hash(math.MaxInt64) == k.stamp {
				e.stamp, e.size, e.sum, e.same = st, k.size, k.sum, true
			}
		}
		if parse && e.same && l.take(e, opt) {
			e.known.art = nil // what it records is in the article now
			continue
		}
		if e.same && !parse {
			continue // vouched for: read only if it is to be parsed
		}
		var data []byte
		if parse && kept != nil {
			data = kept.take(e.index)
		}
		if data == nil {
			d, st, err := readFile(fsys, e.name, buf)
			w.read.Add(1)
			if err != nil {
				e.failed = true
				e.set(parsed{errs: diag.List{{Path: e.display, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}}})
				continue
			}
			data, buf, e.stamp = d, d, st
			e.size, e.sum = int64(len(data)), xxhash.Sum64(data)
			if e.hasKnown && !e.same && e.size == k.size && e.sum == k.sum {
				e.same = true // other stamp, same bytes
				if parse && l.take(e, opt) {
					e.known.art = nil
					continue
				}
			}
		}
		if parse {
			// list made sure the name is <section>/<section_slug>/<slug>.md.
			section, rest, _ := strings.Cut(e.name, "/")
			sectionSlug, file, _ := strings.Cut(rest, "/")
			w.reparsed.Add(1)
			e.known.art = nil
			e.set(fp.parse(e.display, section, sectionSlug, strings.TrimSuffix(file, ".md"), data))
			if a := e.art; a != nil {
				a.Index = e.index
				if opt.Parsed != nil {
					opt.Parsed(a)
				}
			}
			continue
		}
		if !kept.room(len(data)) {
			continue
		}
		if len(arena)+len(data) > cap(arena) {
			arena = make([]byte, 0, max(4<<20, len(data)))
		}
		start := len(arena)
		arena = append(arena, data...)
		kept.put(e.index, arena[start:len(arena):len(arena)])
	}
}

// take takes the article the cache of a build records of the file of e,
// whose bytes are the ones recorded, rather than parse it, and reports
// whether it did: when Options.Kept takes it, or when it is left out of
// the build (a draft, a scheduled article), which needs nothing more of
// it. A build that keeps nothing (no Kept) parses every file.
func (l *Loader) take(e *entry, opt Options) bool {
	k := e.known.art
	if k == nil || opt.Kept == nil {
		return false
	}
	a := k.article(l, e)
	if leftOut(a, opt) == published && !opt.Kept(a, k.extra) {
		return false
	}
	e.art = a
	return true
}

// keptBytes holds the bytes of the files a Load's first pass read, by
// entry index, up to limit bytes in all, for its second pass: a file that
// does not fit is read again, and a smaller one after it may still fit.
type keptBytes struct {
	mu    sync.Mutex
	limit int64
	n     int64
	data  map[int][]byte
}

// room reports whether n more bytes may be kept, and counts them if so.
func (k *keptBytes) room(n int) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.n+int64(n) > k.limit {
		return false
	}
	k.n += int64(n)
	return true
}

// put keeps the bytes of the file at index i.
func (k *keptBytes) put(i int, b []byte) {
	k.mu.Lock()
	k.data[i] = b
	k.mu.Unlock()
}

// take returns the bytes kept of the file at index i, nil when none, and
// lets them go.
func (k *keptBytes) take(i int) []byte {
	k.mu.Lock()
	defer k.mu.Unlock()
	b := k.data[i]
	delete(k.data, i)
	return b
}

// entry is one article file: where it is, and once read, its stamp, sum
// and what parsing it gave.
//
// A site may have a million: an entry holds no more than a Load needs.
type entry struct {
	name    string // path in fsys: <section>/<section_slug>/<slug>.md
	index   int    // in the order walked (Article.Index)
	display string // as messages name it: root/name, of which name is the tail
	stamp   stamp
	size    int64  // length of the bytes
	sum     uint64 // xxhash of the bytes
	failed  bool   // could not be read
	// art and notes are what parsing it gave: its article, when valid,
	// and its errors and warnings, when it has any (see set).
	art   *Article
	notes *parsed
	// known is what the cache of a build records of the file, if
	// hasKnown; statted says its stamp was compared with it, and same
	// that the file is as recorded (its stamp, or its bytes).
	known    known
	hasKnown bool
	statted  bool
	same     bool
}

// set records r, what parsing the file gave.
func (e *entry) set(r parsed) {
	e.art, e.notes = r.article, nil
	if len(r.errs) > 0 || len(r.warnings) > 0 {
		e.notes = &parsed{errs: r.errs, warnings: r.warnings}
	}
}

// result returns what parsing the file gave.
func (e *entry) result() parsed {
	r := parsed{article: e.art}
	if e.notes != nil {
		r.errs, r.warnings = e.notes.errs, e.notes.warnings
	}
	return r
}

// displayPrefix returns what messages put before the path of a file in
// the content folder root: path.Join(root, p) is displayPrefix(root) + p
// for p clean and relative as a walk gives it.
func displayPrefix(root string) string {
	prefix := path.Clean(root) + "/"
	if prefix == "./" {
		prefix = ""
	}
	return prefix
}

// list walks fsys for article files, in lexical order, and calls found
// with the path of each in fsys. Files in the wrong place and broken
// links are added to errs.
func (l *Loader) list(ctx context.Context, fsys fs.FS, root string, errs *diag.List, found func(p string)) error {
	prefix := displayPrefix(root)
	display := func(p string) string { return prefix + p }
	return fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return fmt.Errorf("reading content folder %s: %w", root, err)
			}
			errs.Add(display(p), 0, fmt.Sprintf("cannot read: %v", unwrapPath(err)))
			return nil
		}
		if p == "." {
			return nil
		}
		name := d.Name()
		if Ignored(name) {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return ctx.Err()
		}
		typ := d.Type()
		if typ&fs.ModeSymlink != 0 {
			info, err := fs.Stat(fsys, p)
			switch {
			case errors.Is(err, syscall.ELOOP):
				errs.Add(display(p), 0, "symbolic link loop: the link points back to itself; remove or fix it")
				return nil
			case err != nil:
				errs.Add(display(p), 0, fmt.Sprintf("broken symbolic link: %v", unwrapPath(err)))
				return nil
			case info.IsDir():
				errs.Add(display(p), 0, "symbolic link to a folder: folders are not followed (they can loop); move the folder here or link its files one by one")
				return nil
			}
			typ = info.Mode().Type()
		}
		if !strings.HasSuffix(name, ".md") {
			return nil
		}
		if !typ.IsRegular() {
			errs.Add(display(p), 0, fmt.Sprintf("not a regular file (%s): an article is a plain file; remove it or rename it without .md", typ))
			return nil
		}
		if strings.Count(p, "/") != 2 {
			errs.Add(display(p), 0, "article outside a category folder: put it at "+root+"/<section>/<section_slug>/<slug>.md")
			return nil
		}
		found(p)
		return nil
	})
}

// slugProblem says what is wrong with the URL an article's file name
// makes: bad when a character cannot stand in a URL path as it is (the
// listing writes URLs as they are), else a warning for a URL that works
// but surprises (white space, capitals). "" when it is fine.
func slugProblem(a *Article) (msg string, bad bool) {
	for _, r := range a.Slug {
		switch {
		case r < 0x20 || r == 0x7f || strings.ContainsRune("?#%\"<>\\^`{|}", r):
			return fmt.Sprintf("file name makes an invalid URL %s: %q cannot stand in a URL; rename the file with letters, digits and -", a.URL, r), true
		}
	}
	for _, r := range a.Slug {
		switch {
		case unicode.IsSpace(r):
			return fmt.Sprintf("file name makes a URL with white space, %s: rename the file with - instead", a.URL), false
		case unicode.IsUpper(r):
			return fmt.Sprintf("file name makes a URL with capitals, %s: most sites use lowercase URLs", a.URL), false
		}
	}
	return "", false
}

// unwrapPath drops the path from a *fs.PathError: messages name the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Sort orders articles as the listing does (Before): newest first, ties
// by id descending. Times are compared as instants, without the monotonic
// clock readings Before would use if both had one (parsed times have
// none). It sorts their keys, side by side in memory, rather than follow
// a pointer to two articles for each comparison: a million are sorted in
// a fraction of the time.
func Sort(articles []*Article) {
	type key struct {
		sec  int64
		nsec int
		id   int64
		a    *Article
	}
	keys := make([]key, len(articles))
	for i, a := range articles {
		keys[i] = key{a.Published.Unix(), a.Published.Nanosecond(), a.ID, a}
	}
	slices.SortFunc(keys, func(x, y key) int {
		if c := cmp.Compare(y.sec, x.sec); c != 0 {
			return c
		}
		if c := cmp.Compare(y.nsec, x.nsec); c != 0 {
			return c
		}
		return cmp.Compare(y.id, x.id)
	})
	for i, k := range keys {
		articles[i] = k.a
	}
}
