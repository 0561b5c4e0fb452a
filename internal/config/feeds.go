package config

import (
	"strings"

	"github.com/feedgen/feedgen/internal/syndication"
	"github.com/feedgen/feedgen/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// DefaultFeedLanguage is feeds.language when the config does not set it.
const DefaultFeedLanguage = "en-us"

// Feeds is what the reader feeds of every collection say (feeds:, SPEC
// §13).
type Feeds struct {
	Title       string
	Description string
	// Items is how many of a collection's newest articles its feeds
	// hold: pagination.default_limit by default, at most max_limit.
	Items    int
	Language string
	// Formats are the formats written, in syndication.Formats' order.
	Formats []syndication.Format
}

var feedKeys = []string{"title", "description", "items", "language", "formats"}

// feedsSeen is what feeds: said, for the checks after pagination is known.
type feedsSeen struct {
	itemsLine int // 0: items not set
}

// feeds reads the feeds mapping n into c.Feeds (nil: no feeds).
func (p *parser) feeds(c *Config, n *yaml.Node, seen *feedsSeen) {
	if yamlnode.IsNull(n) {
		p.errorf(n.Line, "feeds: empty: give at least title and description, or leave feeds out for no feeds")
		return
	}
	pairs, err := yamlnode.Mapping(n)
	if err != nil {
		p.nodeErr("feeds", n, err)
		return
	}
	f := &Feeds{Language: DefaultFeedLanguage, Formats: syndication.Formats()}
	var haveTitle, haveDescription bool
	text := func(e yamlnode.Pair) string {
		s, err := yamlnode.String(e.Value)
		if err != nil {
			p.nodeErr("feeds."+e.Key, e.Value, err)
			return ""
		}
		if strings.TrimSpace(s) == "" {
			p.errorf(e.Value.Line, "feeds.%s: empty: write what readers see, e.g. %s: Example News", e.Key, e.Key)
		}
		return s
	}
	for _, e := range pairs {
		switch e.Key {
		case "title":
			f.Title, haveTitle = text(e), true
		case "description":
			f.Description, haveDescription = text(e), true
		case "language":
			f.Language = text(e)
		case "items":
			v, err := yamlnode.Int(e.Value)
			if err != nil {
				p.nodeErr("feeds.items", e.Value, err)
				break
			}
			if v <= 0 {
				p.errorf(e.Value.Line, "feeds.items: %d: a feed holds at least one article; leave items out for pagination.default_limit", v)
				break
			}
			f.Items, seen.itemsLine = int(min(v, 1<<31-1)), e.Value.Line
		case "formats":
			f.Formats = p.feedFormats(e.Value)
		default:
			p.unknown("feeds.", e, feedKeys)
		}
	}
	if !haveTitle {
		p.errorf(n.Line, "feeds.title is missing: add the feeds' title, e.g. title: Example News")
	}
	if !haveDescription {
		p.errorf(n.Line, "feeds.description is missing: add what the feeds are, e.g. description: The latest articles")
	}
	c.Feeds = f
}

// feedFormats reads feeds.formats: the names of syndication.Formats,
// returned in that order.
func (p *parser) feedFormats(n *yaml.Node) []syndication.Format {
	names, err := yamlnode.Strings(n)
	if err != nil {
		p.nodeErr("feeds.formats", n, err)
		return nil
	}
	var known []string
	for _, f := range syndication.Formats() {
		known = append(known, f.Name)
	}
	if len(names) == 0 {
		p.errorf(n.Line, "feeds.formats: empty: list at least one of %s, or leave formats out for all", strings.Join(known, ", "))
	}
	seen := map[string]bool{}
	for i, name := range names {
		line := deref(n).Content[i].Line
		switch _, ok := syndication.FormatNamed(name); {
		case !ok:
			p.errorf(line, "%s", unknownName("feed format", "", name, known))
		case seen[name]:
			p.errorf(line, "feeds.formats: %q is listed twice: list each format once", name)
		}
		seen[name] = true
	}
	var out []syndication.Format
	for _, f := range syndication.Formats() {
		if seen[f.Name] {
			out = append(out, f)
		}
	}
	return out
}

// checkFeeds completes c.Feeds once pagination is known: items defaults
// to pagination.default_limit and may not pass max_limit.
func (p *parser) checkFeeds(c *Config, seen feedsSeen) {
	f := c.Feeds
	if f == nil {
		return
	}
	if f.Items == 0 {
		f.Items = c.Pagination.DefaultLimit
	}
	if most := c.Pagination.MaxLimit; most > 0 && f.Items > most {
		p.errorf(seen.itemsLine, "feeds.items: %d is more than pagination.max_limit (%d): a feed holds at most a page of the largest size", f.Items, most)
	}
}
