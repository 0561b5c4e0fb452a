// Package build writes a site's pages to its output folder: atomically,
// incrementally (only files whose bytes changed), with a manifest, and
// never at all when the content or config has errors.
//
// The files: build.go runs a build (Options, Builder, config and
// manifest loading); write.go decides and writes each page with a pool
// of goroutines, then deletes stale pages and writes the manifest;
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
	now := b.opt.Now()
	cfg, err := b.loadConfig()
	if err != nil {
		return nil, err
	}
	contentFS, err := b.contentFS(cfg)
	if err != nil {
		return nil, err
	}
	if err := b.checkOutDir(cfg); err != nil {
		return nil, err
	}
	out := b.output(ctx, cfg)
	outDir, fsDir, early := out.dir(), out.fsDir(), out.early()
	baseURL := cfg.BaseURL
	if b.opt.BaseURL != "" {
		baseURL = strings.TrimRight(b.opt.BaseURL, "/")
	}
	changed := b.changed(cfg)
	b.hint = changed != nil // a replaced content folder vouches for nothing
	opts := content.Options{Now: now, Future: b.opt.Future, Drafts: b.opt.Drafts, Root: cfg.ContentDir, Changed: changed}
	var spill *feed.Spill
	defer func() {
		if spill != nil {
			spill.Close()
		}
	}()
	spillFor := func() error {
		if !b.lean() {
			return nil
		}
		if spill != nil {
			spill.Close()
		}
		spill, err = feed.NewSpill(spillDir(fsDir))
		if err != nil {
			return err
		}
		opts.Parsed = func(a *content.Article) {
			spill.Add(a)
			a.Slim(cfg.Filters)
		}
		return nil
	}
	if err := spillFor(); err != nil {
		return nil, err
	}
	// A new Builder may find the content to be what the folder was built
	// from, if it has a manifest (a cold build reads and parses in one
	// pass); not the preview's first build, which must render every page.
	if early != nil && b.last == nil && b.opt.OnPage == nil && b.opt.Code != "" &&
		exists(filepath.Join(fsDir, manifest.Name)) && !outdir.Marked(fsDir) {
		opts.Unchanged = func(digest [sha256.Size]byte) bool {
			last, _ := early()
			return last != nil && b.builtFrom(last, baseURL, digest, now)
		}
	}
	site, err := b.load(ctx, contentFS, opts)
	if err != nil {
		return nil, err
	}
	if site.Unchanged {
		res, err := b.unchanged(ctx, outDir, fsDir, early, baseURL, site.Digest, now)
		if err != nil || res != nil {
			if res != nil {
				res.Duration = time.Since(start)
			}
			return res, err
		}
		// The folder does not hold what its manifest says: build in full.
		opts.Unchanged = nil
		if err := spillFor(); err != nil {
			return nil, err
		}
		if site, err = b.load(ctx, contentFS, opts); err != nil {
			return nil, err
		}
	}
	var listing *feed.Listing
	if spill != nil {
		if listing, err = spill.Listing(baseURL, cfg.Pagination, cfg.Filters, site.Articles); err != nil {
			return nil, err
		}
	} else {
		listing = feed.Update(b.last, baseURL, cfg.Pagination, cfg.Filters, site.Articles)
	}
	chunked := layout.Of(cfg.Pagination).Assembled
	var pages []feed.Page
	if !chunked {
		pages = listing.Pages()
	}
	estimate, err := checkSize(cfg, listing, pages)
	if err != nil {
		return nil, err
	}
	if w := SizeWarning(cfg, len(site.Articles), estimate); w != "" {
		fmt.Fprintf(b.opt.Log, "warning: %s\n", w)
	}

	res := &Result{
		OutDir: outDir, Articles: len(site.Articles), Drafts: site.Drafts, Scheduled: site.Scheduled,
		NextScheduled: site.NextScheduled,
		Reparsed:      site.Reparsed, Pages: len(pages), Estimate: estimate, Warnings: site.Warnings,
	}
	m := &manifest.Manifest{
		Format: manifest.Format, Generator: b.opt.Generator, BuildTime: now.UTC().Truncate(time.Second),
		BaseURL: baseURL, Articles: len(site.Articles),
		Pagination:    cfg.Pagination,
		Filters:       cfg.Filters,
		ConfigSHA256:  b.cfgSum,
		ContentSHA256: hex.EncodeToString(site.Digest[:]),
	}
	for _, c := range listing.Collections {
		m.Collections = append(m.Collections, manifest.Collection{Dir: c.Dir, Params: c.Params, Count: c.Count()})
	}
	w := &pageWriter{b: b, out: out, site: site, l: listing, pages: pages, m: m, res: res, chunked: chunked}
	if err := w.write(ctx); err != nil {
		return nil, err
	}
	if spill != nil {
		b.last = nil // its articles are in the spill's files
	}
	res.Duration = time.Since(start)
	return res, nil
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
// with pages, computed without rendering them: the pages' sizes, and in
// the chunks layout (no pages) those of the chunks and of each
// collection's index. A chunk is counted once however many collections
// share it, as it is written once (chunks of the same input are the same
// bytes, and a chunk's file is named by them): a new site's main, section
// and category listings hold the same articles, so the same chunks.
func OutputSize(cfg *config.Config, l *feed.Listing, pages []feed.Page) (bytes int64, files int) {
	var scratch []byte
	for _, pg := range pages {
		var n int
		n, scratch = l.PageSize(pg, scratch)
		bytes += int64(n)
	}
	files = len(pages)
	if layout.Of(cfg.Pagination).Assembled {
		seen := map[[sha256.Size]byte]bool{}
		path := chunk.ChunkPath([sha256.Size]byte{}) // every chunk's is as long
		for i, cs := range l.Chunks() {
			ix := chunk.Index{Count: l.Collections[i].Count(), Chunks: make([]chunk.Ref, 0, len(cs))}
			for _, ch := range cs {
				var in [sha256.Size]byte
				in, scratch = feed.ChunkInput(ch, scratch)
				if !seen[in] {
					seen[in] = true
					bytes += int64(ch.Size())
					files++
				}
				ix.Chunks = append(ix.Chunks, chunk.Ref{Path: path, Size: ch.Size(), Ends: ch.Ends()})
			}
			scratch = chunk.AppendIndex(scratch[:0], &ix)
			bytes += int64(len(scratch))
			files++
		}
	}
	return bytes, files
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
	const chunks = "layout: chunks (every limit up to max_limit at every offset, each article stored once per listing)"
	var change string
	switch pg := cfg.Pagination; {
	case layout.Of(pg).Assembled:
		change = "list fewer filters (each stores its articles once more)"
	case pg.Offsets == listing.OffsetsAll:
		change = "under pagination:, set " + chunks + " or offsets: aligned (a page per multiple of each limit, not per offset)"
	default:
		change = "under pagination:, set " + chunks + " or list fewer limits (each is a copy of every listing); or list fewer filters"
	}
	return "in " + cfg.Path + ", " + change + "; or raise max_output_bytes"
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
