// Package config loads and validates a site's config.yaml.
package config

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// DefaultMaxOutputBytes is max_output_bytes when the config does not set it.
const DefaultMaxOutputBytes = 4 << 30

// DefaultCacheControl is publish.cache_control when the config does not set
// it: the Cache-Control of every object feedgen publish uploads.
const DefaultCacheControl = "public, max-age=60"

// Config is a validated site configuration.
type Config struct {
	// Path is the config file's path as given; Dir is its folder, against
	// which relative ContentDir and OutputDir are resolved.
	Path string
	Dir  string

	SiteURL       string // no trailing slash
	BaseURL       string // no trailing slash
	MediaURL      string // no trailing slash; SiteURL when not set
	Timezone      string
	Location      *time.Location
	DefaultAvatar string

	// Sections maps section → section_slug → display name.
	Sections map[string]map[string]string
	// Authors maps an author key to the author.
	Authors map[string]Author

	Pagination listing.Pagination
	// MaxOutputBytes bounds the bytes of a build's pages
	// (pagination.max_output_bytes).
	MaxOutputBytes int64

	// Filters are the names of the filtered collections to pre-render
	// (filters:): kinds of listing.Filters, in the table's order whatever
	// the config's order; none by default. category alone is valid: its
	// collections are selected by both section and category, as a
	// category is always within its section.
	Filters []string

	Publish Publish

	// Feeds are the reader feeds of every collection (feeds:); nil: none.
	Feeds *Feeds

	ContentDir string // as resolved against Dir
	// contentDir is content_dir as written, and contentDirLine its line
	// (0 when it is not set): for CheckContentDir's message.
	contentDir     string
	contentDirLine int
	OutputDir      string // as resolved against Dir
	// outputDir and outputDirLine are output_dir as written and its line
	// (0 when it is not set): for CheckOutputDir's message.
	outputDir     string
	outputDirLine int
}

// Author is an entry of the authors table.
type Author struct {
	Name string
	URL  string
}

// Publish is how feedgen publish uploads the output (publish:).
type Publish struct {
	CacheControl string // the Cache-Control of every object; DefaultCacheControl by default
}

var keys = []string{"site_url", "base_url", "media_url", "timezone", "default_avatar", "sections",
	"authors", "pagination", "filters", "publish", "feeds", "content_dir", "output_dir"}
var publishKeys = []string{"cache_control"}
var paginationKeys = []string{"default_limit", "max_limit", "limits", "offsets", "max_output_bytes", "layout"}
var authorKeys = []string{"name", "url"}

// Load reads and validates the config file at name in fsys. dir is the
// folder relative paths in the config are resolved against (usually the
// config file's folder on disk). Problems are returned as a diag.List.
func Load(fsys fs.FS, name, dir string) (*Config, error) {
	data, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("reading config: %w", err)
	}
	return Parse(name, dir, data)
}

// Parse validates the config file contents data; name is used in messages.
func Parse(name, dir string, data []byte) (*Config, error) {
	p := parser{name: name}
	c := p.parse(data)
	if len(p.errs) > 0 {
		return nil, p.errs
	}
	c.Path = name
	c.Dir = dir
	c.ContentDir = resolve(dir, c.ContentDir)
	c.OutputDir = resolve(dir, c.OutputDir)
	return c, nil
}

func resolve(dir, p string) string {
	if path.IsAbs(p) || strings.HasPrefix(p, "/") || dir == "" {
		return p
	}
	return path.Join(dir, p)
}

type parser struct {
	name string
	errs diag.List
}

func (p *parser) errorf(line int, format string, args ...any) {
	p.errs.Add(p.name, line, fmt.Sprintf(format, args...))
}

// nodeErr reports err found at node n.
func (p *parser) nodeErr(key string, n *yaml.Node, err error) {
	p.errorf(yamlnode.Line(err, n.Line), "%s: %v", key, err)
}

