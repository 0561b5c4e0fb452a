package server

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// heldBuild is one build: everything its answers need, computed once
// when it is loaded (loadBuild), and where each page's body is. A
// heldBuild never changes after it is loaded (but for when each page was
// last sent, a hint: page.sentAt); the server swaps whole builds.
//
// A page's body is in one of two places. A build served from its output
// folder (Folder) keeps only the identity of each page file (see
// pageFile), recorded when the file was read and checked against the
// manifest; the bytes stay in the kernel's page cache and are sent from
// an open descriptor of that very inode (see fileCache). Any other build
// (Archive, such as a bundle, and Pushed, the preview's builds handed over in
// memory) keeps its bodies in stores outside the Go heap (see newStore),
// freed once unreachable: a handler keeps its heldBuild alive
// (runtime.KeepAlive) until it has written the body. A build loaded after
// another shares the stores, or the file records, of the pages they have
// in common.
type heldBuild struct {
	manifestSum [sha256.Size]byte // of the manifest's bytes: the build's identity
	buildTime   time.Time
	baseURL     string // of the links, for the pages past the end
	paging      listing.Pagination
	aligned     bool // offsets are multiples of the limit (else every offset)
	// layout is the build's (pagination.layout). A build of a layout
	// that writes no pages (chunks) has no pages in its collections but
	// an assembly each, assembled: see build_chunks.go; chunks holds the
	// chunks, by SHA-256.
	layout layout.Layout
	chunks map[[sha256.Size]byte]chunkBody
	// leaves are the leaves of the chunks' indexes, parsed, by the
	// SHA-256 of their bytes, each chunk they name held and checked
	// against them: a build loaded after this one takes those it has
	// too, neither parsed nor checked again (see checkLeaf).
	leaves map[[sha256.Size]byte]*parsedLeaf

	// main is the main listing (no filter); collections holds every
	// collection, main included, by collectionKey of its parameters.
	main        *collection
	collections map[string]*collection
	// filters are the query parameters that select a filtered collection
	// (listing.FilterKeys); kinds are the kinds of collection the build
	// pre-renders (listing.Kind): a query for one of them that no
	// collection matches is an empty collection, any other kind is not
	// found.
	filters []string
	kinds   map[string]bool

	lastModified []string // the Last-Modified header value
	pages        int      // page files, index.json included
	feeds        int      // feed files (see build_feeds.go)
	// feedFormats says, for each of syndication.Formats, whether the
	// build has feeds in it: the feed paths of the others are no paths of
	// the build's (build_feeds.go).
	feedFormats []bool
	bytes       int64
	read        int // pages read from files (the rest were known already)
	// unavailable are the pages, in the manifest's order, whose files did
	// not match it when the build was loaded in part (a build died
	// mid-write): answered 503 until the next build.
	unavailable []string

	bySum  map[[sha256.Size]byte]stored // every page body held in memory, by its SHA-256
	stores []*store                     // the stores of the bodies

	// dir is the output folder, open, when the pages are sent from their
	// files (nil when every body is in memory).
	dir *pageDir
	// remote is the bucket the bodies are read from (Bucket); nil for
	// any other source.
	remote *remote
	// replaced is closed when the server switches to another build: a
	// request that found one of this build's page files replaced by a
	// newer build waits for it (see Server.openBody).
	replaced chan struct{}
	// staleAt is when a request first found one of the build's page files
	// replaced (Unix nanoseconds; 0: never): the requests of this build
	// wait for the switch until SwitchTimeout after it, no longer.
	staleAt atomic.Int64
}

// collection is one list of articles with its own pages: the main
// listing, or one selected by filter parameters.
type collection struct {
	dir    string          // the folder of its pages in the output
	params []listing.Param // its filters, sorted by key; none for the main listing
	count  int             // articles
	limits []limitPages    // in the order of the pagination's limits
	// asm is where its articles are, in a build of the chunks layout; nil
	// there when its index did not match the manifest (answered 503).
	asm *assembly
	// feeds are its reader feeds, by the index of their format in
	// syndication.Formats (nil: none in that format); none without
	// articles (see build_feeds.go).
	feeds []*feedPage
	// feedsMod is the feeds' Last-Modified in a build of a bucket, read
	// when a request first needs it (bucketFeedsModified), when the last
	// build did not know it; nil until then.
	feedsMod atomic.Pointer[lastModified]
}

// limitPages are the pages of one pre-rendered limit, by offset (offsets
// all) or by offset/limit (aligned).
type limitPages struct {
	limit int
	pages []page
}

// page is one answer, ready to send. A page left zero (no etag) is one
// whose file did not match the manifest: see unavailable.
type page struct {
	// body is the page's bytes: in a store (st), in the mapping of its
	// file (file) when the file was mapped at load, or in the Go heap (a
	// page past the end); nil when the file is not mapped.
	body   []byte
	st     *store     // the store of body; nil when body is not in one
	file   *pageFile  // the page's file, for a build served from its folder
	remote *remoteRef // or the page's file in the bucket (see build_remote.go)
	etag   []string   // the quoted SHA-256 of the body
	length []string   // the body's length in decimal
	// sentAt is when the page was last sent, in milliseconds of the
	// wall clock, wrapping around (0: never): the one field that changes
	// after the load, only through recentlySent.
	sentAt uint32
	// held, in a page made for one answer of a build of a bucket (see
	// remote.page), holds its body, read from the bucket, until the answer
	// is written (reply.release): sent as it is, never spliced.
	held *remoteEntry
}

// hotPage is how soon after it was last sent a page is sent again for it
// to be recently sent (see recentlySent).
const hotPage = 10 // milliseconds

