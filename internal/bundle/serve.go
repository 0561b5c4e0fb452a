package bundle

import (
	"context"
	"crypto/sha256"
	"io"

	"github.com/feedgen/feedgen/internal/server"
)

// Serve verifies the bundle file and serves the build in it, from
// memory, as l says (feedgen serve --bundle). A bundle that fails
// verification is refused.
func Serve(ctx context.Context, l server.Listen, file string) error {
	return l.Serve(ctx, func(ctx context.Context, so server.Options) error {
		b, pages, err := openServed(ctx, file, l.Log)
		if err != nil {
			return err
		}
		defer b.Close()
		so.Source = server.Archive(file, b.FS(), pages)
		return server.Run(ctx, so)
	})
}

// openServed verifies the bundle file and returns it, with its pages in
// memory, handed over as verifying decompressed and checked them, so
// that each is decompressed and hashed once: the server is given both
// (server.Archive). A bundle that fails verification is refused, its
// pages dropped; its problems are printed to w (see Verify).
func openServed(ctx context.Context, file string, w io.Writer) (*Bundle, *server.Batch, error) {
	pages := server.NewPages()
	b, err := Verify(ctx, file, w, func(_ string, data []byte, sum [sha256.Size]byte) {
		pages.Add(data, sum)
	})
	if err != nil {
		pages.Discard()
		return nil, nil, err
	}
	return b, pages, nil
}
