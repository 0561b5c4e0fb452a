// Package build writes a site's pages to its output folder: atomically,
// incrementally (only files whose bytes changed), with a manifest, and
// never at all when the content or config has errors.
//
// The files: build.go runs a build (Options, Builder, config and
// manifest loading); layouts.go has the writer of each layout (pages,
// chunks: all a build does that depends on its layout); write.go decides
// and writes each page with a pool of goroutines, then deletes stale
// pages and writes the manifest; chunks.go writes the chunks layout;
// output.go is where pages go, a folder or memory; shortcut.go skips a
// build whose inputs the manifest records; folder.go has the helpers
// that look at and clean the output folder; result.go the Result.
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
	"path/filepath"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
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
	Drafts  bool   // include articles marked draft: true
	// Strict makes warnings errors: a build with any writes nothing.
	Strict bool
	// Clean deletes the files under the output folder's articles/ that no
	// build of feedgen wrote (no manifest of the folder lists them):
	// without it, a build that finds any refuses, and changes nothing.
	Clean bool
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

	// leaves, when set, cuts indexes into leaves of these sizes instead
	// of chunk.DefaultSizes' (tests: many leaves from few articles).
	leaves *chunk.Sizes
}

// Builder builds one site, again and again (the live preview, watch
// mode): it keeps the parsed articles, the last listing and the last
// manifest between builds, so that a build after a change reads, parses
// and renders only what the change touched. Run builds once instead.
type Builder struct {
	opt Options
	// once is set by Run: the build keeps nothing for a next build, and
	// bounds its memory instead (see Run).
	once    bool
	cfgData []byte
	cfgSum  string // hex SHA-256 of cfgData
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
	// onStep, set by tests only, is called where a build may die: after
	// each page written ("page", from several goroutines), after the stale
	// pages are deleted ("deleted"), after the manifest is written
	// ("manifest").
	onStep func(what string)
	// writeBehindAfter is how many bytes of new pages a build that bounds
	// its memory writes before it writes the rest behind (see
	// writeBehind); tests lower it.
	writeBehindAfter int64
	// noSources makes a build read and parse every file, as without a
	// cache of its sources (see sourcesName): set for the build made
	// again when the store of that cache turns out damaged.
	noSources bool
	// fileClock, set by tests only, is content.Options.FileClock.
	fileClock func() time.Time
}

// step calls onStep.
func (b *Builder) step(what string) {
	if b.onStep != nil {
		b.onStep(what)
	}
}

// Run builds the site once (feedgen build), keeping nothing for a next
// build and bounding its memory instead: each article is encoded as soon
// as it is parsed and its parsed values dropped, and the encoded articles
// are kept in a temporary file beside the output folder rather than in
// memory (see feed.Spill), so that a site of a million articles builds in
// well under 2 GB. With Options.Memory or OnPage (the preview's) it
// builds as a Builder's first build does.
func Run(ctx context.Context, opt Options) (*Result, error) {
	b := New(opt)
	b.once = true
	return b.Build(ctx)
}

// New returns a builder. Call Build to run it.
func New(opt Options) *Builder {
	if opt.Now == nil {
		opt.Now = time.Now
	}
	if opt.Log == nil {
		opt.Log = io.Discard
	}
	return &Builder{opt: opt, writeBehindAfter: writeBehindAfter}
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
		if err != nil {
			continue
		}
		rel = filepath.ToSlash(rel)
		if rel == "." || rel == ".." || strings.HasSuffix(rel, "/..") {
			// The content folder itself, or a folder it is in: replaced
			// by another (mv new content), so anything may have changed.
			return nil
		}
		if strings.HasPrefix(rel, "../") {
			continue // config.yaml and the like: not content
		}
		out = append(out, rel)
	}
	return out
}