// parse reads the config: the defaults, then each key of the file in
// turn, then the checks that compare keys.
func (p *parser) parse(data []byte) *Config {
	c := &Config{
		Timezone:       "UTC",
		Location:       time.UTC,
		Sections:       map[string]map[string]string{},
		Authors:        map[string]Author{},
		ContentDir:     "content",
		OutputDir:      "public",
		Pagination:     listing.Pagination{DefaultLimit: 20, Offsets: listing.OffsetsAll},
		MaxOutputBytes: DefaultMaxOutputBytes,
		Publish:        Publish{CacheControl: DefaultCacheControl},
	}
	pairs, ok := p.top(data)
	if !ok {
		return c
	}
	var haveSite, haveBase bool
	var (
		pg    paging
		feeds feedsSeen
	)
	for _, kv := range pairs {
		v := kv.Value
		switch kv.Key {
		case "site_url":
			c.SiteURL, haveSite = p.absURL(kv), true
		case "base_url":
			c.BaseURL, haveBase = p.absURL(kv), true
		case "media_url":
			c.MediaURL = p.absURL(kv)
		case "timezone":
			p.timezone(c, kv)
		case "default_avatar":
			c.DefaultAvatar = p.str(kv)
		case "content_dir":
			if s := p.str(kv); s != "" {
				c.ContentDir, c.contentDir, c.contentDirLine = s, s, kv.KeyNode.Line
			}
		case "output_dir":
			if s := p.str(kv); s != "" {
				c.OutputDir, c.outputDir, c.outputDirLine = s, s, kv.KeyNode.Line
			}
		case "sections":
			p.sections(c, v)
		case "authors":
			p.authors(c, v)
		case "filters":
			c.Filters = p.filters(v)
		case "publish":
			p.publish(&c.Publish, v)
		case "feeds":
			p.feeds(c, v, &feeds)
		case "pagination":
			p.pagination(c, v, &pg)
		default:
			p.unknown("", kv, keys)
		}
	}
	if !haveSite {
		p.errorf(0, "site_url is missing: add e.g. site_url: https://www.example.com")
	}
	if !haveBase {
		p.errorf(0, "base_url is missing: add the address /articles/ is served from, e.g. base_url: https://api.example.com")
	}
	if c.MediaURL == "" {
		c.MediaURL = c.SiteURL
	}
	if !pg.typo {
		// With a key of pagination misspelt, the checks below would
		// blame the default it leaves in place: the typo says it all.
		p.checkPagination(&c.Pagination, &pg)
		p.checkFeeds(c, feeds)
	}
	if l := layout.Of(c.Pagination); l.EveryPage && c.Pagination.Offsets == listing.OffsetsAligned {
		p.errorf(firstLine(pg.offsetsLine, pg.layoutLine), "pagination.offsets: aligned has no meaning with layout: %s, which answers every offset: remove it", l.Name)
	}
	return c
}

// top returns the keys of the file's top mapping, or false (said) when
// it has none.
func (p *parser) top(data []byte) ([]yamlnode.Pair, bool) {
	root, err := yamlnode.Parse(data, 0)
	if err != nil {
		p.errorf(yamlnode.Line(err, 0), "%v", err)
		return nil, false
	}
	if root == nil {
		p.errorf(0, "config is empty: set at least site_url and base_url")
		return nil, false
	}
	pairs, err := yamlnode.Mapping(root)
	if err != nil {
		p.errorf(yamlnode.Line(err, root.Line), "%v", err)
		return nil, false
	}
	return pairs, true
}

// timezone reads timezone: an IANA name.
func (p *parser) timezone(c *Config, kv yamlnode.Pair) {
	s := p.str(kv)
	if s == "" {
		return
	}
	loc, err := time.LoadLocation(s)
	if err != nil {
		p.errorf(kv.Value.Line, "timezone: unknown time zone %q: use an IANA name such as Europe/Moscow or UTC", s)
		return
	}
	c.Timezone, c.Location = s, loc
}

// paging is what reading pagination: learns besides its values, for the
// checks that compare them (checkPagination): which keys it has, on
// which lines, and whether one is unknown.
type paging struct {
	haveLimits, haveMax                                   bool
	limitsLine, maxLine, defLine, layoutLine, offsetsLine int
	typo                                                  bool // an unknown key in pagination
}

