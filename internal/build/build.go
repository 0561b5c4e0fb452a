// Package build writes a site's pages to its output folder: atomically,
// incrementally (only files whose bytes changed), with a manifest, and
// never at all when the content or config has errors.
package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// Options say what to build and where.
type Options struct {
	// FS holds the config file, named ConfigName in it. Root is the folder
	// of FS on disk, against which relative content_dir and output_dir are
	// resolved; "" when FS is not on disk (the embedded sample site), in
	// which case content is read from FS and output goes under the
	// current folder.
	FS         fs.FS
	ConfigName string
	Root       string

	OutDir  string // overrides output_dir when set
	BaseURL string // overrides base_url when set (preview links)
	Future  bool   // include articles published after Now
	// Memory keeps the pages out of any folder: the build renders them
	// for OnPage and describes them in Result.Manifest, and writes no file
	// (the live preview without an output folder). Written and Deleted
	// then count the pages that changed or went away.
	Memory bool

	// Now returns the build time: it decides scheduled articles and is
	// recorded in the manifest.
	Now func() time.Time
	// Log receives warnings and notices; nil discards them.
	Log io.Writer
	// Quiet keeps the notices (waiting for another build) out of Log:
	// it gets warnings only.
	Quiet bool
	// Progress, when set, is called from time to time while pages are
	// written, with the pages done so far and the total.
	Progress func(done, total int)
	// Generator names the program in the manifest, e.g. "feedgen 1.0.0".
	Generator string
	// Code identifies the program's code: the Go build ID of its
	// executable, or a release version where none can be read. When set, the manifest records
	// what the pages were made of (Manifest.Source), and a new Builder
	// whose inputs are those stops once it has read and hashed the
	// content, without parsing it. "" turns that off.
	Code string
	// OnPage, when set, is called with each page the build renders (new or
	// changed inputs; pages whose inputs did not change since this
	// Builder's last build are not rendered, and with OnPage set every
	// page of a Builder's first build is): its path, bytes and SHA-256.
	// It is called from several goroutines at once, and data is valid only
	// during the call. The live preview hands pages to its server this way.
	OnPage func(path string, data []byte, sum [sha256.Size]byte)
}

// Result describes a finished build.
type Result struct {
	OutDir    string
	Articles  int
	Drafts    int
	Scheduled int
	Reparsed  int // article files read and parsed (the rest were cached)
	// Skipped is set when the inputs were those the output was built
	// from (Options.Code): no file was parsed, no page rendered.
	Skipped bool

	Pages     int
	Rendered  int // pages rendered (the others were known unchanged)
	Written   int
	Unchanged int
	Deleted   int
	Bytes     int64 // size of all pages
	Estimate  int64 // size computed before writing
	Duration  time.Duration
	Warnings  diag.List
	Manifest  *manifest.Manifest
	// ManifestData is the manifest as written.
	ManifestData []byte
}

// Summary is the one-line report of a build.
func (r *Result) Summary() string {
	var b strings.Builder
	b.WriteString(human.Plural(r.Articles, "article"))
	var left []string
	if r.Drafts > 0 {
		left = append(left, human.Plural(r.Drafts, "draft"))
	}
	if r.Scheduled > 0 {
		left = append(left, strconv.Itoa(r.Scheduled)+" scheduled")
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, " (%s left out)", strings.Join(left, ", "))
	}
	fmt.Fprintf(&b, ", %d pages in %s: %d written, %d unchanged, %d deleted, %s (estimated %s), %s",
		r.Pages, filepath.Join(r.OutDir, listing.Dir), r.Written, r.Unchanged, r.Deleted,
		human.Bytes(r.Bytes), human.Bytes(r.Estimate), r.Duration.Round(time.Millisecond))
	if r.Skipped {
		b.WriteString(", inputs unchanged")
	}
	return b.String()
}

// Builder builds one site, again and again (watch mode): it keeps the
// parsed articles and the last manifest between builds.
type Builder struct {
	opt     Options
	cfgData []byte
	cfg     *config.Config
	loader  *content.Loader
	prev    *manifest.Manifest // manifest of the last build, when it went to the same folder
	prevDir string
	// last is the listing of the last build this Builder wrote: pages whose
	// articles, count and links are the same are not rendered again.
	last *feed.Listing
	// pending and hint carry the changed files of a Rebuild.
	pending []string
	hint    bool
}

