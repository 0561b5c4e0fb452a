package bundle

import (
	"archive/zip"
	"context"
	"io"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/manifest"
)

// checkChunks checks a bundle of the chunks layout beyond the bytes of
// its files (checkPages): each collection's index reads, counts the
// collection's articles, and names chunks of the manifest, of the size it
// gives them, cut where it says (chunk.CheckChunk): what serving the
// bundle relies on. It reads each chunk once per index that names it.
func (v *verifier) checkChunks(ctx context.Context, m *manifest.Manifest, files map[string]*zip.File) error {
	sizes := make(map[string]int64, len(m.Files))
	for _, f := range m.Files {
		sizes[f.Path] = f.Size
	}
	var buf []byte
	read := func(name string) ([]byte, bool) {
		f := files[name]
		if f == nil {
			return nil, false // reported as missing already
		}
		rc, err := f.Open()
		if err != nil {
			return nil, false // reported by checkPages
		}
		defer rc.Close()
		data, err := io.ReadAll(io.LimitReader(rc, sizes[name]+1))
		return data, err == nil && int64(len(data)) == sizes[name]
	}
	for _, c := range m.Collections {
		name := chunk.IndexPath(c.Dir)
		data, ok := read(name)
		if !ok {
			continue
		}
		ix, err := chunk.ParseIndex(data)
		if err != nil {
			v.add(name, "corrupted: %v", err)
			continue
		}
		if ix.Count != c.Count {
			v.add(name, "corrupted: it counts %d articles, the manifest %d", ix.Count, c.Count)
		}
		for k := range ix.Chunks {
			if err := ctx.Err(); err != nil {
				return err
			}
			r := &ix.Chunks[k]
			size, listed := sizes[r.Path]
			if !listed || size != int64(r.Size) {
				v.add(name, "corrupted: chunk %s is not in the manifest with %d bytes", r.Path, r.Size)
				continue
			}
			if buf, ok = read(r.Path); !ok {
				continue
			}
			if err := chunk.CheckChunk(r, buf); err != nil {
				v.add(name, "corrupted: %v", err)
			}
		}
	}
	return nil
}