// Build loads config and content and writes the pages. Content and config
// errors come back as a diag.List and nothing is written.
func (b *Builder) Build(ctx context.Context) (*Result, error) {
	start := time.Now()
	res, err := b.build(ctx, start)
	var damaged *storeDamaged
	if errors.As(err, &damaged) && !b.noSources && ctx.Err() == nil {
		// Found before any file made of it was written: built again
		// from the content.
		fmt.Fprintf(b.opt.Log, "warning: %s: %s (by hand, or on a bad disk): not believed, every article is parsed again\n", damaged.store, damaged.err.Error())
		b.noSources = true
		defer func() { b.noSources = false }()
		res, err = b.build(ctx, start)
	}
	return res, err
}

// storeDamaged is the error of a build that found the store of the
// articles' JSON of its output folder (see encodedName) damaged.
type storeDamaged struct {
	store string // as the output folder is given
	err   *feed.StoreError
}

func (e *storeDamaged) Error() string { return e.store + ": " + e.err.Error() }
func (e *storeDamaged) Unwrap() error { return e.err }

// build is Build, started at start.
func (b *Builder) build(ctx context.Context, start time.Time) (*Result, error) {
	r, err := b.begin(ctx)
	if err != nil {
		return nil, err
	}
	defer r.closeSpill()
	site, res, err := r.load(ctx)
	if err != nil || res != nil {
		if res != nil {
			res.Duration = time.Since(start)
		}
		return res, err
	}
	l, err := r.listing(site)
	if err != nil {
		return nil, err
	}
	lw := writerOf(r.cfg.Pagination)
	pages := lw.pages(l)
	estimate, err := r.size(l, pages, len(site.Articles))
	if err != nil {
		return nil, err
	}
	res = &Result{
		OutDir: r.out.dir(), Articles: len(site.Articles), Drafts: site.Drafts, Scheduled: site.Scheduled,
		NextScheduled: site.NextScheduled,
		Reparsed:      site.Reparsed, Read: site.Read, Pages: len(pages), Estimate: estimate, Warnings: site.Warnings,
	}
	w := &pageWriter{b: b, out: r.out, site: site, l: l, pages: pages, m: r.manifest(site, l), res: res, lw: lw}
	if b.lean() {
		w.keepSources = func(dir string) error { return r.keepSources(dir, l, site) }
	}
	if err := w.write(ctx); err != nil {
		if se := (*feed.StoreError)(nil); errors.As(err, &se) {
			return nil, &storeDamaged{store: filepath.Join(r.out.dir(), encodedName), err: se}
		}
		return nil, err
	}
	if r.spill != nil {
		b.last = nil // its articles are in the spill's files
	}
	res.Duration = time.Since(start)
	return res, nil
}

// buildRun is what the steps of one Build share.
type buildRun struct {
	b       *Builder
	cfg     *config.Config
	content fs.FS // the content folder
	out     output
	baseURL string    // the config's, or Options.BaseURL
	now     time.Time // the build's time (Options.Now)
	opts    content.Options
	// spill keeps the articles encoded in a file, in a build that bounds
	// its memory (see Run); nil in others.
	spill *feed.Spill
	// src is the cache of sources the last build kept, read from srcFile
	// (see openSources); nil when there is none to read.
	src     *sources
	srcFile *os.File
}

// begin reads the config, finds the content and output folders, and
// readies the content's loading.
func (b *Builder) begin(ctx context.Context) (*buildRun, error) {
	r := &buildRun{b: b, now: b.opt.Now()}
	var err error
	if r.cfg, err = b.loadConfig(); err != nil {
		return nil, err
	}
	if r.content, err = b.contentFS(r.cfg); err != nil {
		return nil, err
	}
	if err := b.checkOutDir(r.cfg); err != nil {
		return nil, err
	}
	r.out = b.output(ctx, r.cfg)
	r.baseURL = r.cfg.BaseURL
	if b.opt.BaseURL != "" {
		r.baseURL = strings.TrimRight(b.opt.BaseURL, "/")
	}
	changed := b.changed(r.cfg)
	b.hint = changed != nil // a replaced content folder vouches for nothing
	r.opts = content.Options{Now: r.now, Future: b.opt.Future, Drafts: b.opt.Drafts, Root: r.cfg.ContentDir, Changed: changed, FileClock: b.fileClock}
	if err := r.newSpill(); err != nil {
		return nil, err
	}
	r.shortcut()
	return r, nil
}