// New returns a builder. Call Build to run it.
func New(opt Options) *Builder {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	return &Builder{opt: opt}
}

// Forget drops what the Builder knows of its last build: the next build
// renders every page (for OnPage) and compares its files with the folder.
func (b *Builder) Forget() { b.prev, b.prevDir, b.last = nil, "", nil }

// Config reads and checks the config, as the next build will: errors come
// back as a diag.List.
func (b *Builder) Config() (*config.Config, error) { return b.loadConfig() }

// Rebuild is Build after the files named in changed (paths as the watcher
// gives them) changed, and no others: only those are read again. A nil
// changed means anything may have changed.
func (b *Builder) Rebuild(ctx context.Context, changed []string) (*Result, error) {
	b.pending, b.hint = changed, changed != nil
	defer func() { b.pending, b.hint = nil, false }()
	return b.Build(ctx)
}

// changed turns the paths given to Rebuild into paths inside the content
// folder, or returns nil (check everything) when there was no hint.
func (b *Builder) changed(cfg *config.Config) []string {
	if !b.hint || b.opt.Root == "" {
		return nil
	}
	out := []string{}
	for _, p := range b.pending {
		rel, err := filepath.Rel(cfg.ContentDir, p)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // config.yaml and the like: not content
		}
		out = append(out, filepath.ToSlash(rel))
	}
	return out
}

// Build loads config and content and writes the pages. Content and config
// errors come back as a diag.List and nothing is written.
func (b *Builder) Build(ctx context.Context) (*Result, error) {
	start := time.Now()
	now := b.opt.Now()
	cfg, err := b.loadConfig()
	if err != nil {
		return nil, err
	}
	var contentFS fs.FS
	if b.opt.Root == "" {
		contentFS, err = fs.Sub(b.opt.FS, cfg.ContentDir)
		if err != nil {
			return nil, fmt.Errorf("opening content folder: %w", err)
		}
	} else {
		contentFS = content.DirFS(cfg.ContentDir)
	}
	outDir := cfg.OutputDir
	switch {
	case b.opt.Memory:
		outDir = ""
	case b.opt.OutDir != "":
		outDir = b.opt.OutDir
	}
	// The last build's manifest, needed to write, is read and parsed while
	// the content loads.
	var early func() (*manifest.Snapshot, error)
	if !b.opt.Memory && (b.prev == nil || b.prevDir != outDir) {
		early = sync.OnceValues(func() (*manifest.Snapshot, error) { return readManifest(outDir) })
		go early()
	}
	baseURL := cfg.BaseURL
	if b.opt.BaseURL != "" {
		baseURL = strings.TrimRight(b.opt.BaseURL, "/")
	}
	opts := content.Options{Now: now, Future: b.opt.Future, Root: cfg.ContentDir, Changed: b.changed(cfg)}
	// A new Builder may find the content to be what the folder was built
	// from, if it has a manifest (a cold build reads and parses in one
	// pass); not the preview's first build, which must render every page.
	if early != nil && b.last == nil && b.opt.OnPage == nil && b.opt.Code != "" && exists(filepath.Join(outDir, manifest.Name)) {
		opts.Unchanged = func(digest [sha256.Size]byte) bool {
			last, _ := early()
			return last != nil && b.builtFrom(last.Manifest, baseURL, digest, now)
		}
	}
	site, err := b.load(ctx, contentFS, opts)
	if err != nil {
		return nil, err
	}
	if site.Unchanged {
		res, err := b.unchanged(ctx, outDir, early, baseURL, site.Digest, now)
		if err != nil || res != nil {
			if res != nil {
				res.Duration = time.Since(start)
			}
			return res, err
		}
		// The folder does not hold what its manifest says: build in full.
		opts.Unchanged = nil
		if site, err = b.load(ctx, contentFS, opts); err != nil {
			return nil, err
		}
	}
	listing := feed.Update(b.last, baseURL, cfg.Pagination, site.Articles)
	pages := listing.Pages()

	var estimate int64
	var scratch []byte
	for _, pg := range pages {
		var n int
		n, scratch = listing.PageSize(pg, scratch)
		estimate += int64(n)
	}
	if max := cfg.Pagination.MaxOutputBytes; estimate > max {
		return nil, diag.List{{Path: cfg.Path, Msg: fmt.Sprintf(
			"the output would be %s in %d files, more than pagination.max_output_bytes (%s): use offsets: aligned, fewer limits, or raise max_output_bytes",
			human.Bytes(estimate), len(pages), human.Bytes(max))}}
	}

	res := &Result{
		OutDir: outDir, Articles: len(site.Articles), Drafts: site.Drafts, Scheduled: site.Scheduled,
		Reparsed: site.Reparsed, Pages: len(pages), Estimate: estimate, Warnings: site.Warnings,
	}
	m := &manifest.Manifest{
		Format: manifest.Format, Generator: b.opt.Generator, BuildTime: now.UTC().Truncate(time.Second),
		BaseURL: baseURL, Articles: len(site.Articles),
		Pagination: manifest.Paging{
			DefaultLimit: cfg.Pagination.DefaultLimit, MaxLimit: cfg.Pagination.MaxLimit,
			Limits: cfg.Pagination.Limits, Offsets: cfg.Pagination.Offsets,
		},
	}
	for _, c := range listing.Collections {
		m.Collections = append(m.Collections, manifest.Collection{Dir: c.Dir, Params: c.Params, Count: c.Count()})
	}
	if err := b.write(ctx, outDir, early, site, listing, pages, m, res); err != nil {
		return nil, err
	}
	res.Duration = time.Since(start)
	return res, nil
}

