package importer

import (
	"bytes"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"gopkg.in/yaml.v3"
)

// Front matter and config.yaml are yaml.v3 nodes, each value with the
// style that keeps it exact: text in double quotes, where YAML escapes
// whatever it must (CR, tabs, U+2028, a BOM, ...) and nothing is read as
// a number, a boolean, null or a comment; whole numbers and published
// times plain; keys plain unless yaml.v3 has to quote them. The site is
// then read back by feedgen's loaders (verify.go): a value that did not
// survive would be refused, never written.

// configName is the config file of the site.
const configName = "config.yaml"

// siteConfig is what config.yaml says.
type siteConfig struct {
	siteURL, baseURL, timezone string
	sections                   map[string]map[string]string
	authors                    []author
	def, max                   int
	limits                     []int
	aligned                    bool
	layout                     layout.Layout
	articles                   int

	all, alignedSize int64 // estimated size of the pages, each offsets mode
	chunks           int64 // estimated size of the chunks
}

// write puts config.yaml for the articles into the site, with its
// estimate of the pages.
func (sc *siteConfig) write(s *Site, articles []*article) error {
	sc.articles = len(articles)
	sc.estimate(articles)
	switch {
	case sc.layout.Has(layout.Chunk):
		s.Estimate = sc.chunks
	case sc.aligned:
		s.Estimate = sc.alignedSize
	default:
		s.Estimate = sc.all
	}
	data, err := sc.yaml()
	if err != nil {
		return fmt.Errorf("writing config.yaml: %w", err)
	}
	s.Files[configName] = data
	return nil
}

// pageHead is about the size of a page's count and links.
const pageHead = 200

// estimate computes the size of the pages of the articles, with every
// offset and with aligned ones: a page of limit L at offset O holds the
// articles O to O+L-1, so article i is on min(i+1, L) pages of L with
// every offset, and on one with aligned offsets; and of the chunks, that
// hold each article once (a collection, the listing: no filters).
func (sc *siteConfig) estimate(articles []*article) {
	sc.all, sc.alignedSize, sc.chunks = 0, 0, 0
	for _, a := range articles {
		sc.chunks += int64(a.size + 1)
	}
	for _, l := range sc.limits {
		pages := max(1, (len(articles)+l-1)/l)
		sc.alignedSize += int64(pages * pageHead)
		sc.all += int64(max(1, len(articles)) * pageHead)
		for i, a := range articles {
			n := int64(a.size + 1)
			sc.alignedSize += n
			sc.all += n * int64(min(i+1, l))
		}
	}
}

func keyNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s}
}

func textNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: s, Style: yaml.DoubleQuotedStyle}
}

func intNode(n int64) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!int", Value: strconv.FormatInt(n, 10)}
}

func plainNode(s string) *yaml.Node {
	return &yaml.Node{Kind: yaml.ScalarNode, Value: s}
}

func mappingNode(style yaml.Style) *yaml.Node {
	return &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Style: style}
}

// add appends key: v to the mapping m, with comment lines above it.
func add(m *yaml.Node, key string, v *yaml.Node, comment ...string) {
	k := keyNode(key)
	if len(comment) > 0 {
		k.HeadComment = "# " + strings.Join(comment, "\n# ")
	}
	m.Content = append(m.Content, k, v)
}

// encode writes n as YAML, indented by two spaces.
func encode(b *bytes.Buffer, n *yaml.Node) error {
	enc := yaml.NewEncoder(b)
	enc.SetIndent(2)
	if err := enc.Encode(n); err != nil {
		return err
	}
	return enc.Close()
}

