package build

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// A layoutWriter writes the files of a build of one layout (see package
// layout): everything the build does that depends on the layout it
// writes is here. writers has one per layout; the rest of the build asks
// the one of its config (writerOf) and never which layout it is.
type layoutWriter interface {
	// pages returns the pages of l a build renders: every one, or none
	// when the layout has no pre-rendered pages.
	pages(l *feed.Listing) []feed.Page
	// plan learns from the last build's manifest, prev (nil: none), what
	// may be kept, and returns the paths of the build's files (see
	// output.open).
	plan(ctx context.Context, w *pageWriter, prev *manifest.Manifest) ([]string, error)
	// write writes the files plan found, and counts them in the Result.
	write(ctx context.Context, w *pageWriter) error
	// keepInputs writes, into the output folder dir, what a build in a
	// new process learns from which files it may keep (see inputsName),
	// or deletes it when the layout has none.
	keepInputs(w *pageWriter, dir string) error
	// extraSize adds to the size of the pages (OutputSize) the bytes and
	// files of l the layout writes besides them; scratch is a buffer,
	// returned for the next use.
	extraSize(l *feed.Listing, scratch []byte) (bytes int64, files int, _ []byte)
	// smaller says what, under pagination p, makes the output smaller
	// (see sizeChange).
	smaller(p listing.Pagination) string
	// count counts in res, the Result of a build that kept every file
	// (see Builder.unchanged), what files lists that the Result counts
	// apart: chunks.
	count(res *Result, files []manifest.File)
}

// writers returns the writer of each layout, by name (layout.Layouts).
func writers() map[string]layoutWriter {
	return map[string]layoutWriter{
		layout.PagesName:  pagesWriter{},
		layout.ChunksName: chunksWriter{},
	}
}

// writerOf returns the writer of a build of pagination p, which a config
// checked (config.Parse refuses a layout no writer has).
func writerOf(p listing.Pagination) layoutWriter {
	return writers()[layout.Of(p).Name]
}

// pagesWriter writes a file per pre-rendered page (layout: pages).
type pagesWriter struct{}

func (pagesWriter) pages(l *feed.Listing) []feed.Page { return l.Pages() }

func (pagesWriter) plan(_ context.Context, w *pageWriter, prev *manifest.Manifest) ([]string, error) {
	w.plan(prev)
	paths := make([]string, len(w.pages))
	for i, pg := range w.pages {
		paths[i] = pg.Path
	}
	return paths, nil
}

func (pagesWriter) write(ctx context.Context, w *pageWriter) error { return w.run(ctx) }

// keepInputs deletes the chunks' inputs a build of the chunks layout
// wrote: the manifest records the input of each page.
func (pagesWriter) keepInputs(_ *pageWriter, dir string) error {
	if err := os.Remove(filepath.Join(dir, inputsName)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("deleting %s: %w", inputsName, err)
	}
	return nil
}

func (pagesWriter) extraSize(_ *feed.Listing, scratch []byte) (int64, int, []byte) {
	return 0, 0, scratch
}

func (pagesWriter) smaller(p listing.Pagination) string {
	const chunks = "layout: chunks (every limit up to max_limit at every offset, each article stored once per listing)"
	if p.Offsets == listing.OffsetsAll {
		return "under pagination:, set " + chunks + " or offsets: aligned (a page per multiple of each limit, not per offset)"
	}
	return "under pagination:, set " + chunks + " or list fewer limits (each is a copy of every listing); or list fewer filters"
}

func (pagesWriter) count(*Result, []manifest.File) {}

// chunksWriter writes each collection's articles in chunks named by
// their bytes' digest, and its index (layout: chunks; see chunks.go).
type chunksWriter struct{}

func (chunksWriter) pages(*feed.Listing) []feed.Page { return nil }

func (chunksWriter) plan(ctx context.Context, w *pageWriter, prev *manifest.Manifest) ([]string, error) {
	return w.planChunks(ctx, prev)
}

func (chunksWriter) write(ctx context.Context, w *pageWriter) error { return w.writeChunks(ctx) }

func (chunksWriter) keepInputs(w *pageWriter, dir string) error { return w.writeInputs(dir) }

// extraSize is the size of the chunks, each counted once however many
// collections share it, as it is written once (chunks of the same input
// are the same bytes, and a chunk's file is named by them): a new site's
// main, section and category listings hold the same articles, so the
// same chunks; and of each collection's index, its leaves and root.
func (chunksWriter) extraSize(l *feed.Listing, scratch []byte) (bytes int64, files int, _ []byte) {
	seen := map[[sha256.Size]byte]bool{}
	leaves := map[string]bool{}
	var ids []int64
	cuts, inputs := l.ChunkInputs()
	for i, cs := range cuts {
		ix := chunk.Index{Count: l.Collections[i].Count(), Chunks: make([]chunk.Ref, 0, len(cs))}
		ids = ids[:0]
		for k, ch := range cs {
			in := inputs[i][k]
			if !seen[in] {
				seen[in] = true
				bytes += int64(ch.Size())
				files++
			}
			// Named by its input, not its bytes' digest (as long): the
			// leaves of the same chunks are the same, and counted once.
			ix.Chunks = append(ix.Chunks, chunk.Ref{Path: chunk.ChunkPath(in), Size: ch.Size(), Ends: ch.Ends()})
			ids = append(ids, ch.LastID())
		}
		root, _ := chunk.DefaultSizes().Tree(&ix, ids, func(p string, _ [32]byte, data []byte) error {
			if !leaves[p] {
				leaves[p] = true
				bytes += int64(len(data))
				files++
			}
			return nil
		})
		scratch = chunk.AppendRoot(scratch[:0], root)
		bytes += int64(len(scratch))
		files++
	}
	return bytes, files, scratch
}

func (chunksWriter) smaller(listing.Pagination) string {
	return "list fewer filters (each stores its articles once more)"
}

func (chunksWriter) count(res *Result, files []manifest.File) {
	res.Chunked = true
	for _, f := range files {
		if layout.Classify(f.Path) == layout.Chunk {
			res.Chunks++
		}
	}
}
