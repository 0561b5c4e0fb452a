package syndication

import (
	"time"
)

// Channel is what a feed says of itself.
type Channel struct {
	Title       string
	Link        string // the page of the collection on the site
	Description string
	Language    string
	FeedURL     string // the feed's own absolute URL
}

// Item is one article of a feed.
type Item struct {
	Title       string
	Link        string
	Description string
	// Published is the article's publication time, in the site's time
	// zone: its offset is the one the feed writes.
	Published  time.Time
	AuthorName string
	AuthorLink string
	Categories []string
	Image      string // JSON Feed's image; "" for none
}

// Format is one format of feed.
type Format struct {
	Name        string // as config.yaml's feeds.formats names it
	File        string // the feed's file in its collection's folder
	ContentType string
	// Append appends the feed of ch and items, newest first, to dst.
	Append func(dst []byte, ch *Channel, items []Item) []byte
}

// formats are the formats of feed, in the order config.yaml lists them by
// default.
var formats = [...]Format{
	{Name: "rss", File: "feed.rss", ContentType: "application/rss+xml; charset=utf-8", Append: AppendRSS},
	{Name: "atom", File: "feed.atom", ContentType: "application/atom+xml; charset=utf-8", Append: AppendAtom},
	{Name: "json", File: "feed.json", ContentType: "application/feed+json", Append: AppendJSON},
}

// Formats returns every format of feed.
func Formats() []Format { return formats[:] }

// FormatNamed returns the format called name, and whether there is one.
func FormatNamed(name string) (Format, bool) {
	for _, f := range formats {
		if f.Name == name {
			return f, true
		}
	}
	return Format{}, false
}

// FormatOfFile returns the format whose file is name, and whether there
// is one.
func FormatOfFile(name string) (Format, bool) {
	for _, f := range formats {
		if f.File == name {
			return f, true
		}
	}
	return Format{}, false
}

// Latest returns the newest publication time of items, as Django's
// latest_post_date finds it (the latest instant, with its own offset, in
// Django's zone: see djangoTime); the zero time when there are none.
func Latest(items []Item) time.Time {
	var latest time.Time
	for i, it := range items {
		if t := djangoTime(it.Published); i == 0 || t.After(latest) {
			latest = t
		}
	}
	return latest
}

// LastModified returns the Last-Modified header Django sends with a feed
// of items: the newest publication time in GMT.
func LastModified(items []Item) string {
	return Latest(items).UTC().Format(time.RFC1123[:len(time.RFC1123)-3] + "GMT")
}