// newSpill starts the spill of a build that bounds its memory (closing
// one started before): every article parsed goes there, and is slimmed.
func (r *buildRun) newSpill() error {
	if !r.b.lean() {
		return nil
	}
	r.closeSpill()
	spill, err := feed.NewSpill(spillDir(r.out.fsDir()))
	if err != nil {
		return err
	}
	r.spill = spill
	if direct := layout.Of(r.cfg.Pagination).Assembled; direct {
		// Only the chunks that changed are rendered: their articles
		// are read where they are.
		spill.PreferDirect()
	}
	keep := listing.Reads(r.cfg.Filters)
	if r.cfg.Feeds != nil {
		keep |= listing.FieldTags // an item's categories
	}
	r.opts.Parsed = func(a *content.Article) {
		spill.Add(a)
		a.Slim(keep)
	}
	r.openSources()
	return nil
}

func (r *buildRun) closeSpill() {
	r.closeSources()
	if r.spill != nil {
		r.spill.Close()
		r.spill = nil
	}
}

// shortcut lets a new Builder find the content to be what the folder was
// built from, if it has a manifest (a cold build reads and parses in one
// pass); not the preview's first build, which must render every page.
func (r *buildRun) shortcut() {
	b, fsDir, early := r.b, r.out.fsDir(), r.out.early()
	if early != nil && b.last == nil && b.opt.OnPage == nil && b.opt.Code != "" &&
		exists(filepath.Join(fsDir, manifest.Name)) && !outdir.Marked(fsDir) {
		r.opts.Unchanged = func(p content.Probe) bool {
			last, _ := early()
			return last != nil && b.builtFrom(last, r.baseURL, p.Digest, r.now)
		}
	}
}

// load loads the content. When it is what the folder was built from (see
// shortcut), it returns the Result of the build that keeps every file
// instead, unless the folder does not hold what its manifest says: then
// it loads the content again, in full.
func (r *buildRun) load(ctx context.Context) (*content.Site, *Result, error) {
	b := r.b
	site, err := b.load(ctx, r.content, r.opts)
	r.sourcesDamage()
	if err != nil || !site.Unchanged {
		return site, nil, err
	}
	var keep func(dir string) error
	if site.Read > 0 && r.spill != nil && b.opt.Code != "" {
		// Files read that the cache did not vouch for (touched, copied,
		// new to it): recorded, so that the next build does not read
		// them, with what the cache had of their articles.
		var tag []byte
		if r.src != nil && r.src.articles {
			tag = r.src.cache.Tag()
		}
		keep = func(dir string) error { return r.writeSources(dir, site, tag, nil) }
	}
	res, err := b.unchanged(ctx, r.out.dir(), r.out.fsDir(), r.out.early(), r.baseURL, site.Digest, r.now, keep)
	if res != nil {
		res.Read = site.Read
	}
	if err != nil || res != nil {
		return nil, res, err
	}
	// The folder does not hold what its manifest says: build in full.
	r.opts.Unchanged = nil
	if err := r.newSpill(); err != nil {
		return nil, nil, err
	}
	site, err = b.load(ctx, r.content, r.opts)
	return site, nil, err
}

// listing orders the articles of site into the listing: from the spill's
// file, or updating the last build's.
func (r *buildRun) listing(site *content.Site) (*feed.Listing, error) {
	cfg := r.cfg
	if r.spill != nil {
		return r.spill.Listing(r.baseURL, cfg.Pagination, cfg.Filters, site.Articles)
	}
	return feed.Update(r.b.last, r.baseURL, cfg.Pagination, cfg.Filters, site.Articles), nil
}

