package build

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/outfile"
)

// A build that bounds its memory (Run) keeps, beside its output, what the
// next one needs of its content, so that a rebuild after one new article
// reads and parses that article, not a million:
//
//   - sourcesName, the cache of its sources (see content.Cache): each
//     article file's stamp (size, modification time, inode, change time)
//     and digest, and for each published article what the build needs of
//     it once parsed (its id, time, the fields filters read) and where
//     its JSON is in encodedName. A file whose stamp is the one recorded
//     is not read; one whose bytes are those recorded is not parsed.
//   - encodedName, the JSON of the published articles (see feed.Store).
//
// Both are caches: never published nor bundled, and never changing what
// is built. The cache is keyed by what an article's parse depends on
// besides its file (the code, the config, the time zone's rules:
// sourcesKey), and each record carries a check; the store says which it
// is, and each article's JSON is checked against its SHA-256 when read.
// A cache that is missing, of another version or key, or damaged from
// some record on (which the build says), gives what it can and the rest
// of the files are read and parsed: never other bytes. A build with
// --clean reads every file, as one without a cache, and writes both
// anew. publish reads the cache (Compare), never writes it.
const (
	sourcesName = ".feedgen-sources"
	encodedName = ".feedgen-encoded"
)

// sourcesKey is the key of the cache of this Builder's sources: what an
// article's parse and JSON depend on besides its file.
func (b *Builder) sourcesKey() [32]byte {
	var zone bytes.Buffer
	writeZone(&zone, b.cfg.Location)
	return content.CacheKey([]byte(b.opt.Code), b.cfgData, zone.Bytes())
}

// sources is the cache of sources a build reads and writes.
type sources struct {
	cache *content.Cache
	store *feed.Store
	// articles is set when the cache's articles are this build's to
	// take: its key, and its store.
	articles bool
}

// openSources readies the load to take what the last build kept in the
// output folder (see sourcesName): in a build that bounds its memory,
// has a code to key the cache with, and is not --clean.
func (r *buildRun) openSources() {
	b := r.b
	r.closeSources()
	dir := r.out.fsDir()
	if r.spill == nil || b.opt.Code == "" || b.opt.Clean || b.noSources || dir == "" {
		return
	}
	f, err := outfile.Open(filepath.Join(dir, sourcesName))
	if err != nil {
		return
	}
	cache, err := content.ReadCache(f)
	if err != nil {
		f.Close()
		return
	}
	r.src = &sources{cache: cache}
	r.srcFile = f
	r.opts.Cache = cache
	if cache.Key() != b.sourcesKey() {
		return // its digests only
	}
	store, err := feed.OpenStore(filepath.Join(dir, encodedName))
	if err != nil || !store.Matches(cache.Tag()) {
		store.Close()
		return
	}
	r.src.store, r.src.articles = store, true
	spill := r.spill
	spill.UseStore(store)
	r.opts.Kept = func(a *content.Article, extra []byte) bool {
		loc, ok := feed.ParseLoc(extra)
		return ok && spill.AddStored(a, loc)
	}
}

// closeSources closes what openSources opened.
func (r *buildRun) closeSources() {
	if r.srcFile != nil {
		r.srcFile.Close()
		r.srcFile = nil
	}
	if r.src != nil {
		r.src.store.Close()
		r.src = nil
	}
	r.opts.Cache, r.opts.Kept = nil, nil
}

// sourcesDamage says, on the log, where the cache of sources was found
// damaged, if it was.
func (r *buildRun) sourcesDamage() {
	if r.src == nil {
		return
	}
	if d := r.src.cache.Damage(); d != "" {
		fmt.Fprintf(r.b.opt.Log, "warning: %s: %s (by hand, or on a bad disk): not believed from there on, those files are read again\n", filepath.Join(r.out.dir(), sourcesName), d)
	}
}

// keepSources writes, into the output folder dir, the cache of the
// build's sources and the JSON of its articles, as the next build will
// take them (see sourcesName); a build that keeps no such thing deletes
// those an earlier one kept.
func (r *buildRun) keepSources(dir string, l *feed.Listing, site *content.Site) error {
	if r.spill == nil || r.b.opt.Code == "" {
		return removeSources(dir)
	}
	kept, err := r.spill.Keep(l, filepath.Join(dir, encodedName))
	if err != nil {
		removeSources(dir)
		return err
	}
	var buf []byte
	return r.writeSources(dir, site, kept.Tag(), func(a *content.Article) ([]byte, bool) {
		loc, ok := kept.Loc(a)
		if !ok {
			return nil, false
		}
		buf = feed.AppendLoc(buf[:0], loc)
		return buf, true
	})
}

// writeSources writes the cache of site's sources into dir, with tag and
// the bytes extra gives (nil: digests only).
func (r *buildRun) writeSources(dir string, site *content.Site, tag []byte, extra func(*content.Article) ([]byte, bool)) error {
	name := filepath.Join(dir, sourcesName)
	f, err := atomicfile.Create(name, 0o644)
	if err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	defer f.Abort()
	if err := site.WriteCache(f, r.b.sourcesKey(), tag, extra); err != nil {
		return fmt.Errorf("writing %s: %w", name, err)
	}
	if err := f.CommitUnsynced(); err != nil { // a cache: checked as it is read
		return fmt.Errorf("writing %s: %w", name, err)
	}
	return nil
}

// removeSources deletes the cache of sources and the store of dir.
func removeSources(dir string) error {
	for _, name := range []string{sourcesName, encodedName} {
		if err := os.Remove(filepath.Join(dir, name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("deleting %s: %w", name, err)
		}
	}
	return nil
}
