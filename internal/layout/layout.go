// Package layout owns what the files of a build are: the Kind of every
// file of an output folder (the manifest, a page, a collection's chunk
// index, a chunk), what each is sent and published as, and the layouts a
// build stores its listing in (pages, chunks: config pagination.layout),
// each described once, as data.
//
// Every package that reads, serves, moves or checks a build asks here
// instead of recognising paths or branching on a layout's name: the
// build and the server register one writer and one loader per layout
// (see Layouts); publish, bundle, verify and rules read a kind's fields
// and a layout's. A new kind of output (a reader feed, a sitemap) is one
// more Kind: its name, how its path is recognised, its Content-Type, its
// step in a publish; and the layouts that write it list it.
package layout

import (
	"path"
	"strings"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/syndication"
)

// ManifestPath is the file, in the output folder, of a build's manifest.
const ManifestPath = "manifest.json"

// Kind is the kind of a file of an output folder.
type Kind uint8

// The kinds of files a build writes, and Other.
const (
	Other    Kind = iota // not a file a build writes: another tool's, or a person's
	Manifest             // manifest.json, written last: it names every other file
	Page                 // a pre-rendered page (listing.PageKey)
	Index                // a collection's chunk index (chunk.IndexPath)
	Chunk                // articles of a collection, named by their SHA-256 (chunk.ChunkPath)
	Leaf                 // a run of a collection's chunks, named by its SHA-256 (chunk.LeafPath); an index's root names its leaves
	Feed                 // a collection's reader feed, in one of syndication.Formats (FeedPath)
)

// kind is what a Kind is, as data.
type kind struct {
	name string
	// immutable: the file's name is its bytes' digest, so a cache may
	// keep it for ever.
	immutable bool
	// unlisted: the manifest does not name the file; the files of the
	// kind that names it do (a chunk is named by its indexes).
	unlisted bool
	// step is the step of a publish in which the file goes up: every file
	// of a step is in the bucket before any of the next step is sent, so
	// that nothing in a bucket names a file that is not there.
	step int
}

func (k Kind) data() kind {
	switch k {
	case Manifest:
		return kind{name: "manifest", step: 2}
	case Page:
		return kind{name: "page", step: 1}
	case Index:
		return kind{name: "chunk index", step: 1}
	case Chunk:
		return kind{name: "chunk", immutable: true, unlisted: true, step: 0}
	case Leaf:
		return kind{name: "chunk index leaf", immutable: true, unlisted: true, step: 0}
	case Feed:
		return kind{name: "feed", step: 1}
	}
	return kind{name: "file", step: 1}
}

// Classify returns the kind of the file at p, slash-separated and
// relative to the output folder (or a bucket's prefix).
func Classify(p string) Kind {
	switch {
	case p == ManifestPath:
		return Manifest
	case chunk.IsChunk(p):
		return Chunk
	case chunk.IsLeaf(p):
		return Leaf
	case chunk.IsIndex(p):
		return Index
	}
	if _, ok := FeedFormat(p); ok {
		return Feed
	}
	if _, ok := listing.ParsePageKey(p); ok {
		return Page
	}
	return Other
}

// String names the kind, for messages: "page", "chunk", "chunk index".
func (k Kind) String() string { return k.data().name }

// ContentType returns the Content-Type of the file at p, as served and
// published: its format's for a feed, the listing's JSON for every other.
func ContentType(p string) string {
	if f, ok := FeedFormat(p); ok {
		return f.ContentType
	}
	return listing.ContentType
}

// FeedPath returns the path of the feed in format f of the collection
// whose folder is dir (listing.CollectionDir).
func FeedPath(dir string, f syndication.Format) string { return dir + "/" + f.File }

// FeedFormat returns the format of the feed at p, and whether p is a path
// FeedPath gives, for listing.Dir or a folder inside it that is not the
// chunks'.
func FeedFormat(p string) (syndication.Format, bool) {
	dir, file := path.Split(p)
	f, ok := syndication.FormatOfFile(file)
	if !ok || dir == "" {
		return syndication.Format{}, false
	}
	dir = dir[:len(dir)-1]
	if dir != listing.Dir && (!strings.HasPrefix(dir, listing.Dir+"/") || dir == chunk.Dir || strings.HasPrefix(dir, chunk.Dir+"/")) {
		return syndication.Format{}, false
	}
	return f, true
}

// Immutable reports whether a file of the kind is named by its bytes'
// digest, and so never changes.
func (k Kind) Immutable() bool { return k.data().immutable }

// CacheControl returns the Cache-Control of a file of the kind in a
// bucket: ImmutableCacheControl for an immutable one, else configured
// (config publish.cache_control).
func (k Kind) CacheControl(configured string) string {
	if k.Immutable() {
		return ImmutableCacheControl
	}
	return configured
}

// ImmutableCacheControl is the Cache-Control of an immutable file (a
// chunk) in a bucket: its name is its bytes' digest, so it may be kept
// for ever.
const ImmutableCacheControl = "public, max-age=31536000, immutable"

// Listed reports whether the manifest names the files of the kind; those
// of an unlisted kind are named by other files (a chunk by its indexes),
// which a reader expands (manifest.Expand).
func (k Kind) Listed() bool { return !k.data().unlisted }

// Names reports whether a file of the kind names files of an unlisted
// kind (an index's root names its leaves, a leaf its chunks).
func (k Kind) Names() bool { return k == Index || k == Leaf }

// Step returns the step of a publish in which a file of the kind goes
// up: every file of a step before any file of the next one (chunks and
// leaves, then pages and indexes' roots, then the manifest).
func (k Kind) Step() int { return k.data().step }

// Steps is the number of steps of a publish (see Step).
const Steps = 3

// Built reports whether the file at p, relative to the output folder (or
// a bucket's prefix), is one a build writes under listing.Dir: a page, a
// chunk, a collection's index or feed. Build and publish delete no other file
// there (each adds the temporary files it writes itself): a web root's
// articles/index.html, or a source article of a folder that is also a
// site's content, is another tool's, or a person's.
func Built(p string) bool {
	switch Classify(p) {
	case Page, Index, Chunk, Leaf, Feed:
		return true
	}
	return false
}

// NameOf returns the path a file of kind k with SHA-256 sum must have,
// and true, when its name is its digest (Immutable); "" and false for the
// other kinds.
func (k Kind) NameOf(sum [32]byte) (string, bool) {
	switch k {
	case Chunk:
		return chunk.ChunkPath(sum), true
	case Leaf:
		return chunk.LeafPath(sum), true
	}
	return "", false
}