// load loads the content and prints its warnings.
func (b *Builder) load(ctx context.Context, fsys fs.FS, opt content.Options) (*content.Site, error) {
	site, err := b.loader.Load(ctx, fsys, opt)
	if site != nil {
		for _, w := range site.Warnings {
			fmt.Fprintf(b.opt.Log, "warning: %s\n", w)
		}
	}
	return site, err
}

// sourceDigest is Source.Digest: for content of the given digest, built
// with this Builder's code, config and options, into the pages of files.
func (b *Builder) sourceDigest(baseURL string, content [sha256.Size]byte, files []manifest.File) string {
	h := sha256.New()
	fmt.Fprintf(h, "feedgen source 1\n%q\n%q\nfuture=%t\n%d\n", b.opt.Code, baseURL, b.opt.Future, len(b.cfgData))
	h.Write(b.cfgData)
	writeZone(h, b.cfg.Location)
	h.Write(content[:])
	for _, f := range files {
		fmt.Fprintf(h, "%q %d %s\n", f.Path, f.Size, f.SHA256)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// writeZone writes the offsets of loc from 1900 to 2100 to w: the same
// zone name means other local times with other time zone data (a system
// update, ZONEINFO).
func writeZone(w io.Writer, loc *time.Location) {
	end := time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	for t := time.Date(1900, 1, 1, 0, 0, 0, 0, loc); t.Before(end); {
		name, offset := t.Zone()
		fmt.Fprintf(w, "%d %s %d\n", t.Unix(), name, offset)
		_, next := t.ZoneBounds()
		if !next.After(t) {
			break // no change after t
		}
		t = next
	}
}

// builtFrom reports whether m describes a build of the same code, config,
// options and content (whose digest is given) as this one, into pages it
// lists, and whether a build at now lists the same articles.
func (b *Builder) builtFrom(m *manifest.Manifest, baseURL string, content [sha256.Size]byte, now time.Time) bool {
	if m == nil || m.Source == nil {
		return false
	}
	s := m.Source
	return (s.From == nil || !now.Before(*s.From)) && (s.Until == nil || now.Before(*s.Until)) &&
		s.Digest == b.sourceDigest(baseURL, content, m.Files)
}

// source describes the inputs of a build of site into files.
func (b *Builder) source(baseURL string, site *content.Site, files []manifest.File) *manifest.Source {
	s := &manifest.Source{Digest: b.sourceDigest(baseURL, site.Digest, files), Drafts: site.Drafts, Scheduled: site.Scheduled}
	if b.opt.Future {
		return s
	}
	for _, a := range site.Articles {
		if s.From == nil || a.Instant.After(*s.From) {
			t := a.Instant.UTC()
			s.From = &t
		}
	}
	if !site.NextScheduled.IsZero() {
		t := site.NextScheduled.UTC()
		s.Until = &t
	}
	return s
}

// unchanged finishes a build whose inputs are those the manifest of outDir
// records: with the lock held, it checks that the manifest is still one of
// a build of those inputs, that every page it lists is there with its size
// and that no other page is, deletes the temporary files of an interrupted
// build, and reports every page unchanged. It returns nil, and no error,
// when the folder does not hold what the manifest says, for a full build
// to mend.
func (b *Builder) unchanged(ctx context.Context, outDir string, early func() (*manifest.Snapshot, error), baseURL string, content [sha256.Size]byte, now time.Time) (*Result, error) {
	unlock, err := b.lock(ctx, outDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	r := b.lastManifest(outDir, early)
	if r == nil || !b.builtFrom(r.Manifest, baseURL, content, now) {
		return nil, nil // another build replaced it meanwhile
	}
	m := r.Manifest
	res := &Result{
		OutDir: outDir, Articles: m.Articles, Drafts: m.Source.Drafts, Scheduled: m.Source.Scheduled, Skipped: true,
		Pages: len(m.Files), Unchanged: len(m.Files), Manifest: m, ManifestData: r.Data,
	}
	keep := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		if !sizeIs(filepath.Join(outDir, filepath.FromSlash(f.Path)), f.Size) {
			return nil, nil
		}
		keep[f.Path] = true
		res.Bytes += f.Size
	}
	res.Estimate = res.Bytes
	stale, dirs, err := strays(outDir, keep)
	if err != nil {
		return nil, err
	}
	for _, p := range stale {
		if !strings.HasSuffix(p, ".tmp") {
			return nil, nil // a page no build of these inputs wrote
		}
	}
	if _, err := remove(stale, dirs); err != nil {
		return nil, err
	}
	return res, nil
}

// lock takes the lock of the output folder, saying so on the log when it
// waits unless the build is quiet.
func (b *Builder) lock(ctx context.Context, outDir string) (func(), error) {
	notices := b.opt.Log
	if b.opt.Quiet {
		notices = io.Discard
	}
	return lock(ctx, outDir, notices)
}

func (b *Builder) loadConfig() (*config.Config, error) {
	name := b.opt.ConfigName
	if b.opt.Root != "" {
		name = filepath.Join(b.opt.Root, b.opt.ConfigName)
	}
	data, err := fs.ReadFile(b.opt.FS, b.opt.ConfigName)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // named below, with its folder
		}
		return nil, fmt.Errorf("reading config %s: %w", name, err)
	}
	if b.cfg != nil && bytes.Equal(data, b.cfgData) {
		return b.cfg, nil
	}
	cfg, err := config.Parse(name, b.opt.Root, data)
	if err != nil {
		return nil, err
	}
	b.cfg, b.cfgData = cfg, data
	b.loader = content.NewLoader(cfg)
	b.loader.Cache = true
	return cfg, nil
}

