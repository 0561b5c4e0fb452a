// Package content loads a site's articles: markdown files with YAML front
// matter under content/<section>/<section_slug>/<slug>.md. It validates
// every file, resolves URLs, authors and defaults against the config, and
// reports every problem of a run at once, as "path:line: message".
package content

import (
	"strings"
	"time"
)

// Article is one validated article, with every field of the listing
// resolved to the text it is published with.
type Article struct {
	ID           int64
	Title        string
	URL          string
	Category     string
	CategoryURL  string
	Announcement string
	Tags         []string
	Pageviews    int64
	Comments     int64
	ImgBig       string
	ImgBig2x     string
	ImgSmall     string
	ImgSmall2x   string
	AuthorKey    string // key into config authors; "" for an inline author
	AuthorName   string
	AuthorURL    string

	// Published is the publication time as written, in the site's local
	// time: its wall clock is what is published and what orders the
	// listing. Instant is the same moment as an absolute time, used for
	// scheduled publishing.
	Published time.Time
	Instant   time.Time

	Section     string
	SectionSlug string
	Slug        string
	Draft       bool

	// Path is the source file, as reported in messages; Line is the line
	// of its id key.
	Path string
	Line int
}

// PublishedLayout is the format of published, in front matter and output.
const PublishedLayout = "2006-01-02T15:04:05"

// Before reports whether a is listed before b: the listing is newest
// first (by the wall clock of Published, not the instant), equal
// publication times broken by id, higher first.
func Before(a, b *Article) bool {
	if !a.Published.Equal(b.Published) {
		return a.Published.After(b.Published)
	}
	return a.ID > b.ID
}

// Ignored reports whether a file or folder of the content folder, by its
// name, is left out of the site: names starting with '_' or '.' (drafts
// kept aside, editors' and tools' files).
func Ignored(name string) bool {
	return strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".")
}