// recentlySent reports whether the page was last sent less than hotPage
// before now, and records now as the time it was last sent. A page sent
// that often is spliced, else copied (see socket.Sender): with wrk
// asking for 1 or 512 pages in turn (each sent again within 4 ms),
// splicing answered 5 to 10% more requests a second than copying; with
// 2,048 or 10,000 pages (20 ms and more), copying answered 5% more. The
// time is written at most once a millisecond, so that the processors
// sending one page do not take turns owning the field.
func (p *page) recentlySent(now time.Time) bool {
	ms := max(uint32(now.UnixMilli()), 1) // 0 is never
	last := atomic.LoadUint32(&p.sentAt)
	if last != ms {
		atomic.StoreUint32(&p.sentAt, ms)
	}
	return last != 0 && ms-last < hotPage
}

// unavailable reports whether the page is one whose file did not match
// the manifest (heldBuild.unavailable), answered 503.
func (p *page) unavailable() bool { return p.etag == nil }

// size is the length of the page's body.
func (p *page) size() int {
	if p.remote != nil && p.body == nil {
		return int(p.remote.size)
	}
	if p.file != nil {
		return int(p.file.id.size)
	}
	return len(p.body)
}

// stored is where a page body held in memory is.
type stored struct {
	st        *store
	off, size int64
}

// collection returns the collection that params (sorted by key, as
// listing.ParseQuery gives them) select, or nil when the build has none.
// It does not allocate for a key of up to 256 bytes.
func (hb *heldBuild) collection(params []listing.Param) *collection {
	if len(params) == 0 {
		return hb.main
	}
	var buf [256]byte
	return hb.collections[string(appendCollectionKey(buf[:0], params))]
}

// emptyCollection returns a collection without articles selected by
// params: what a query for a value that no article has gets, when the
// build pre-renders that kind of collection; nil when it does not.
func (hb *heldBuild) emptyCollection(params []listing.Param) *collection {
	if !hb.kinds[listing.Kind(params)] {
		return nil
	}
	c := &collection{params: params, limits: make([]limitPages, len(hb.main.limits))}
	for i, lp := range hb.main.limits {
		c.limits[i].limit = lp.limit
	}
	return c
}

// collectionKey is the key of the collection of params (sorted by key) in
// heldBuild.collections: "" for the main listing.
func collectionKey(params []listing.Param) string {
	return string(appendCollectionKey(nil, params))
}

// appendCollectionKey appends the key of the collection of params to b:
// each name and value preceded by its length, so that two lists of
// parameters never share a key.
func appendCollectionKey(b []byte, params []listing.Param) []byte {
	for _, p := range params {
		b = binary.AppendUvarint(b, uint64(len(p.Key)))
		b = append(b, p.Key...)
		b = binary.AppendUvarint(b, uint64(len(p.Value)))
		b = append(b, p.Value...)
	}
	return b
}

// lookup returns the limit's pages, or nil when the limit is not
// pre-rendered.
func (c *collection) lookup(limit int) *limitPages {
	for i := range c.limits {
		if c.limits[i].limit == limit {
			return &c.limits[i]
		}
	}
	return nil
}

// pagePath is the file of page i of limit l of collection c.
func (hb *heldBuild) pagePath(c *collection, l, i int) string {
	if hb.aligned {
		i *= l
	}
	return listing.PageKey{Dir: c.dir, Limit: l, Offset: i}.Path()
}

// emptyPage renders the page of collection c past its end for (limit,
// offset), offset a canonical decimal of any size.
func (hb *heldBuild) emptyPage(c *collection, limit int, offset string) page {
	body := listing.AppendEmptyPage(nil, hb.baseURL, c.params, c.count, limit, offset)
	sum := sha256.Sum256(body)
	return page{body: body, etag: []string{etag(sum[:])}, length: []string{strconv.Itoa(len(body))}}
}

// etag returns the strong entity tag of a body with SHA-256 sum.
func etag(sum []byte) string {
	b := make([]byte, 0, 2+hex.EncodedLen(len(sum)))
	b = append(b, '"')
	b = hex.AppendEncode(b, sum)
	return string(append(b, '"'))
}

// describe is a one-line description of the build, for the log.
func (hb *heldBuild) describe() string {
	files := human.Plural(hb.pages, "file")
	if ls, ok := layoutServers()[hb.layout.Name]; ok {
		files = ls.files(hb.pages)
	}
	if hb.feeds > 0 {
		files += ", " + human.Plural(hb.feeds, "feed")
	}
	return fmt.Sprintf("build of %s (%s, %s, %s)",
		hb.buildTime.UTC().Format(time.RFC3339), human.Plural(hb.main.count, "article"), files, human.Bytes(hb.bytes))
}

// unavailableLine is the line of the log about the pages of hb that did
// not match its manifest, naming the first few.
func (hb *heldBuild) unavailableLine() string {
	const named = 3
	paths := strings.Join(hb.unavailable[:min(len(hb.unavailable), named)], ", ")
	if len(hb.unavailable) > named {
		paths += ", ..."
	}
	verb, they, them := "do", "they", "them"
	if len(hb.unavailable) == 1 {
		verb, they, them = "does", "it", "it"
	}
	return fmt.Sprintf("%s of the build of %s %s not match its manifest (a build died or is being written, or %s changed since): %s; answering 503 for %s until a build rewrites %s (feedgen build; --clean checks every file's bytes)",
		human.Plural(len(hb.unavailable), "page"), hb.buildTime.UTC().Format(time.RFC3339), verb, they, paths, them, them)
}

// sameManifest reports whether data is the manifest hb was loaded from.
func (hb *heldBuild) sameManifest(data []byte) bool {
	return hb != nil && sha256.Sum256(data) == hb.manifestSum
}