// pagination reads pagination: into c.Pagination and c.MaxOutputBytes,
// and what pg records.
func (p *parser) pagination(c *Config, v *yaml.Node, pg *paging) {
	pp, err := yamlnode.Mapping(v)
	if err != nil {
		p.nodeErr("pagination", v, err)
		return
	}
	for _, e := range pp {
		switch e.Key {
		case "default_limit":
			c.Pagination.DefaultLimit, pg.defLine = p.limit(e), e.Value.Line
		case "max_limit":
			c.Pagination.MaxLimit, pg.haveMax, pg.maxLine = p.limit(e), true, e.Value.Line
		case "limits":
			pg.haveLimits, pg.limitsLine = true, e.Value.Line
			c.Pagination.Limits = append(c.Pagination.Limits, p.limits(e)...)
		case "offsets":
			s := p.str(e)
			if s != listing.OffsetsAll && s != listing.OffsetsAligned {
				p.errorf(e.Value.Line, "pagination.offsets: want %q or %q, got %q", listing.OffsetsAll, listing.OffsetsAligned, s)
				break
			}
			c.Pagination.Offsets, pg.offsetsLine = s, e.Value.Line
		case "layout":
			s := p.str(e)
			l, ok := layout.Named(s)
			if !ok || s == "" {
				p.errorf(e.Value.Line, "pagination.layout: want %s, got %q", layout.NameList(), s)
				break
			}
			c.Pagination.Layout, pg.layoutLine = l.Field(), e.Value.Line
		case "max_output_bytes":
			n, err := ParseSize(p.str(e))
			if err != nil {
				p.errorf(e.Value.Line, "pagination.max_output_bytes: %v", err)
				break
			}
			c.MaxOutputBytes = n
		default:
			p.unknown("pagination.", e, paginationKeys)
			pg.typo = true
		}
	}
}

// limits reads pagination.limits: the page sizes that are valid.
func (p *parser) limits(e yamlnode.Pair) []int {
	vals, err := yamlnode.Ints(e.Value)
	if err != nil {
		p.nodeErr("pagination.limits", e.Value, err)
		return nil
	}
	if len(vals) == 0 {
		p.errorf(e.Value.Line, "pagination.limits: list at least one page size, e.g. [20, 50, 100]")
	}
	var out []int
	for i, l := range vals {
		if l <= 0 || l > math.MaxInt32 {
			p.errorf(deref(e.Value.Content[i]).Line, "pagination.limits: page size %d must be a positive whole number", l)
			continue
		}
		out = append(out, int(l))
	}
	return out
}

// checkPagination completes pagination pg (limits, max_limit) and checks
// that its keys agree.
func (p *parser) checkPagination(pg *listing.Pagination, seen *paging) {
	if pg.DefaultLimit <= 0 {
		return // already reported
	}
	if !seen.haveLimits {
		pg.Limits = []int{pg.DefaultLimit}
	}
	sort.Ints(pg.Limits)
	pg.Limits = slices.Compact(pg.Limits)
	if len(pg.Limits) == 0 {
		return
	}
	if !pg.HasLimit(pg.DefaultLimit) {
		p.errorf(firstLine(seen.defLine, seen.limitsLine), "pagination.default_limit %d is not one of pagination.limits %v: add it to limits", pg.DefaultLimit, pg.Limits)
	}
	if !seen.haveMax {
		pg.MaxLimit = pg.Limits[len(pg.Limits)-1]
	} else if pg.MaxLimit > 0 && !pg.HasLimit(pg.MaxLimit) && !layout.Of(*pg).EveryPage { // max_limit need not be a page size
		p.errorf(seen.maxLine, "pagination.max_limit %d is not one of pagination.limits %v: add it to limits", pg.MaxLimit, pg.Limits)
	}
	if pg.MaxLimit > 0 && pg.DefaultLimit > pg.MaxLimit {
		p.errorf(seen.maxLine, "pagination.max_limit %d is below default_limit %d", pg.MaxLimit, pg.DefaultLimit)
	}
}

func firstLine(lines ...int) int {
	for _, l := range lines {
		if l > 0 {
			return l
		}
	}
	return 0
}

func deref(n *yaml.Node) *yaml.Node {
	for n != nil && n.Kind == yaml.AliasNode {
		n = n.Alias
	}
	return n
}