// write renders every page of site's listing l and writes those whose
// bytes changed, deletes pages that no longer exist, then writes the
// manifest.
func (b *Builder) write(ctx context.Context, outDir string, early func() (*manifest.Snapshot, error), site *content.Site, l *feed.Listing, pages []feed.Page, m *manifest.Manifest, res *Result) error {
	memory := b.opt.Memory
	prev := b.prev
	if !memory {
		if err := os.MkdirAll(outDir, 0o755); err != nil {
			return fmt.Errorf("creating output folder: %w", err)
		}
		unlock, err := b.lock(ctx, outDir)
		if err != nil {
			return err
		}
		defer unlock()
		if prev == nil || b.prevDir != outDir {
			if r := b.lastManifest(outDir, early); r != nil {
				prev = r.Manifest
			}
		}
	}
	old := make(map[string]manifest.File)
	if prev != nil {
		for _, f := range prev.Files {
			old[f.Path] = f
		}
	}
	// Pages of the last build of this Builder whose inputs did not change
	// are known without rendering them: same count, links and article bytes.
	// A new Builder (a new process) learns which pages are unchanged from
	// the inputs the manifest records, if the same feedgen wrote it; not
	// in memory, and not for OnPage, which must see every page of a
	// Builder's first build (the preview's server holds none yet).
	byInput := !memory && prev != nil && prev.Generator == b.opt.Generator && (b.opt.OnPage == nil || b.last != nil)
	var changes []int
	if last := b.last; last != nil && prev != nil && b.prevDir == outDir && last.BaseURL == l.BaseURL &&
		samePaging(last.Pagination, l.Pagination) && last.Main().Count() == l.Main().Count() {
		changes = l.Main().Changes(last.Main())
	}

	dirs := map[string]bool{}
	for _, pg := range pages {
		dirs[path.Dir(pg.Path)] = true
	}
	for d := range dirs {
		if memory {
			break
		}
		if err := os.MkdirAll(filepath.Join(outDir, filepath.FromSlash(d)), 0o755); err != nil {
			return fmt.Errorf("creating output folder: %w", err)
		}
	}

	files := make([]manifest.File, len(pages))
	var (
		next, done        atomic.Int64
		written, bytesOut atomic.Int64
		rendered          atomic.Int64
		firstErr          error
		errOnce           sync.Once
		wg                sync.WaitGroup
	)
	workers := max(2, 2*runtime.GOMAXPROCS(0))
	total := len(pages)
	finished := func() {
		if n := done.Add(1); b.opt.Progress != nil && (n%256 == 0 || int(n) == total) {
			b.opt.Progress(int(n), total)
		}
	}
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf, name, scratch []byte
			for {
				i := int(next.Add(1) - 1)
				if i >= total || ctx.Err() != nil {
					return
				}
				pg := pages[i]
				name = append(append(name[:0], outDir...), '/')
				name = append(name, pg.Path...)
				if changes != nil {
					// A watcher that names what changed vouches that
					// nothing else did; without it, check the file.
					end := min(pg.Offset+pg.Limit, len(changes)-1)
					if o, ok := old[pg.Path]; ok && (pg.Offset >= end || changes[end]-changes[pg.Offset] == 0) &&
						(memory || b.hint || sizeIs(string(name), o.Size)) {
						files[i] = o
						bytesOut.Add(o.Size)
						finished()
						continue
					}
				}
				var in [sha256.Size]byte
				in, scratch = l.PageInput(pg, scratch)
				input := hex.EncodeToString(in[:])
				if o, ok := old[pg.Path]; ok && byInput && o.Input == input && sizeIs(string(name), o.Size) {
					// Made of the same head and articles as the file
					// the last build wrote: the same bytes.
					files[i] = o
					bytesOut.Add(o.Size)
					finished()
					continue
				}
				rendered.Add(1)
				buf = l.AppendPage(buf[:0], pg)
				sum := sha256.Sum256(buf)
				if b.opt.OnPage != nil {
					b.opt.OnPage(pg.Path, buf, sum)
				}
				f := manifest.File{Path: pg.Path, Size: int64(len(buf)), SHA256: hex.EncodeToString(sum[:]), Input: input}
				files[i] = f
				bytesOut.Add(f.Size)
				o, known := old[pg.Path]
				if known && o.SHA256 == f.SHA256 && o.Size == f.Size && (memory || sizeIs(string(name), f.Size)) {
					// unchanged
				} else if memory || !known && createNew(string(name), buf) {
					written.Add(1)
				} else if err := writeAtomic(string(name), buf); err != nil {
					errOnce.Do(func() { firstErr = err })
					return
				} else {
					written.Add(1)
				}
				finished()
			}
		}()
	}
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res.Written = int(written.Load())
	res.Rendered = int(rendered.Load())
	res.Unchanged = total - res.Written
	res.Bytes = bytesOut.Load()

	keep := make(map[string]bool, len(files))
	for _, f := range files {
		keep[f.Path] = true
	}
	if memory {
		if prev != nil {
			for _, f := range prev.Files {
				if !keep[f.Path] {
					res.Deleted++
				}
			}
		}
	} else if b.last != nil && b.prevDir == outDir && prev == b.prev {
		// This Builder wrote the folder last: its manifest names every
		// file there is to delete.
		for _, f := range prev.Files {
			if !keep[f.Path] {
				if err := os.Remove(filepath.Join(outDir, filepath.FromSlash(f.Path))); err == nil {
					res.Deleted++
				}
			}
		}
	} else {
		deleted, err := sweep(outDir, keep)
		if err != nil {
			return err
		}
		res.Deleted = deleted
	}

	slices.SortFunc(files, func(a, b manifest.File) int { return strings.Compare(a.Path, b.Path) })
	m.Files = files
	if b.opt.Code != "" && len(res.Warnings) == 0 {
		m.Source = b.source(l.BaseURL, site, m.Files)
	}
	if prev != nil && res.Written == 0 && res.Deleted == 0 {
		// Same pages: keep the manifest (and its build time) unless
		// something else in it changed.
		m.BuildTime = prev.BuildTime
	}
	data := m.Marshal()
	if !memory {
		mpath := filepath.Join(outDir, manifest.Name)
		if cur, err := os.ReadFile(mpath); err != nil || !bytes.Equal(cur, data) {
			if err := writeAtomic(mpath, data); err != nil {
				return err
			}
		}
	}
	b.prev, b.prevDir, b.last = m, outDir, l
	res.Manifest, res.ManifestData = m, data
	return nil
}