// size returns the size of the output (OutputSize), or an error when it
// is more than the config allows; past half of that, it warns.
func (r *buildRun) size(l *feed.Listing, pages []feed.Page, articles int) (int64, error) {
	estimate, err := checkSize(r.cfg, l, pages)
	if err != nil {
		return 0, err
	}
	if w := SizeWarning(r.cfg, articles, estimate); w != "" {
		fmt.Fprintf(r.b.opt.Log, "warning: %s\n", w)
	}
	return estimate, nil
}

// manifest starts the manifest of the build: all but its files and
// source, which writing the files sets.
func (r *buildRun) manifest(site *content.Site, l *feed.Listing) *manifest.Manifest {
	m := &manifest.Manifest{
		Format: manifest.Format, Generator: r.b.opt.Generator, BuildTime: r.now.UTC().Truncate(time.Second),
		BaseURL: r.baseURL, Articles: len(site.Articles),
		Pagination:    r.cfg.Pagination,
		Filters:       r.cfg.Filters,
		ConfigSHA256:  r.b.cfgSum,
		ContentSHA256: hex.EncodeToString(site.Digest[:]),
	}
	for _, c := range l.Collections {
		m.Collections = append(m.Collections, manifest.Collection{Dir: c.Dir, Params: c.Params, Count: c.Count()})
	}
	return m
}

// lean reports whether a build bounds its memory (Run).
func (b *Builder) lean() bool {
	return b.once && !b.opt.Memory && b.opt.OnPage == nil
}

// spillDir is where a build keeps its encoded articles: beside the output
// folder, on the disk the pages go to (the output folder itself may not
// exist yet, and a failed build must not create it); the system's
// temporary folder when that folder is missing.
func spillDir(outDir string) string {
	dir := filepath.Dir(outDir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return ""
	}
	return dir
}

// checkOutDir refuses an output folder that is the content folder, lies
// inside it or holds it (see config.CheckOutputDir).
func (b *Builder) checkOutDir(cfg *config.Config) error {
	if b.opt.Memory || b.opt.Root == "" {
		return nil // no folder, or content that is not on disk
	}
	dir := cfg.OutputDir
	if b.opt.OutDir != "" {
		dir = b.opt.OutDir
	}
	return cfg.CheckOutputDir(dir)
}

// contentFS returns the content folder: in FS when it is not on disk.
func (b *Builder) contentFS(cfg *config.Config) (fs.FS, error) {
	if b.opt.Root != "" {
		if err := cfg.CheckContentDir(); err != nil {
			return nil, err
		}
		return content.DirFS(cfg.ContentDir), nil
	}
	fsys, err := fs.Sub(b.opt.FS, cfg.ContentDir)
	if err != nil {
		return nil, fmt.Errorf("opening content folder: %w", err)
	}
	return fsys, nil
}

// OutputSize returns the bytes and files of the output of the listing l
// with pages, computed without rendering them: the pages' sizes, and
// those of the files the layout writes besides (in the chunks layout,
// which has no pages, the chunks and each collection's index: see
// chunksWriter.extraSize).
func OutputSize(cfg *config.Config, l *feed.Listing, pages []feed.Page) (bytes int64, files int) {
	var scratch []byte
	for _, pg := range pages {
		var n int
		n, scratch = l.PageSize(pg, scratch)
		bytes += int64(n)
	}
	extra, more, scratch := writerOf(cfg.Pagination).extraSize(l, scratch)
	fb, ff, _ := feedSize(cfg, l, scratch)
	return bytes + extra + fb, len(pages) + more + ff
}

// SizeWarning returns, when estimate, the size of the output of articles
// under cfg, is more than half of pagination.max_output_bytes, what to
// know before a build is refused: the size and the limit, the number of
// articles at which a build will be refused, and what to change in the
// config; "" otherwise.
//
// The output grows about linearly with the articles in every layout (a
// page file per offset of every limit: the articles times the sum of the
// limits; per multiple of a limit: times the number of limits; chunks:
// each article once per listing it is in, a chunk once however many
// listings share it), so the refusal is projected at the size per article
// now. With offsets: all, a site smaller than its largest limit grows
// faster than that, so the projection is an upper bound there.
func SizeWarning(cfg *config.Config, articles int, estimate int64) string {
	max := cfg.MaxOutputBytes
	if estimate <= max/2 || articles == 0 {
		return ""
	}
	perArticle := float64(estimate) / float64(articles)
	refusedAt := int(float64(max)/perArticle) + 1
	return fmt.Sprintf("the output is %s, more than half of pagination.max_output_bytes (%s): at %s per article, a build of about %s (%d now) will be refused; %s",
		human.Bytes(estimate), human.Bytes(max), human.Bytes(int64(perArticle)), human.Plural(refusedAt, "article"), articles, sizeChange(cfg))
}

