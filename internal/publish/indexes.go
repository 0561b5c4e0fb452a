package publish

import (
	"context"
	"fmt"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/manifest"
)

// checkIndexes checks that each chunk index among the build's files
// pages (indexes in its manifest's files) fits its chunks, as feedgen
// serve and verify check it before they answer from it: it counts its
// collection's articles as the manifest does, and each chunk it names
// is cut where it says (chunk.CheckChunk). An index that does not would
// make an edge that assembles pages from it answer invalid JSON: the
// publish is refused before it writes anything. Only the indexes it
// would upload are checked (or may, when the bucket's copy is not
// known): one the bucket holds with the same bytes was checked by the
// publish that uploaded it, and its chunks, named by their digests,
// cannot have changed.
func (p *publisher) checkIndexes(ctx context.Context, pages []int) error {
	if !p.res.Chunked {
		return nil
	}
	count := make(map[string]int, len(p.local.m.Collections))
	for _, c := range p.local.m.Collections {
		count[chunk.IndexPath(c.Dir)] = c.Count
	}
	var buf, cbuf []byte
	for _, i := range pages {
		f := p.local.m.Files[i]
		if !chunk.IsIndex(f.Path) {
			continue
		}
		data, err := manifest.ReadPage(p.output, f, buf)
		if err != nil {
			return p.damaged(err)
		}
		buf = data[:0]
		ix, err := chunk.ParseIndex(data)
		if err != nil {
			return p.damaged(fmt.Errorf("%s: %w", f.Path, err))
		}
		if n, ok := count[f.Path]; ok && ix.Count != n {
			return p.damaged(fmt.Errorf("%s counts %d articles, %s %d", f.Path, ix.Count, manifest.Name, n))
		}
		for k := range ix.Chunks {
			if err := ctx.Err(); err != nil {
				return err
			}
			r := &ix.Chunks[k]
			j, ok := p.index[r.Path]
			if !ok {
				return p.damaged(fmt.Errorf("%s: chunk %s is not in %s", f.Path, r.Path, manifest.Name))
			}
			data, err := manifest.ReadPage(p.output, p.local.m.Files[j], cbuf)
			if err != nil {
				return p.damaged(fmt.Errorf("%s: %w", f.Path, err))
			}
			cbuf = data[:0]
			if err := chunk.CheckChunk(r, data); err != nil {
				return p.damaged(fmt.Errorf("%s: %w", f.Path, err))
			}
		}
	}
	return nil
}

// damaged is the error of a build whose files do not agree with each
// other.
func (p *publisher) damaged(err error) error {
	return fmt.Errorf("%w: the build is damaged, and nothing was published: build it again from scratch (remove the output folder, then feedgen build), and publish once it is done", err)
}