func samePaging(a, b config.Pagination) bool {
	return a.DefaultLimit == b.DefaultLimit && a.Offsets == b.Offsets && slices.Equal(a.Limits, b.Limits)
}

// readManifest reads the manifest of outDir: nil, and no error, when there
// is none.
func readManifest(outDir string) (*manifest.Snapshot, error) {
	r, err := manifest.Read(os.DirFS(outDir))
	if errors.Is(err, manifest.ErrNoBuild) {
		return nil, nil
	}
	return r, err
}

// lastManifest returns the manifest of outDir, with the build's lock held:
// the one read early, unless the file changed since (another build
// finished meanwhile), in which case it is read again. nil when there is
// none, or it cannot be read (said on the log: every page is rewritten).
func (b *Builder) lastManifest(outDir string, early func() (*manifest.Snapshot, error)) *manifest.Snapshot {
	var r *manifest.Snapshot
	var err error
	if early != nil {
		r, err = early()
	}
	if now, serr := os.Stat(filepath.Join(outDir, manifest.Name)); early == nil || serr != nil || !r.Current(now) {
		r, err = readManifest(outDir)
	}
	if err != nil {
		fmt.Fprintf(b.opt.Log, "warning: %s: %v; every page will be rewritten\n", filepath.Join(outDir, manifest.Name), err)
	}
	return r
}

