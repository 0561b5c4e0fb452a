// Package content loads a site's articles: markdown files with YAML front
// matter under content/<section>/<section_slug>/<slug>.md. It validates
// every file, resolves URLs, authors and defaults against the config, and
// reports every problem of a run at once, as "path:line: message".
package content

import (
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// Article is one validated article, with every field of the listing
// resolved to the text it is published with. What orders, filters and
// checks articles is in Article itself; what only its JSON shows is in
// Shown, which Slim drops once the article is encoded.
type Article struct {
	ID   int64
	URL  string
	Tags []string
	// AuthorKey is the key into config authors; "" for an inline author.
	AuthorKey string
	*Shown

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
	// Index is the place of the article's file among the files its Load
	// walked: unique among the articles of one Load, so that what is kept
	// beside them can be a slice rather than a map. Load sets it before
	// it calls Options.Parsed. A caching Loader hands the same *Article
	// to later Loads and sets it again: only the last Load's counts.
	Index int
}

// Shown holds the values of an article that only its JSON shows.
type Shown struct {
	Title        string
	Category     string
	CategoryURL  string
	Announcement string
	Pageviews    int64
	Comments     int64
	ImgBig       string
	ImgBig2x     string
	ImgSmall     string
	ImgSmall2x   string
	AuthorName   string
	AuthorURL    string
}

// Slim drops the values of a that only its JSON shows (Shown), once it
// is encoded, and its tags and author key unless keep has them (the
// fields the config's filters read, listing.Reads, and the tags when it
// has feeds): what orders, filters and checks articles stays. Its JSON
// cannot be made again from it.
func (a *Article) Slim(keep listing.Field) {
	a.Shown = nil
	reads := keep
	// What stays may be part of the file's front matter, held by the
	// strings cut from it: copies let it go.
	var tags []string
	if reads&listing.FieldTags != 0 && len(a.Tags) > 0 {
		tags = make([]string, len(a.Tags))
		for i, t := range a.Tags {
			tags[i] = strings.Clone(t)
		}
	}
	a.Tags = tags
	if reads&listing.FieldAuthor != 0 {
		a.AuthorKey = strings.Clone(a.AuthorKey)
	} else {
		a.AuthorKey = ""
	}
}

// Fields returns the values of a that filters select it by.
func (a *Article) Fields() listing.Fields {
	return listing.Fields{Section: a.Section, SectionSlug: a.SectionSlug, Tags: a.Tags, Author: a.AuthorKey}
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