func (p *parser) unknown(prefix string, kv yamlnode.Pair, known []string) {
	p.errorf(kv.KeyNode.Line, "%s", unknownName("key", prefix, kv.Key, known))
}

// CheckContentDir returns, as a config error, a content folder that is
// not there: named as content_dir gives it, relative to the config's
// folder, with the folder likely meant.
func (c *Config) CheckContentDir() error {
	info, err := os.Stat(c.ContentDir)
	if err == nil && info.IsDir() {
		return nil
	}
	written := c.contentDir
	if written == "" {
		written = "content"
	}
	msg := fmt.Sprintf("content_dir: %q is not a folder (%s)", written, c.ContentDir)
	if errors.Is(err, fs.ErrNotExist) {
		msg = fmt.Sprintf("content_dir: folder %q does not exist (relative to the config's folder: %s)", written, c.ContentDir)
		var dirs []string
		entries, _ := os.ReadDir(filepath.Dir(c.ContentDir))
		for _, e := range entries {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				dirs = append(dirs, e.Name())
			}
		}
		if s := Suggest(filepath.Base(c.ContentDir), dirs); s != "" {
			msg += fmt.Sprintf(": did you mean %q?", filepath.Join(filepath.Dir(written), s))
		}
	}
	return diag.List{{Path: c.Path, Line: c.contentDirLine, Msg: msg}}
}

// unknownName says that name, a what such as a key, is not one of known:
// with the likely one meant, or else the list of them. prefix is written
// before name and the one meant, not before the list.
func unknownName(what, prefix, name string, known []string) string {
	msg := fmt.Sprintf("unknown %s %q", what, prefix+name)
	if s := Suggest(name, known); s != "" {
		return msg + fmt.Sprintf(": did you mean %q?", prefix+s)
	}
	return msg + fmt.Sprintf(": known %ss are %s", what, strings.Join(known, ", "))
}

func (p *parser) str(kv yamlnode.Pair) string {
	s, err := yamlnode.String(kv.Value)
	if err != nil {
		p.nodeErr(kv.Key, kv.Value, err)
	}
	return s
}

func (p *parser) limit(kv yamlnode.Pair) int {
	v, err := yamlnode.Int(kv.Value)
	if err != nil {
		p.nodeErr("pagination."+kv.Key, kv.Value, err)
		return 0
	}
	if v <= 0 || v > math.MaxInt32 {
		p.errorf(kv.Value.Line, "pagination.%s: page size %d must be a positive whole number", kv.Key, v)
		return 0
	}
	return int(v)
}

// absURL reads an absolute http(s) URL and drops a trailing slash.
func (p *parser) absURL(kv yamlnode.Pair) string {
	s := p.str(kv)
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		p.errorf(kv.Value.Line, "%s: %q is not an absolute URL: write it with its scheme and host, e.g. https://www.example.com", kv.Key, s)
		return ""
	}
	if u.RawQuery != "" || u.Fragment != "" {
		p.errorf(kv.Value.Line, "%s: %q must not have a query or fragment", kv.Key, s)
	}
	if i := strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune(`"<>\^`+"`{|}", r) }); i >= 0 {
		p.errorf(kv.Value.Line, "%s: %q has %q, which cannot stand in a URL: percent-encode it (a space is %%20)", kv.Key, s, s[i:i+1])
	}
	return strings.TrimRight(s, "/")
}

var segmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*$`)

func (p *parser) sections(c *Config, n *yaml.Node) {
	secs, err := yamlnode.Mapping(n)
	if err != nil {
		p.nodeErr("sections", n, err)
		return
	}
	for _, s := range secs {
		if !segmentRE.MatchString(s.Key) {
			p.errorf(s.KeyNode.Line, "sections: %q is not a valid URL segment: use letters, digits, '-', '_', '.'", s.Key)
			continue
		}
		cats, err := yamlnode.Mapping(s.Value)
		if err != nil {
			p.nodeErr("sections."+s.Key, s.Value, err)
			continue
		}
		m := make(map[string]string, len(cats))
		for _, cat := range cats {
			if !segmentRE.MatchString(cat.Key) {
				p.errorf(cat.KeyNode.Line, "sections.%s: %q is not a valid URL segment: use letters, digits, '-', '_', '.'", s.Key, cat.Key)
				continue
			}
			name, err := yamlnode.String(cat.Value)
			if err != nil {
				p.nodeErr("sections."+s.Key+"."+cat.Key, cat.Value, err)
				continue
			}
			if name == "" {
				p.errorf(cat.Value.Line, "sections.%s.%s: display name is empty", s.Key, cat.Key)
			}
			m[cat.Key] = name
		}
		c.Sections[s.Key] = m
	}
}

func (p *parser) authors(c *Config, n *yaml.Node) {
	list, err := yamlnode.Mapping(n)
	if err != nil {
		p.nodeErr("authors", n, err)
		return
	}
	for _, a := range list {
		fields, err := yamlnode.Mapping(a.Value)
		if err != nil {
			p.nodeErr("authors."+a.Key, a.Value, err)
			continue
		}
		var au Author
		for _, f := range fields {
			switch f.Key {
			case "name":
				au.Name = p.str(f)
			case "url":
				au.URL = p.str(f)
			default:
				p.unknown("authors."+a.Key+".", f, authorKeys)
			}
		}
		if au.Name == "" {
			p.errorf(a.KeyNode.Line, "authors.%s: name is missing", a.Key)
		}
		c.Authors[a.Key] = au
	}
}

// publish reads the publish mapping n into pub.
func (p *parser) publish(pub *Publish, n *yaml.Node) {
	if yamlnode.IsNull(n) {
		return
	}
	pairs, err := yamlnode.Mapping(n)
	if err != nil {
		p.nodeErr("publish", n, err)
		return
	}
	for _, e := range pairs {
		switch e.Key {
		case "cache_control":
			s, err := yamlnode.String(e.Value)
			if err != nil {
				p.nodeErr("publish.cache_control", e.Value, err)
				break
			}
			if strings.TrimSpace(s) == "" {
				p.errorf(e.Value.Line, "publish.cache_control: empty: leave it out for %q, or write e.g. \"public, max-age=300\"", DefaultCacheControl)
				break
			}
			if i := strings.IndexFunc(s, func(r rune) bool { return r < ' ' || r > '~' }); i >= 0 {
				p.errorf(e.Value.Line, "publish.cache_control: %q has %q: a header value is one line of printable ASCII", s, string([]rune(s[i:])[0]))
				break
			}
			pub.CacheControl = strings.TrimSpace(s)
		default:
			p.unknown("publish.", e, publishKeys)
		}
	}
}

// filters reads the list of filters n and returns it in canonical order.
func (p *parser) filters(n *yaml.Node) []string {
	names, err := yamlnode.Strings(n)
	if err != nil {
		p.nodeErr("filters", n, err)
		return nil
	}
	known := listing.FilterNames()
	seen := make(map[string]bool, len(names))
	for i, name := range names {
		line := deref(n).Content[i].Line // an alias: where it is, not its anchor
		switch {
		case !slices.Contains(known, name):
			p.errorf(line, "%s", unknownName("filter", "", name, known))
		case seen[name]:
			p.errorf(line, "filter %q is listed twice: list each filter once", name)
		}
		seen[name] = true
	}
	var out []string
	for _, f := range known {
		if seen[f] {
			out = append(out, f)
		}
	}
	return out
}

// ParseSize reads a byte size: a whole number with an optional unit
// B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024).
func ParseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%q is not a size: write e.g. 4GiB, 500MB or 1000000", s)
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is too large", s)
	}
	mult := map[string]int64{"": 1, "B": 1, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40}
	m, ok := mult[strings.ToUpper(strings.TrimSpace(t[i:]))]
	if !ok {
		return 0, fmt.Errorf("%q has an unknown unit: use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB", s)
	}
	if n > math.MaxInt64/m {
		return 0, errors.New("size is too large")
	}
	return n * m, nil
}

// Suggest returns the entry of known closest to s when it is a likely
// typo: at most two edits apart.
func Suggest(s string, known []string) string { return SuggestWithin(s, known, 2) }

// SuggestWithin is Suggest for names at most edits apart.
func SuggestWithin(s string, known []string, edits int) string {
	best, bestD := "", edits+1
	for _, k := range known {
		if d := distance(s, k); d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
