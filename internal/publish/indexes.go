package publish

import (
	"context"
	"fmt"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
)

// checkIndexes checks that each chunk index among the build's files
// pages fits its chunks, as feedgen serve, verify and bundle check it
// (manifest.ReadIndexesOf, then Indexes.Fits on each chunk it names,
// read once): it counts its collection's articles as the manifest does,
// and each chunk it names is cut where it says. An index that does not
// would make an edge that assembles pages from it answer invalid JSON:
// the publish is refused before it writes anything. Only the indexes it
// would upload are checked (or may, when the bucket's copy is not
// known): one the bucket holds with the same bytes was checked by the
// publish that uploaded it, and its chunks, named by their digests,
// cannot have changed. Of the chunks, only those the leaves it uploads
// name are read: a leaf the bucket holds was checked, with its chunks,
// by the publish that uploaded it (after one new article, a chunk or two
// a collection, not the collection's every chunk).
func (p *publisher) checkIndexes(ctx context.Context, pages []int) error {
	if !p.layout.Has(layout.Index) {
		return nil
	}
	upload := map[string]bool{}
	fit := map[string]bool{} // the chunks the leaves to upload name
	for _, i := range pages {
		f := p.local.m.Files[i]
		switch layout.Classify(f.Path) {
		case layout.Index:
			upload[f.Path] = true
		case layout.Leaf:
			data, err := manifest.ReadPage(p.output, f, nil)
			if err != nil {
				return changedOutput(err)
			}
			l, err := chunk.ParseLeaf(data)
			if err != nil {
				return fmt.Errorf("%s: %w: nothing was published: %s", f.Path, err, manifest.UnfitAdvice("publish"))
			}
			for _, r := range l.Chunks {
				fit[r.Path] = true
			}
		}
	}
	if len(upload) == 0 && len(fit) == 0 {
		return nil
	}
	ix, ps := manifest.ReadIndexesOf(p.local.m, func(index string) bool { return upload[index] },
		func(f manifest.File) ([]byte, error) { return manifest.ReadPage(p.output, f, nil) })
	if len(ps) > 0 {
		return fmt.Errorf("%s: nothing was published: %s", ps[0], manifest.UnfitAdvice("publish"))
	}
	var buf []byte
	for _, path := range ix.Chunks() {
		if !fit[path] {
			// Named by a leaf the bucket holds: checked by the publish
			// that uploaded it (a leaf never changes, nor its chunks).
			continue
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := manifest.ReadPage(p.output, p.local.m.Files[p.index[path]], buf)
		if err == nil {
			buf = data[:0]
			err = ix.Fits(path, data)
		}
		if err != nil {
			return fmt.Errorf("%w: nothing was published: %s", err, manifest.UnfitAdvice("publish"))
		}
	}
	return nil
}
