package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/pool"
	"github.com/feedgen/feedgen/internal/syndication"
)

// The reader feeds of a build (config feeds:, SPEC §13): the feeds of
// every collection with articles, in each configured format, in the
// collection's folder, whatever the layout. A feed is written only when
// its bytes change, as a page is (pageWriter.put).

// feedPaths returns the paths of the feeds the build writes.
func (w *pageWriter) feedPaths() []string {
	fc := w.b.cfg.Feeds
	if fc == nil {
		return nil
	}
	var paths []string
	for _, c := range w.l.Collections {
		if c.Count() > 0 {
			for _, f := range fc.Formats {
				paths = append(paths, layout.FeedPath(c.Dir, f))
			}
		}
	}
	return paths
}

// feedSize estimates the bytes and files of the feeds of l: each about
// the size of the page of its items (an item's XML or JSON Feed object
// holds about what its article's JSON holds).
func feedSize(cfg *config.Config, l *feed.Listing, scratch []byte) (bytes int64, files int, _ []byte) {
	fc := cfg.Feeds
	if fc == nil {
		return 0, 0, scratch
	}
	for _, c := range l.Collections {
		if c.Count() == 0 {
			continue
		}
		var n int
		n, scratch = l.PageSize(feed.Page{Coll: c, Limit: min(fc.Items, c.Count())}, scratch)
		bytes += int64(n * len(fc.Formats))
		files += len(fc.Formats)
	}
	return bytes, files, scratch
}

// writeFeeds writes the feeds of every collection with articles, once
// the layout's files are written: the articles they read are then in the
// build's file of encoded articles (a lean build's stream has released
// them), wherever in the listing they are. It counts them in the Result,
// whose counts of the layout's files are made; w.feedFiles are what they
// became.
func (w *pageWriter) writeFeeds(ctx context.Context) error {
	fc := w.b.cfg.Feeds
	if fc == nil {
		return nil
	}
	var cs []*feed.Collection
	for _, c := range w.l.Collections {
		if c.Count() > 0 {
			cs = append(cs, c)
		}
	}
	written, repaired := w.written.Load(), w.repaired.Load()
	head := feedHead(w.b.cfg, w.l.BaseURL)
	files := make([][]manifest.File, len(cs))
	var size, rendered atomic.Int64
	err := pool.Run(ctx, len(cs), pool.Size(2), func() func(context.Context, int) error {
		var buf, scratch []byte
		return func(_ context.Context, i int) error {
			c := cs[i]
			var in [sha256.Size]byte
			in, scratch = feedInput(head, fc.Items, c, scratch)
			input := hex.EncodeToString(in[:])
			// Made of the same articles and config as the files the last
			// build wrote: the same bytes (as for a page: see decide).
			kept := w.byInput
			for _, f := range fc.Formats {
				o, known := w.old[layout.FeedPath(c.Dir, f)]
				kept = kept && known && o.Input == input && w.out.has(o)
			}
			if kept {
				for _, f := range fc.Formats {
					o := w.old[layout.FeedPath(c.Dir, f)]
					files[i] = append(files[i], o)
					size.Add(o.Size)
				}
				return nil
			}
			rendered.Add(int64(len(fc.Formats)))
			ch, items, err := feedOf(w.b.cfg, c)
			if err != nil {
				return err
			}
			for _, f := range fc.Formats {
				ch.FeedURL = listing.FeedURL(w.l.BaseURL, f.File, c.Params)
				buf = f.Append(buf[:0], &ch, items)
				sum := sha256.Sum256(buf)
				mf := manifest.File{Path: layout.FeedPath(c.Dir, f), Size: int64(len(buf)), SHA256: hex.EncodeToString(sum[:]), Input: input}
				if err := w.put(mf, buf); err != nil {
					return err
				}
				files[i] = append(files[i], mf)
				size.Add(mf.Size)
			}
			return nil
		}
	})
	if err != nil {
		return err
	}
	for _, fs := range files {
		w.feedFiles = append(w.feedFiles, fs...)
	}
	res := w.res
	n := len(w.feedFiles)
	res.Feeds = n
	res.Rendered += int(rendered.Load())
	res.Written += int(w.written.Load() - written)
	res.Repaired += int(w.repaired.Load() - repaired)
	res.Unchanged += n - int(w.written.Load()-written)
	res.Bytes += size.Load()
	return nil
}

