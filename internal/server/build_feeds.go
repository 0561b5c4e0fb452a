package server

import (
	"context"
	"fmt"
	"net/http"
	"path"

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
	for i, f := range m.Files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if layout.Classify(f.Path) != layout.Feed {
			continue
		}
		c := byDir[path.Dir(f.Path)]
		format, _ := layout.FeedFormat(f.Path)
		if c == nil {
			continue // not a collection this server answers from
		}
		if c.feeds == nil {
			c.feeds = make([]*feedPage, len(formats))
		}
		fp := &feedPage{}
		for k, g := range formats {
			if g.Name == format.Name {
				c.feeds[k] = fp
			}
		}
		r := fileRef{file: f, sum: f.Sum(), c: c, feed: fp}
		read, err := pl.source(&r)
		if err != nil {
			return err
		}
		if read {
			pl.toRead = append(pl.toRead, len(pl.refs))
		}
		pl.refs = append(pl.refs, r)
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
	pl.hold()
	for _, c := range byDir {
		if err := c.feedsModified(src); err != nil {
			return err
		}
	}
	return nil
}

// feedsModified sets the Last-Modified of c's feeds from the first of
// them that is held: its body, in memory or in its file.
func (c *collection) feedsModified(src loadSource) error {
	formats := syndication.Formats()
	for k, fp := range c.feeds {
		if fp == nil || fp.pg.unavailable() {
			continue
		}
		body := fp.pg.body
		if body == nil && fp.pg.file != nil {
			// Sent from its file, not mapped: read again, and checked
			// against the manifest.
			f := manifest.File{Path: c.dir + "/" + formats[k].File, Size: int64(fp.pg.size())}
			f.SHA256 = fp.pg.etag[0][1 : len(fp.pg.etag[0])-1]
			if src.fsys == nil {
				return fmt.Errorf("feed %s is neither in memory nor in a folder", f.Path)
			}
			data, err := manifest.ReadPage(src.fsys, f, nil)
			if err != nil {
				return notReadyError{err: err}
			}
			body = data
		}
		t, err := syndication.Modified(formats[k], body)
		if err != nil {
			return fmt.Errorf("%s: %w", layout.FeedPath(c.dir, formats[k]), err)
		}
		modified := []string{t.UTC().Format(http.TimeFormat)}
		for _, fp := range c.feeds {
			if fp != nil {
				fp.lastMod, fp.modified = t, modified
			}
		}
		return nil
	}
	return nil
}
