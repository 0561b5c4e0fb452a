package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/syndication"
)

// loadFeeds holds the reader feeds of the build of manifest m in hb, after
// its layout's loader: whatever the layout, a feed is a file sent as it
// is, as a page of the pages layout is, so its body comes from where a
// page's does (pageLoad: src.fresh, src.prev, else its file, checked),
// and is sent the same way. A feed whose file does not match the
// manifest is answered 503 with src.partial, else the load is not ready.
// Each collection's feeds share a Last-Modified: its newest item's date,
// read from one of them.
func loadFeeds(ctx context.Context, hb *heldBuild, m *manifest.Manifest, src loadSource) error {
	byDir := make(map[string]*collection, len(hb.collections))
	for _, c := range hb.collections {
		byDir[c.dir] = c
	}
	pl := &pageLoad{hb: hb, src: src}
	if src.dir != nil && src.prev != nil && src.prev.dir != nil {
		pl.prevFiles = src.prev.files()
	}
	formats := syndication.Formats()
	hb.feedFormats = make([]bool, len(formats))
	for i, f := range m.Files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if layout.Classify(f.Path) != layout.Feed {
			continue
		}
		format, _ := layout.FeedFormat(f.Path)
		k := slices.IndexFunc(formats, func(g syndication.Format) bool { return g.Name == format.Name })
		hb.feedFormats[k] = true
		c := byDir[path.Dir(f.Path)]
		if c == nil {
			continue // not a collection this server answers from
		}
		if c.feeds == nil {
			c.feeds = make([]*feedPage, len(formats))
		}
		fp := &feedPage{}
		c.feeds[k] = fp
		hb.bytes += f.Size
		if err := pl.add(fileRef{file: f, sum: f.Sum(), c: c, feed: fp}); err != nil {
			return err
		}
	}
	if len(pl.refs) == 0 {
		return nil
	}
	if err := pl.read(ctx); err != nil {
		if pl.disk != nil {
			pl.disk.discard()
		}
		return err
	}
	hb.read += len(pl.toRead) - len(pl.failed)
	if pl.disk != nil {
		hb.stores = append(hb.stores, pl.disk)
	}
	pl.hold()
	var feeds []*feedPage
	for _, r := range pl.refs {
		feeds = append(feeds, r.feed)
	}
	if err := hb.adoptFeeds(feeds); err != nil {
		return err
	}
	prev := prevModified(src.prev)
	for _, c := range byDir {
		c.feedsModified(hb, src, prev)
	}
	return nil
}

// hasFeeds reports whether the build of hb has feeds in format f (an
// index in syndication.Formats): the feed path of a format it has not is
// no path of the build's, not found as any other.
func (hb *heldBuild) hasFeeds(f int) bool { return f < len(hb.feedFormats) && hb.feedFormats[f] }

// adoptFeeds copies into a store of hb's own the bodies of feeds held in a
// store hb does not list (the last build's, or a batch's: the layout's
// loader compacted the stores before the feeds were held), so that an
// unchanged feed does not keep a whole store of an old build alive.
func (hb *heldBuild) adoptFeeds(feeds []*feedPage) error {
	own := make(map[*store]bool, len(hb.stores))
	for _, st := range hb.stores {
		own[st] = true
	}
	var st *store
	at := make([]int64, len(feeds))
	for i, fp := range feeds {
		if fp.pg.st == nil || own[fp.pg.st] {
			continue
		}
		if st == nil {
			var err error
			if st, err = newStore(); err != nil {
				return fmt.Errorf("allocating memory for the feeds: %w", err)
			}
		}
		at[i] = st.reserve(int64(len(fp.pg.body)))
		if err := st.writeAt(fp.pg.body, at[i]); err != nil {
			st.discard()
			return fmt.Errorf("copying the feeds: %w", err)
		}
	}
	if st == nil {
		return nil
	}
	if err := st.seal(); err != nil {
		st.discard()
		return fmt.Errorf("mapping the feeds: %w", err)
	}
	for i, fp := range feeds {
		if fp.pg.st == nil || own[fp.pg.st] {
			continue
		}
		size := int64(len(fp.pg.body))
		sum := sha256.Sum256(fp.pg.body)
		hb.bySum[sum] = stored{st: st, off: at[i], size: size}
		fp.pg.body, fp.pg.st = st.bytes(at[i], size), st
	}
	hb.stores = append(hb.stores, st)
	return nil
}

// lastModified is a feed's Last-Modified, as loaded.
type lastModified struct {
	t        time.Time
	modified []string
}

// prevModified returns the Last-Modified of the feeds of prev (nil: none),
// by their ETag: a feed of the same bytes has the same date, not read
// again.
func prevModified(prev *heldBuild) map[string]lastModified {
	m := map[string]lastModified{}
	if prev == nil {
		return m
	}
	for _, c := range prev.collections {
		lazy := c.feedsMod.Load() // a build of a bucket's: see bucketFeedsModified
		for _, fp := range c.feeds {
			switch {
			case fp == nil || fp.pg.unavailable():
			case fp.modified != nil:
				m[fp.pg.etag[0]] = lastModified{fp.lastMod, fp.modified}
			case lazy != nil:
				m[fp.pg.etag[0]] = *lazy
			}
		}
	}
	return m
}

// feedsModified sets the Last-Modified of c's feeds from the first of
// them that is held: the last build's date for the same bytes (prev), else
// read from its body, in memory or in its file (checked against the
// manifest); in a build of a bucket, when a request first needs it
// (bucketFeedsModified). A feed whose date cannot be read leaves the collection's
// feeds unavailable (503) until the next build, as a page whose file does
// not match.
func (c *collection) feedsModified(hb *heldBuild, src loadSource, prev map[string]lastModified) {
	formats := syndication.Formats()
	for k, fp := range c.feeds {
		if fp == nil || fp.pg.unavailable() {
			continue
		}
		lm, ok := prev[fp.pg.etag[0]]
		if !ok && src.remote != nil {
			return // read when a request needs it: see bucketFeedsModified
		}
		if !ok {
			t, err := feedDate(formats[k], &fp.pg, c.dir, src.fsys)
			if err != nil {
				for k, fp := range c.feeds {
					if fp != nil {
						fp.pg = page{}
						hb.unavailable = append(hb.unavailable, layout.FeedPath(c.dir, formats[k]))
					}
				}
				return
			}
			lm = lastModified{t, []string{t.UTC().Format(http.TimeFormat)}}
		}
		for _, fp := range c.feeds {
			if fp != nil {
				fp.lastMod, fp.modified = lm.t, lm.modified
			}
		}
		return
	}
}

// feedDate reads the newest item's date of the feed pg of the collection
// in folder dir, in format f: from its body, or from its file in fsys when
// it is sent from a file it did not map, checked against its ETag.
func feedDate(f syndication.Format, pg *page, dir string, fsys fs.FS) (time.Time, error) {
	body := pg.body
	if body == nil {
		if fsys == nil {
			return time.Time{}, fmt.Errorf("feed %s is neither in memory nor in a folder", layout.FeedPath(dir, f))
		}
		mf := manifest.File{Path: layout.FeedPath(dir, f), Size: int64(pg.size()), SHA256: strings.Trim(pg.etag[0], `"`)}
		data, err := manifest.ReadPage(fsys, mf, nil)
		if err != nil {
			return time.Time{}, err
		}
		body = data
	}
	return syndication.Modified(f, body)
}