// feedHead returns what every feed of the build is made of besides its
// collection, for feedInput: the config's feeds and what the channel and
// the dates read (site_url, base_url, the time zone's name and offsets:
// an update of the zone data changes the dates, as for the unchanged-build
// shortcut).
func feedHead(cfg *config.Config, baseURL string) []byte {
	fc := cfg.Feeds
	var b bytes.Buffer
	b.WriteString("feed 1\x00")
	for _, s := range []string{fc.Title, fc.Description, fc.Language, strconv.Itoa(fc.Items), cfg.SiteURL, baseURL, cfg.Timezone} {
		b.WriteString(s)
		b.WriteByte(0)
	}
	writeZone(&b, cfg.Location)
	return b.Bytes()
}

// feedInput returns the digest of what the feeds of collection c are made
// of, as the manifest records it (manifest.File.Input): head (feedHead),
// the collection's parameters, and the JSON and tags of its newest items
// articles. scratch is a buffer, returned for the next use.
func feedInput(head []byte, items int, c *feed.Collection, scratch []byte) ([sha256.Size]byte, []byte) {
	b := append(scratch[:0], head...)
	for _, p := range c.Params {
		b = append(append(append(append(b, p.Key...), 0), p.Value...), 0)
	}
	for i := range min(items, c.Count()) {
		b = append(append(b, c.ArticleJSON(i)...), 0)
		for _, t := range c.Articles[i].Tags {
			b = append(append(b, t...), 1)
		}
		b = append(b, 0)
	}
	return sha256.Sum256(b), b
}

// articleFields are the values of an article's JSON a feed's item reads.
type articleFields struct {
	Title        string `json:"title"`
	URL          string `json:"url"`
	Category     string `json:"category"`
	CategoryURL  string `json:"category_url"`
	Announcement string `json:"announcement"`
	ImgBig       string `json:"img_big"`
	AuthorName   string `json:"author_name"`
	AuthorURL    string `json:"author_url"`
	Published    string `json:"published"`
}

// feedOf returns the channel of collection c of l and its items: its
// newest feeds.items articles, read from their JSON (an article of a
// build that bounds its memory keeps nothing else of what it shows), and
// their tags.
func feedOf(cfg *config.Config, c *feed.Collection) (syndication.Channel, []syndication.Item, error) {
	fc := cfg.Feeds
	n := min(fc.Items, c.Count())
	items := make([]syndication.Item, n)
	var first articleFields
	for i := range n {
		var a articleFields
		js := c.ArticleJSON(i)
		if js == nil {
			return syndication.Channel{}, nil, fmt.Errorf("reading article %d of %s for its feed: its JSON is gone", i, c.Dir)
		}
		if err := json.Unmarshal(js, &a); err != nil {
			return syndication.Channel{}, nil, fmt.Errorf("reading article %d of %s for its feed: %w", i, c.Dir, err)
		}
		t, err := time.ParseInLocation(content.PublishedLayout, a.Published, cfg.Location)
		if err != nil {
			return syndication.Channel{}, nil, fmt.Errorf("reading article %d of %s for its feed: %w", i, c.Dir, err)
		}
		if i == 0 {
			first = a
		}
		items[i] = syndication.Item{Title: a.Title, Link: a.URL, Description: a.Announcement, Published: t,
			AuthorName: a.AuthorName, AuthorLink: a.AuthorURL, Categories: distinct(c.Articles[i].Tags), Image: a.ImgBig}
	}
	ch := syndication.Channel{Title: fc.Title, Link: cfg.SiteURL + "/", Description: fc.Description, Language: fc.Language}
	label := ""
	for _, p := range c.Params {
		switch p.Key {
		case "section":
			if label == "" {
				label, ch.Link = p.Value, cfg.SiteURL+"/"+p.Value+"/"
			}
		case "category":
			label, ch.Link = first.Category, first.CategoryURL
		case "tag":
			label = p.Value
		case "author":
			label, ch.Link = first.AuthorName, first.AuthorURL
		}
	}
	if label != "" {
		ch.Title += ": " + label
	}
	return ch, items, nil
}

// distinct returns tags without repeats, in their order.
func distinct(tags []string) []string {
	var out []string
	for _, t := range tags {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}
