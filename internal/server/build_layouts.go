package server

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"net/http"

	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// layoutServer is what the server does for a build of one layout
// (layout.Layouts), beside what the layout's descriptor says (which
// limits it answers, whether its pages are assembled: see decide).
type layoutServer struct {
	// load holds the files of the build of manifest m in hb (made by
	// loadBuild, its fields from the manifest set), from src:
	// build_load.go for pages, build_chunks.go for chunks.
	load func(ctx context.Context, hb *heldBuild, m *manifest.Manifest, src loadSource) error
	// files names n files of a build of the layout, for the log: "3 pages".
	files func(n int) string
}

// layoutServers returns the server's layoutServer of each layout, by the
// layout's name: the one place the server tells layouts apart. A layout
// that has none is refused (see loadBuild).
func layoutServers() map[string]layoutServer {
	return map[string]layoutServer{
		layout.PagesName: {
			load:  loadPages,
			files: func(n int) string { return human.Plural(n, "page") },
		},
		layout.ChunksName: {
			load:  loadChunks,
			files: func(n int) string { return human.Plural(n, "file") + " of chunks and indexes" },
		},
	}
}

// loadSource is where loadBuild takes a build's bodies from, and how.
type loadSource struct {
	// fsys is the build's files; nil when every body is in memory.
	fsys fs.FS
	// dir is the output folder, open, when bodies are sent from their
	// files (see pageFile): a file's identity is recorded and its bytes
	// dropped. Else bodies are kept in stores.
	dir *pageDir
	// remote, for a build in a bucket, is where its bodies are read from
	// when a request needs them: they are not read when it is loaded
	// (fsys is the bucket, for the manifest and the indexes).
	remote *remote
	// prev is the build being served, or nil: a body with the same
	// SHA-256 is the same bytes; with dir, a file with the same identity
	// is the same file.
	prev *heldBuild
	// fresh holds bodies the build handed over in memory; nil when there
	// are none.
	fresh *Batch
	// slack is the bytes of bodies no longer used a build's stores may
	// hold beyond as many as the bodies used (see heldBuild.compact).
	slack int64
	// partial: a file that does not match the manifest leaves its pages
	// out, answered 503 (see heldBuild.unavailable), rather than fail the
	// load.
	partial bool
}

// loadBuild makes the heldBuild of the build that the manifest (data, m)
// describes, with the loader of its layout (layoutServers), taking each
// body from src: fresh, else prev, else its file, read and checked
// against its size and SHA-256. A file that differs gives a
// notReadyError; with src.partial, what needs it is left out instead,
// answered 503 (see heldBuild.unavailable).
//
// The manifest has been validated (see validate) unless it was handed
// over by the build that made it, in this process.
//
// When the stores the bodies are in hold more than twice their bytes plus
// slack, the bodies are copied to a new store (see compact).
//
// It stops when ctx is done, checked between files.
func loadBuild(ctx context.Context, data []byte, m *manifest.Manifest, src loadSource) (*heldBuild, error) {
	l := layout.Of(m.Pagination)
	ls, ok := layoutServers()[l.Name]
	if !ok {
		return nil, fmt.Errorf("%s: pagination.layout %q is not one this feedgen serves: serve the build with the feedgen that made it", manifest.Name, l.Name)
	}
	hb := &heldBuild{
		manifestSum:  sha256.Sum256(data),
		buildTime:    m.BuildTime,
		baseURL:      m.BaseURL,
		paging:       m.Pagination,
		layout:       l,
		aligned:      m.Pagination.Offsets == listing.OffsetsAligned,
		lastModified: []string{m.BuildTime.UTC().Format(http.TimeFormat)},
		dir:          src.dir,
		remote:       src.remote,
		replaced:     make(chan struct{}),
	}
	if err := ls.load(ctx, hb, m, src); err != nil {
		return nil, err
	}
	if err := loadFeeds(ctx, hb, m, src); err != nil {
		return nil, err
	}
	return hb, nil
}
