package syndication

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
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

// Formats returns every format of feed (a copy: the table does not
// change).
func Formats() []Format { return slices.Clone(formats[:]) }

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

// Modified returns the newest publication time of the feed body in
// format f, as Latest found it when the feed was written: from RSS's
// lastBuildDate, Atom's updated, or JSON Feed's newest date_published.
func Modified(f Format, body []byte) (time.Time, error) {
	field := func(open, close, layout string) (time.Time, error) {
		_, rest, ok := bytes.Cut(body, []byte(open))
		v, _, ok2 := bytes.Cut(rest, []byte(close))
		if !ok || !ok2 {
			return time.Time{}, fmt.Errorf("%s feed without %s", f.Name, open)
		}
		return time.Parse(layout, string(v))
	}
	switch f.Name {
	case "rss":
		return field("<lastBuildDate>", "</lastBuildDate>", "Mon, 02 Jan 2006 15:04:05 -0700")
	case "atom":
		return field("<updated>", "</updated>", "2006-01-02T15:04:05-07:00")
	}
	var feed struct {
		Items []struct {
			DatePublished string `json:"date_published"`
		} `json:"items"`
	}
	if err := json.Unmarshal(body, &feed); err != nil {
		return time.Time{}, fmt.Errorf("json feed: %w", err)
	}
	var latest time.Time
	for i, it := range feed.Items {
		t, err := time.Parse("2006-01-02T15:04:05-07:00", it.DatePublished)
		if err != nil {
			return time.Time{}, fmt.Errorf("json feed: %w", err)
		}
		if i == 0 || t.After(latest) {
			latest = t
		}
	}
	if len(feed.Items) == 0 {
		return time.Time{}, fmt.Errorf("json feed without items")
	}
	return latest, nil
}
