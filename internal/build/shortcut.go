package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
)

// sourceDigest is Source.Digest: for content of the given digest, built
// with this Builder's code, config and options, into the manifest whose
// bytes, with its Source.Digest empty, are data. The manifest's bytes
// list every page's size and SHA-256 (a chunk's through its index), and
// the rest of what the build wrote there (collections and their counts,
// config_sha256, …): a byte of it changed since, at the same size too,
// is a manifest that no build wrote, which a build rewrites.
func (b *Builder) sourceDigest(baseURL string, content [sha256.Size]byte, data []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "feedgen source 2\n%q\n%q\nfuture=%t\n%d\n", b.opt.Code, baseURL, b.opt.Future, len(b.cfgData))
	if b.opt.Drafts {
		h.Write([]byte("drafts\n"))
	}
	h.Write(b.cfgData)
	writeZone(h, b.cfg.Location)
	h.Write(content[:])
	fmt.Fprintf(h, "%d\n", len(data))
	h.Write(data)
	return hex.EncodeToString(h.Sum(nil))
}

// unsealed returns the manifest's bytes data with its Source.Digest
// (digest) empty, as sourceDigest hashed them; nil when data does not
// hold it.
func unsealed(data []byte, digest string) []byte {
	field := []byte(`"digest":"` + digest + `"`)
	i := bytes.Index(data, field)
	if digest == "" || i < 0 {
		return nil
	}
	out := make([]byte, 0, len(data))
	out = append(out, data[:i]...)
	out = append(out, `"digest":""`...)
	return append(out, data[i+len(field):]...)
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

// builtFrom reports whether r is the manifest, byte for byte, of a build
// of the same code, config, options and content (whose digest is given)
// as this one, into pages it lists, and whether a build at now lists the
// same articles.
func (b *Builder) builtFrom(r *manifest.Snapshot, baseURL string, content [sha256.Size]byte, now time.Time) bool {
	if r == nil || r.Manifest == nil || r.Source == nil {
		return false
	}
	s := r.Source
	if s.From != nil && now.Before(*s.From) || s.Until != nil && !now.Before(*s.Until) {
		return false
	}
	data := unsealed(r.Data, s.Digest)
	return data != nil && s.Digest == b.sourceDigest(baseURL, content, data)
}

// source describes the inputs of a build of site, but for its Digest,
// which seal sets once the manifest is complete.
func (b *Builder) source(site *content.Site) *manifest.Source {
	s := &manifest.Source{Drafts: site.Drafts, Scheduled: site.Scheduled}
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
// (and its SHA-256, when it changed since the manifest was written, or
// with --clean) and that no other page is, deletes the temporary files of an interrupted
// build, writes the manifest again when it read pages because of their
// times (see rechecked), calls after (when not nil) with the folder, and
// reports every page unchanged. It returns nil, and no error, when the
// folder does not hold what the manifest says, for a full build to mend.
func (b *Builder) unchanged(ctx context.Context, outDir, fsDir string, early func() (*manifest.Snapshot, error), baseURL string, content [sha256.Size]byte, now time.Time, after func(dir string) error) (*Result, error) {
	unlock, err := b.lock(ctx, fsDir)
	if err != nil {
		return nil, err
	}
	defer unlock()
	if outdir.Marked(fsDir) {
		return nil, nil // a build died mid-way: any page may be its
	}
	r, _ := b.lastManifest(ctx, fsDir, early)
	if r == nil || !b.builtFrom(r, baseURL, content, now) {
		return nil, nil // another build replaced it meanwhile
	}
	m := r.Manifest
	res := &Result{
		OutDir: outDir, Articles: m.Articles, Drafts: m.Source.Drafts, Scheduled: m.Source.Scheduled, Skipped: true,
		Pages: len(m.Files), Unchanged: len(m.Files), Manifest: m, ManifestData: r.Data,
	}
	for _, f := range m.Files {
		if layout.Classify(f.Path) == layout.Feed {
			res.Feeds++
		}
	}
	res.Pages -= res.Feeds
	if m.Source.Until != nil {
		res.NextScheduled = *m.Source.Until
	}
	if len(r.Unmatched) > 0 {
		return nil, nil // an index changed since: its chunks are not known
	}
	keep := make(map[string]bool, len(m.Files))
	var re rechecked // see disk.has
	for i, f := range m.Files {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		// As disk.has checks them: a page changed since the manifest
		// was written, and with --clean every page, is read.
		name := filepath.Join(fsDir, filepath.FromSlash(f.Path))
		info, err := os.Stat(name)
		if err != nil || !info.Mode().IsRegular() || info.Size() != f.Size {
			return nil, nil
		}
		if b.opt.Clean || r.Info != nil && changedSince(info, r.Info) {
			info, ok := hashed(name, f.Size, f.SHA256)
			if !ok {
				return nil, nil // damaged since: a full build rewrites it
			}
			if r.Info != nil && changedSince(info, r.Info) {
				re.add(name, info)
			}
		}
		keep[f.Path] = true
		res.Bytes += f.Size
	}
	res.Estimate = res.Bytes
	writerOf(m.Pagination).count(res, m.Files)
	found, err := scanOwned(ctx, fsDir, m, nil, nil)
	if err != nil {
		return nil, err
	}
	if len(found.strays) > 0 || len(found.foreign) > 0 {
		return nil, nil // a full build names them
	}
	for _, t := range found.temps {
		os.Remove(t)
	}
	removeManifestTemps(fsDir)
	if re.moved() {
		// The same bytes, at a later time than the pages read.
		name := filepath.Join(fsDir, manifest.Name)
		if err := writeAtomic(name, r.Data); err != nil {
			return nil, err
		}
		settle(name)
	}
	if after != nil {
		if err := after(fsDir); err != nil {
			return nil, err
		}
	}
	return res, nil
}