// sizeChange says what in cfg makes its output smaller, for its layout
// and offsets.
func sizeChange(cfg *config.Config) string {
	return "in " + cfg.Path + ", " + writerOf(cfg.Pagination).smaller(cfg.Pagination) + "; or raise max_output_bytes"
}

// checkSize returns the size of pages (OutputSize), or an error when it
// is more than the config allows.
func checkSize(cfg *config.Config, l *feed.Listing, pages []feed.Page) (int64, error) {
	estimate, files := OutputSize(cfg, l, pages)
	if max := cfg.MaxOutputBytes; estimate > max {
		return 0, diag.List{{Path: cfg.Path, Msg: fmt.Sprintf(
			"the output would be %s in %s, more than pagination.max_output_bytes (%s): %s",
			human.Bytes(estimate), human.Plural(files, "file"), human.Bytes(max), sizeChange(cfg))}}
	}
	return estimate, nil
}

// load loads the content and prints its warnings; in a strict build they
// are errors.
func (b *Builder) load(ctx context.Context, fsys fs.FS, opt content.Options) (*content.Site, error) {
	site, err := b.loader.Load(ctx, fsys, opt)
	if b.opt.Strict && site != nil && len(site.Warnings) > 0 {
		var dl diag.List
		if errors.As(err, &dl) {
			site.Warnings = append(site.Warnings, dl...)
			site.Warnings.Sort()
		}
		return nil, site.Warnings
	}
	if site != nil {
		for _, w := range site.Warnings {
			fmt.Fprintf(b.opt.Log, "warning: %s\n", w)
		}
	}
	return site, err
}

// lock takes the lock of the output folder, saying so on the log when it
// waits unless the build is quiet.
func (b *Builder) lock(ctx context.Context, outDir string) (func(), error) {
	notices := b.opt.Log
	if b.opt.Quiet {
		notices = io.Discard
	}
	return outdir.Lock(ctx, outDir, notices)
}

// loadConfig reads and checks the config; the same bytes as last time
// give the same Config, and keep the loader and its cache.
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
	sum := sha256.Sum256(data)
	b.cfg, b.cfgData, b.cfgSum = cfg, data, hex.EncodeToString(sum[:])
	b.loader = content.NewLoader(cfg)
	b.loader.Cache = !b.once
	return cfg, nil
}

// readManifest reads the manifest of outDir: nil, and no error, when there
// is none.
func readManifest(ctx context.Context, outDir string) (*manifest.Snapshot, error) {
	r, err := manifest.ReadContext(ctx, outfile.DirFS(outDir))
	if errors.Is(err, manifest.ErrNoBuild) {
		return nil, nil
	}
	return r, err
}

// lastManifest returns the manifest of outDir, with the build's lock held:
// the one read early, unless the file changed since (another build
// finished meanwhile), in which case it is read again. nil when there is
// none, or it cannot be read (returned: the caller says so, once it knows
// that the build goes on and rewrites every page).
func (b *Builder) lastManifest(ctx context.Context, outDir string, early func() (*manifest.Snapshot, error)) (*manifest.Snapshot, error) {
	var r *manifest.Snapshot
	var err error
	if early != nil {
		r, err = early()
	}
	if now, serr := os.Stat(filepath.Join(outDir, manifest.Name)); early == nil || serr != nil || !r.Current(now) {
		r, err = readManifest(ctx, outDir)
	}
	return r, err
}