func exists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

func sizeIs(name string, size int64) bool {
	info, err := os.Stat(name)
	return err == nil && info.Mode().IsRegular() && info.Size() == size
}

// writeAtomic writes data to name through a temporary file in the same
// folder, renamed over name: readers see the old file or the new one,
// never a part.
func writeAtomic(name string, data []byte) error {
	dir, base := filepath.Split(name)
	for try := 0; ; try++ {
		tmp := filepath.Join(dir, "."+base+"."+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(try)+".tmp")
		f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if errors.Is(err, fs.ErrExist) && try < 100 {
			continue
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", name, err)
		}
		_, err = f.Write(data)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(tmp, name)
		}
		if err != nil {
			os.Remove(tmp)
			return fmt.Errorf("writing %s: %w", name, err)
		}
		return nil
	}
}

// sweep deletes every file under outDir/articles that is not a page of this
// build (stale pages, temporary files of an interrupted build), and the
// folders it leaves empty. It returns how many pages it deleted.
func sweep(outDir string, keep map[string]bool) (int, error) {
	files, dirs, err := strays(outDir, keep)
	if err != nil {
		return 0, err
	}
	return remove(files, dirs)
}

// strays lists the files under outDir/articles that are not in keep (paths
// relative to outDir), and every folder there, parents first.
func strays(outDir string, keep map[string]bool) (files, dirs []string, err error) {
	root := filepath.Join(outDir, listing.Dir)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() {
			dirs = append(dirs, p)
			return nil
		}
		rel, err := filepath.Rel(outDir, p)
		if err != nil {
			return err
		}
		if !keep[filepath.ToSlash(rel)] {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("cleaning output folder: %w", err)
	}
	return files, dirs, nil
}

// remove deletes files, then the folders of dirs that are left empty, and
// returns how many files it deleted that were pages, not temporary files.
func remove(files, dirs []string) (int, error) {
	deleted := 0
	for _, p := range files {
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return deleted, fmt.Errorf("deleting stale page: %w", err)
		}
		if !strings.HasSuffix(p, ".tmp") {
			deleted++
		}
	}
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, unless empty
	}
	return deleted, nil
}