// yaml returns config.yaml.
func (sc *siteConfig) yaml() ([]byte, error) {
	m := mappingNode(0)
	sections := 0
	for _, cats := range sc.sections {
		sections += len(cats)
	}
	add(m, "site_url", keyNode(sc.siteURL),
		fmt.Sprintf("Written by feedgen import: %s in %s, %s, %s.",
			human.Plural(sc.articles, "article"), human.Plural(len(sc.sections), "section"),
			categories(sections), human.Plural(len(sc.authors), "author")),
		"The listing shows no article bodies, drafts, scheduled articles, filters or page",
		"sizes besides the default and the largest: add them here and under content/.")
	add(m, "base_url", keyNode(sc.baseURL))
	add(m, "timezone", keyNode(sc.timezone),
		"The listing does not show the service's time zone: published times are kept as",
		"written. Set the site's own (e.g. Europe/Moscow) for articles scheduled later.")

	secs := mappingNode(0)
	for _, s := range slices.Sorted(maps.Keys(sc.sections)) {
		cats := mappingNode(0)
		for _, slug := range slices.Sorted(maps.Keys(sc.sections[s])) {
			add(cats, slug, textNode(sc.sections[s][slug]))
		}
		add(secs, s, cats)
	}
	add(m, "sections", secs, "section: {section_slug: display name}, from the articles' URLs and categories.")

	authors := mappingNode(0)
	for _, au := range sc.authors {
		a := mappingNode(yaml.FlowStyle)
		add(a, "name", textNode(au.name))
		add(a, "url", textNode(au.url))
		add(authors, au.key, a)
	}
	add(m, "authors", authors, "Keyed by the last segment of the profile URL; articles whose author has no",
		"such key keep author_name and author_url.")

	add(m, "pagination", sc.pagination())
	add(m, "content_dir", plainNode("content"))
	add(m, "output_dir", plainNode("public"))

	var b bytes.Buffer
	if err := encode(&b, m); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// pagination returns config.yaml's pagination: layout: chunks, or a
// file per page with the limits and the offsets mode; and
// max_output_bytes when the estimate comes near its default.
func (sc *siteConfig) pagination() *yaml.Node {
	pg := mappingNode(0)
	add(pg, "default_limit", intNode(int64(sc.def)))
	add(pg, "max_limit", intNode(int64(sc.max)))
	size := sc.chunks
	if sc.layout.EveryPage { // no limits nor offsets to write
		add(pg, "layout", plainNode(sc.layout.Name),
			"chunks: every page size up to max_limit at every offset, as the service answers",
			fmt.Sprintf("(about %s of chunks here), put together per request by feedgen serve, or by", human.Bytes(sc.chunks)),
			"nginx with njs, Cloudflare or Netlify. A plain file server needs layout: pages",
			"(feedgen import --layout pages; or feedgen rules says which keys to set).")
	} else {
		limits := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, l := range sc.limits {
			limits.Content = append(limits.Content, intNode(int64(l)))
		}
		add(pg, "limits", limits)
		offsets := listing.OffsetsAll
		size = sc.all
		if sc.aligned {
			offsets, size = listing.OffsetsAligned, sc.alignedSize
		}
		add(pg, "offsets", plainNode(offsets),
			fmt.Sprintf("all: every offset, as the service answers any (about %s of pages here);", human.Bytes(sc.all)),
			fmt.Sprintf("aligned: only the offsets next links reach (about %s).", human.Bytes(sc.alignedSize)))
	}
	if size > config.DefaultMaxOutputBytes*9/10 {
		gib := (size*5/4 + 1<<30 - 1) >> 30
		add(pg, "max_output_bytes", plainNode(strconv.FormatInt(gib, 10)+"GiB"), "The estimate above, and a quarter more.")
	}
	return pg
}

// frontMatter returns the file of an article: its front matter alone, every
// field explicit (announcement and images too: their defaults depend on the
// body and the config), tags as a list.
func frontMatter(a *article) ([]byte, error) {
	m := mappingNode(0)
	add(m, "id", intNode(a.ID))
	add(m, "title", textNode(a.Title))
	add(m, "published", plainNode(a.Published))
	add(m, "announcement", textNode(a.Announcement))
	if len(a.tags) > 0 {
		tags := &yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle}
		for _, t := range a.tags {
			tags.Content = append(tags.Content, textNode(t))
		}
		add(m, "tags", tags)
	}
	add(m, "pageviews", intNode(a.Pageviews))
	add(m, "comments_count", intNode(a.Comments))
	if a.authorKey != "" {
		add(m, "author", keyNode(a.authorKey))
	} else {
		add(m, "author_name", textNode(a.AuthorName))
		add(m, "author_url", textNode(a.AuthorURL))
	}
	add(m, "img_big", textNode(a.ImgBig))
	add(m, "img_big_2x", textNode(a.ImgBig2x))
	add(m, "img_small", textNode(a.ImgSmall))
	add(m, "img_small_2x", textNode(a.ImgSmall2x))
	var b bytes.Buffer
	b.WriteString("---\n")
	if err := encode(&b, m); err != nil {
		return nil, err
	}
	b.WriteString("---\n")
	return b.Bytes(), nil
}

// categories writes n categories.
func categories(n int) string {
	if n == 1 {
		return "1 category"
	}
	return strconv.Itoa(n) + " categories"
}
