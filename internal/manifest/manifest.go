// Package manifest owns the manifest of a build: the file, written last
// into the output folder, that lists every page with its size and SHA-256,
// the collections and their counts, and the pagination the pages were
// rendered with. The build writes it; the server, bundles and publishing
// read it and check a build against it here.
package manifest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// Name is the manifest's file name in the output folder.
const Name = layout.ManifestPath

// Format is the version of the manifest's format.
const Format = 1

// Manifest describes one build: the listing's parameters, and every page
// file with its size and SHA-256. It is written last, so it always
// describes complete files.
type Manifest struct {
	Format     int                `json:"format"`
	Generator  string             `json:"generator"`
	BuildTime  time.Time          `json:"build_time"`
	BaseURL    string             `json:"base_url"`
	Articles   int                `json:"articles"`
	Pagination listing.Pagination `json:"pagination"`
	// Filters are the filters of the config (config.Filters) whose
	// collections the build pre-rendered, one per value that an article
	// has: a query for another value of such a filter is answered with an
	// empty collection, not found.
	Filters []string `json:"filters,omitempty"`
	// ConfigSHA256 is the hex SHA-256 of the config file's bytes the
	// build read: a bundle holds that config, and no other.
	ConfigSHA256 string `json:"config_sha256,omitempty"`
	// ContentSHA256 is the hex digest of the content the build read (the
	// path, length and xxhash64 of every article file, drafts and
	// scheduled ones included; content.Site.Digest): publish compares it
	// with the site's content to say that the build is behind it.
	ContentSHA256 string       `json:"content_sha256,omitempty"`
	Collections   []Collection `json:"collections"`
	// Source, when set, says what the pages were made of; absent when
	// the build had warnings (a build that skips loading could not
	// repeat them) or the program cannot name its code (Options.Code).
	Source *Source `json:"source,omitempty"`
	Files  []File  `json:"files"`
}

// Source identifies the inputs of a build, so that a later build of the
// same inputs, in another process, can tell that its pages would be the
// same without parsing a file: it reads and hashes the content, and stops
// there when Digest is the same and the build time is within From and
// Until.
type Source struct {
	// Digest is the hex SHA-256 of the program's code, the config, the
	// time zone's offsets, the build options, the path, length and
	// xxhash64 of every article file, and the manifest's own bytes as
	// written, with this field empty (which list the path, size and
	// SHA-256 of every page, and every count): a manifest changed since,
	// at the same size too, is no build's, and the next build rewrites
	// it. The xxhash tells changed bytes from
	// unchanged ones, as a file system's modification time would try to;
	// it is no defence against content crafted to collide.
	Digest    string `json:"digest"`
	Drafts    int    `json:"drafts"`
	Scheduled int    `json:"scheduled"`
	// From is the latest publication of a listed article and Until the
	// earliest of a scheduled one: a build time before From or from Until
	// on lists other articles. Absent: no bound (and both absent with
	// --future).
	From  *time.Time `json:"from,omitempty"`
	Until *time.Time `json:"until,omitempty"`
}

// Collection is one collection: its folder, filter and article count.
type Collection struct {
	Dir    string          `json:"dir"`
	Params []listing.Param `json:"params"`
	Count  int             `json:"count"`
}

// File is one page of the output.
type File struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
	// Input is the hex digest of what the page was made of
	// (see feed.Listing.PageInput): the next build, in another process, finds
	// the pages whose input did not change without rendering them.
	Input string `json:"input,omitempty"`
}

// Parse reads a manifest and checks its format version.
func Parse(data []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if m.Format != Format {
		return nil, fmt.Errorf("manifest format %d is not supported (this feedgen reads format %d): rebuild the output", m.Format, Format)
	}
	return &m, nil
}

// ParseHead is Parse without what the manifest lists (Files and
// Collections stay nil, and are not checked: a manifest whose lists are
// damaged is refused by Parse, which Publish runs too): what a
// comparison of the build with its site needs, of a manifest that may
// list a million pages.
func ParseHead(data []byte) (*Manifest, error) {
	var h struct {
		Manifest
		// Named again, so that these and not the Manifest's are decoded:
		// into nothing.
		Collections skipped `json:"collections"`
		Files       skipped `json:"files"`
	}
	if err := json.Unmarshal(data, &h); err != nil {
		return nil, fmt.Errorf("reading manifest: %w", err)
	}
	if h.Format != Format {
		return nil, fmt.Errorf("manifest format %d is not supported (this feedgen reads format %d): rebuild the output", h.Format, Format)
	}
	return &h.Manifest, nil
}

// skipped is a JSON value read and not kept.
type skipped struct{}

func (*skipped) UnmarshalJSON([]byte) error { return nil }

// Marshal writes the manifest deterministically, one file per line, so
// that it diffs well. In the chunks layout, the file lists the indexes
// and not the chunks: each index names its chunks, and their names are
// their SHA-256 (a tree of digests, as git's), so the manifest stays
// small however many chunks there are, and a publish after one change
// uploads a manifest of a line per collection, not per chunk. Read puts
// the chunks back into Files (see Expand).
func (m *Manifest) Marshal() []byte {
	var b bytes.Buffer
	head := *m
	head.Files = nil
	h, _ := json.Marshal(head)
	b.Write(h[:len(h)-len(`,"files":null}`)])
	b.WriteString(",\n\"files\":[\n")
	first := true
	l := layout.Of(m.Pagination)
	for _, f := range m.Files {
		if k := layout.Classify(f.Path); !k.Listed() && l.Has(k) {
			continue // named by the indexes: see Expand
		}
		if !first {
			b.WriteString(",\n")
		}
		first = false
		b.WriteString(`{"path":`)
		b.Write(listing.AppendString(nil, f.Path))
		b.WriteString(`,"size":`)
		b.WriteString(strconv.FormatInt(f.Size, 10))
		b.WriteString(`,"sha256":"`)
		b.WriteString(f.SHA256)
		if f.Input != "" {
			b.WriteString(`","input":"`)
			b.WriteString(f.Input)
		}
		b.WriteString(`"}`)
	}
	b.WriteString("\n]}\n")
	return b.Bytes()
}
