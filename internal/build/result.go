package build

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// Result describes a finished build.
type Result struct {
	OutDir    string
	Articles  int
	Drafts    int
	Scheduled int
	// NextScheduled is when the first scheduled article is due: the
	// build then lists other articles. Zero when none is scheduled.
	NextScheduled time.Time
	Reparsed      int // article files parsed (the rest were cached)
	Read          int // article files read (the others' stamps were those the cache of sources records)
	// Skipped is set when the inputs were those the output was built
	// from (Options.Code): no file was parsed, no page rendered.
	Skipped bool

	Pages    int  // files: pages, or chunks and indexes
	Chunked  bool // the chunks layout: Pages are chunks and indexes
	Chunks   int  // of Pages, the chunks
	Feeds    int  // reader feeds (config feeds:), not in Pages; in Rendered, Written, Unchanged and Bytes
	Rendered int  // pages rendered (the others were known unchanged)
	Written  int
	// Repaired counts, of Written, the files written again with the
	// bytes the last build wrote: changed or damaged since.
	Repaired  int
	Unchanged int
	Deleted   int
	Bytes     int64 // size of all pages
	Estimate  int64 // size computed before writing
	Duration  time.Duration
	Warnings  diag.List
	Manifest  *manifest.Manifest
	// ManifestData is the manifest as written.
	ManifestData []byte
}

// Summary is the one-line report of a build.
func (r *Result) Summary() string {
	var b strings.Builder
	b.WriteString(human.Plural(r.Articles, "article"))
	var left []string
	if r.Drafts > 0 {
		left = append(left, human.Plural(r.Drafts, "draft"))
	}
	if r.Scheduled > 0 {
		left = append(left, strconv.Itoa(r.Scheduled)+" scheduled")
	}
	if len(left) > 0 {
		fmt.Fprintf(&b, " (%s left out)", strings.Join(left, ", "))
	}
	files := human.Plural(r.Pages, "page")
	if r.Chunked {
		indexes := strconv.Itoa(r.Pages-r.Chunks) + " indexes"
		if r.Pages-r.Chunks == 1 {
			indexes = "1 index"
		}
		files = human.Plural(r.Chunks, "chunk") + " and " + indexes
	}
	if r.Feeds > 0 {
		files += " and " + human.Plural(r.Feeds, "feed")
	}
	written := strconv.Itoa(r.Written) + " written"
	if r.Repaired > 0 {
		written += " (" + strconv.Itoa(r.Repaired) + " repaired: changed since the last build)"
	}
	fmt.Fprintf(&b, ", %s in %s: %s, %d unchanged, %d deleted, %s (estimated %s), %s",
		files, filepath.Join(r.OutDir, listing.Dir), written, r.Unchanged, r.Deleted,
		human.Bytes(r.Bytes), human.Bytes(r.Estimate), r.Duration.Round(time.Millisecond))
	if r.Skipped {
		b.WriteString(", inputs unchanged")
	}
	return b.String()
}
