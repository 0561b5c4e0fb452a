package importer

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// segmentRE is what config.yaml accepts as a section or section_slug.
var segmentRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._~-]*$`)

// converter turns the articles read into a site.
type converter struct {
	r       *listingRead
	opt     Options
	loc     *time.Location
	now     time.Time
	siteURL string

	refused  map[*article]bool
	problems diag.List // by article, in the listing's order
}

// refuse leaves a out, saying why.
func (c *converter) refuse(a *article, format string, args ...any) {
	if c.refused[a] {
		return
	}
	c.refused[a] = true
	c.problems.Add("article "+strconv.FormatInt(a.ID, 10), 0, fmt.Sprintf(format, args...))
}

// convert makes the site of the articles read, reads it back, and checks
// it against what the service answered.
func convert(ctx context.Context, r *listingRead, opt Options) (*Site, error) {
	loc, err := time.LoadLocation(opt.Timezone)
	if err != nil {
		return nil, fmt.Errorf("time zone %q: %w", opt.Timezone, err)
	}
	lay, ok := layout.Named(opt.Layout)
	switch {
	case !ok || opt.Layout == "":
		return nil, fmt.Errorf("layout %q: want %s", opt.Layout, layout.NameList())
	case lay.EveryPage && (len(opt.Limits) > 0 || opt.Offsets == listing.OffsetsAligned):
		return nil, fmt.Errorf("page sizes and aligned offsets are of layout %q: layout %q answers every page size up to the max limit at every offset", layout.PagesName, lay.Name)
	}
	for _, l := range opt.Limits {
		if l <= 0 || l > r.maxLimit {
			return nil, fmt.Errorf("page size %d: the service answers page sizes 1 to %d", l, r.maxLimit)
		}
	}
	c := &converter{r: r, opt: opt, loc: loc, now: opt.Now(), refused: map[*article]bool{}}
	c.siteURL = c.findSiteURL()
	for _, a := range r.articles {
		c.check(a)
	}
	sections := c.sections()
	c.paths()
	authors := c.authors()

	kept := c.kept()
	sc := siteConfig{
		siteURL:  c.siteURL,
		baseURL:  r.baseURL,
		timezone: opt.Timezone,
		sections: sections,
		authors:  authors,
		def:      r.defaultLimit,
		max:      r.maxLimit,
		limits:   slices.Compact(slices.Sorted(slices.Values(append([]int{r.defaultLimit, r.maxLimit}, opt.Limits...)))),
		aligned:  opt.Offsets == listing.OffsetsAligned,
		layout:   lay,
	}
	s := &Site{
		Files:        make(map[string][]byte, len(kept)+1),
		SiteURL:      c.siteURL,
		BaseURL:      r.baseURL,
		DefaultLimit: r.defaultLimit,
		MaxLimit:     r.maxLimit,
		Layout:       opt.Layout,
		Count:        r.count,
		Authors:      len(authors),
	}
	if err := sc.write(s, kept); err != nil {
		return nil, err
	}
	byPath := make(map[string]*article, len(kept))
	for _, a := range kept {
		fm, err := frontMatter(a)
		if err != nil {
			c.refuse(a, "cannot be written as YAML: %v", err)
			continue
		}
		s.Files[a.path] = fm
		byPath[a.path] = a
	}

	pages, err := c.verify(ctx, s, byPath)
	if err != nil {
		return nil, err
	}
	s.Pages = pages
	if kept := c.kept(); len(kept) != sc.articles {
		// Articles left out when read back: config.yaml's comments count them.
		if err := sc.write(s, kept); err != nil {
			return nil, err
		}
	}
	for _, a := range c.kept() {
		s.Articles++
		if a.authorKey == "" {
			s.InlineAuthors++
		}
	}
	for _, cats := range sections {
		s.Sections++
		s.Categories += len(cats)
	}
	s.Refused = append(r.problems, c.problems...)
	return s, nil
}

// kept returns the articles not refused, in the listing's order.
func (c *converter) kept() []*article {
	out := make([]*article, 0, len(c.r.articles))
	for _, a := range c.r.articles {
		if !c.refused[a] {
			out = append(out, a)
		}
	}
	return out
}

// splitCategoryURL splits {site_url}/{section}/{section_slug}/.
func splitCategoryURL(cu string) (site, section, sectionSlug string, ok bool) {
	rest, ok := strings.CutSuffix(cu, "/")
	if !ok {
		return "", "", "", false
	}
	i := strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", "", false
	}
	rest, sectionSlug = rest[:i], rest[i+1:]
	i = strings.LastIndexByte(rest, '/')
	if i < 0 {
		return "", "", "", false
	}
	return rest[:i], rest[i+1:], sectionSlug, true
}

// findSiteURL returns the site_url most articles' category URLs start with
// (the first of those, on a tie).
func (c *converter) findSiteURL() string {
	n := map[string]int{}
	best := ""
	for _, a := range c.r.articles {
		site, _, _, ok := splitCategoryURL(a.CategoryURL)
		if !ok {
			continue
		}
		n[site]++
		if n[site] > n[best] {
			best = site
		}
	}
	if best == "" {
		return c.r.baseURL // no article: any absolute URL will do
	}
	return best
}

// siteURLProblem says why s cannot be config.yaml's site_url, or "".
func siteURLProblem(s string) string {
	u, err := url.Parse(s)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		return "is not an absolute http(s) URL"
	case u.RawQuery != "" || u.ForceQuery || u.Fragment != "":
		return "has a query or fragment"
	case strings.HasSuffix(s, "/"):
		return "ends in /"
	case strings.IndexFunc(s, func(r rune) bool { return r <= ' ' || r == 0x7f || strings.ContainsRune(`"<>\^`+"`{|}", r) }) >= 0:
		return "has a character that cannot stand in a URL"
	}
	return ""
}

// check refuses a when one of its values cannot be kept exact, and sets
// its section, section_slug, slug and tags.
func (c *converter) check(a *article) {
	site, section, sectionSlug, ok := splitCategoryURL(a.CategoryURL)
	rest, under := strings.CutPrefix(a.URL, a.CategoryURL)
	slug, slash := strings.CutSuffix(rest, "/")
	switch {
	case !ok:
		c.refuse(a, "category_url %q does not fit {site_url}/{section}/{section_slug}/", a.CategoryURL)
		return
	case site != c.siteURL:
		c.refuse(a, "category_url %q is not under site_url %s, that of the other articles", a.CategoryURL, c.siteURL)
		return
	case !under || !slash || slug == "" || strings.Contains(slug, "/"):
		c.refuse(a, "url %q does not fit {site_url}/{section}/{section_slug}/{slug}/ with category_url %q", a.URL, a.CategoryURL)
		return
	}
	if p := siteURLProblem(site); p != "" {
		c.refuse(a, "site_url %q, from its category_url, %s", site, p)
		return
	}
	for _, seg := range []struct{ what, v string }{{"section", section}, {"section_slug", sectionSlug}} {
		if !segmentRE.MatchString(seg.v) {
			c.refuse(a, "%s %q of url %q cannot be a folder name of config.yaml's sections (letters, digits, and - _ . ~ after the first)", seg.what, seg.v, a.URL)
			return
		}
	}
	if p := slugProblem(slug); p != "" {
		c.refuse(a, "slug %q of url %q is unsafe as a file name: %s", slug, a.URL, p)
		return
	}
	a.section, a.sectionSlug, a.slug = section, sectionSlug, slug
	a.path = "content/" + section + "/" + sectionSlug + "/" + slug + ".md"

	switch {
	case a.ID <= 0:
		c.refuse(a, "id %d is not a positive whole number", a.ID)
	case strings.TrimSpace(a.Title) == "":
		c.refuse(a, "title %q is empty: feedgen needs a headline", a.Title)
	case a.Category == "":
		c.refuse(a, "category is empty: config.yaml needs a display name")
	case a.Pageviews < 0:
		c.refuse(a, "pageviews %d is negative", a.Pageviews)
	case a.Comments < 0:
		c.refuse(a, "comments_count %d is negative", a.Comments)
	}
	for _, img := range []struct{ key, v string }{{"img_big", a.ImgBig}, {"img_big_2x", a.ImgBig2x}, {"img_small", a.ImgSmall}, {"img_small_2x", a.ImgSmall2x}} {
		if !keptAsWritten(img.v) {
			c.refuse(a, "%s %q is neither empty nor an absolute URL: feedgen would put media_url before it", img.key, img.v)
		}
	}
	if !keptAsWritten(a.AuthorURL) {
		c.refuse(a, "author_url %q is neither empty nor an absolute URL: feedgen would put site_url before it", a.AuthorURL)
	}
	c.checkPublished(a)
	if a.Tags != "" {
		a.tags = strings.Split(a.Tags, ", ")
	}
}

// checkPublished refuses a when its published time is not written as
// feedgen writes it, is not a time of the time zone, or is later than now
// there.
func (c *converter) checkPublished(a *article) {
	const layout = content.PublishedLayout
	if u, err := time.Parse(layout, a.Published); err != nil || u.Format(layout) != a.Published {
		c.refuse(a, "published %q is not a date and time written YYYY-MM-DDTHH:MM:SS", a.Published)
		return
	}
	t, err := time.ParseInLocation(layout, a.Published, c.loc)
	switch {
	case err != nil || t.Format(layout) != a.Published:
		c.refuse(a, "published %q is not a time of time zone %s (a daylight saving time gap): import with another --timezone, e.g. UTC", a.Published, c.opt.Timezone)
	case t.After(c.now):
		c.refuse(a, "published %q is later than now in time zone %s, so a build now would leave it out as scheduled: import with --timezone set to the service's, e.g. Europe/Moscow", a.Published, c.opt.Timezone)
	}
}

// keptAsWritten reports whether feedgen writes a URL of front matter as it
// is: empty, or absolute (http://, https:// or //).
func keptAsWritten(s string) bool {
	return s == "" || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "//")
}

// underSite reports whether s is a URL under site_url that config.yaml can
// write as a path: site_url, then / and not another /.
func (c *converter) underSite(s string) bool {
	rest, ok := strings.CutPrefix(s, c.siteURL)
	return ok && strings.HasPrefix(rest, "/") && !strings.HasPrefix(rest, "//")
}

// slugProblem says why slug cannot be the name of an article's file (with
// .md after it), or "". feedgen's loader ignores names starting with _ or
// ., and refuses characters that cannot stand in a URL as they are; the
// rest keeps the name usable on every system and in object storage.
func slugProblem(slug string) string {
	switch {
	case !utf8.ValidString(slug):
		return "it is not UTF-8"
	case strings.HasPrefix(slug, "_") || strings.HasPrefix(slug, "."):
		return "feedgen ignores files whose names start with _ or ."
	case len(slug)+len(".md") > 255:
		return "it is longer than a file name can be"
	case strings.HasSuffix(slug, " "):
		return "it ends in a space"
	case windowsDevice(slug):
		return "it is a device name on Windows"
	}
	for _, r := range slug {
		switch {
		case r == '%':
			return "it has %, which feedgen refuses in a URL it writes as is (percent-encoded names cannot be files)"
		case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || strings.ContainsRune(`?#"<>\^`+"`{|}:*", r):
			return fmt.Sprintf("it has %q", r)
		case unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r):
			return fmt.Sprintf("it has %q", r)
		}
	}
	return ""
}

// windowsDevice reports whether name, before any dot, is a device name of
// Windows (con, prn, aux, nul, com0-9, lpt0-9), in any case.
func windowsDevice(name string) bool {
	base, _, _ := strings.Cut(strings.ToLower(name), ".")
	switch base {
	case "con", "prn", "aux", "nul":
		return true
	}
	return len(base) == 4 && (strings.HasPrefix(base, "com") || strings.HasPrefix(base, "lpt")) && base[3] >= '0' && base[3] <= '9'
}

// sections returns section → section_slug → display name: the name most
// of the category's articles give (the first of those, on a tie). The
// others are refused.
func (c *converter) sections() map[string]map[string]string {
	type cat struct{ section, slug string }
	names := map[cat]map[string]int{}
	best := map[cat]string{}
	for _, a := range c.kept() {
		k := cat{a.section, a.sectionSlug}
		if names[k] == nil {
			names[k] = map[string]int{}
		}
		names[k][a.Category]++
		if b, ok := best[k]; !ok || names[k][a.Category] > names[k][b] {
			best[k] = a.Category
		}
	}
	out := map[string]map[string]string{}
	for _, a := range c.kept() {
		k := cat{a.section, a.sectionSlug}
		if a.Category != best[k] {
			c.refuse(a, "category %q differs from %q, the name of %s/%s on %s", a.Category, best[k], a.section, a.sectionSlug, human.Plural(names[k][best[k]], "other article"))
			continue
		}
		if out[a.section] == nil {
			out[a.section] = map[string]string{}
		}
		out[a.section][a.sectionSlug] = a.Category
	}
	return out
}

// paths refuses an article on the path of one before it: the same file,
// also where case is not told apart (as on macOS and Windows), or a
// folder spelled as another in another case.
func (c *converter) paths() {
	files := map[string]*article{}
	folders := map[string]string{} // folded → as first spelled
	for _, a := range c.kept() {
		if other, dup := files[strings.ToLower(a.path)]; dup {
			c.refuse(a, "it is on the path of article %d, %s (file names that differ only in case are one file on some systems)", other.ID, other.path)
			continue
		}
		ok := true
		for _, dir := range []string{a.section, a.section + "/" + a.sectionSlug} {
			if first, seen := folders[strings.ToLower(dir)]; seen && first != dir {
				c.refuse(a, "folder content/%s differs only in case from content/%s of other articles: one folder on some systems", dir, first)
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		for _, dir := range []string{a.section, a.section + "/" + a.sectionSlug} {
			folders[strings.ToLower(dir)] = dir
		}
		files[strings.ToLower(a.path)] = a
	}
}

// author is an entry of config.yaml's authors.
type author struct {
	key, name string
	url       string // as config.yaml writes it: under site_url, a path
	full      string // as the service wrote it
	n         int    // its articles
}

// authors keys each (name, URL) pair of the articles kept by its profile
// URL's last segment, and returns them by key, sorted. A pair whose URL has
// no segment fit to be a key, or with no name, stays inline; of pairs with
// the same key, the one with the most articles takes it (then the first by
// URL and name): keys depend on the listing only, not on the order it is
// read in.
func (c *converter) authors() []author {
	type pair struct{ name, url string }
	n := map[pair]int{}
	for _, a := range c.kept() {
		n[pair{a.AuthorName, a.AuthorURL}]++
	}
	byKey := map[string]author{}
	for p, count := range n {
		key := keyOf(p.url)
		if key == "" || p.name == "" {
			continue
		}
		cand := author{key: key, name: p.name, url: p.url, full: p.url, n: count}
		if c.underSite(p.url) {
			cand.url = p.url[len(c.siteURL):]
		}
		if cur, ok := byKey[key]; ok && cmp.Or(cmp.Compare(count, cur.n), -cmp.Compare(p.url, cur.full), -cmp.Compare(p.name, cur.name)) <= 0 {
			continue
		}
		byKey[key] = cand
	}
	keyOfPair := map[pair]string{}
	out := make([]author, 0, len(byKey))
	for key, au := range byKey {
		keyOfPair[pair{au.name, au.full}] = key
		out = append(out, au)
	}
	slices.SortFunc(out, func(a, b author) int { return strings.Compare(a.key, b.key) })
	for _, a := range c.kept() {
		a.authorKey = keyOfPair[pair{a.AuthorName, a.AuthorURL}]
	}
	return out
}

// keyOf returns the last segment of the path of a profile URL, decoded,
// when it can be a key: "" otherwise.
func keyOf(s string) string {
	u, err := url.Parse(s)
	if err != nil || s == "" {
		return ""
	}
	p := strings.TrimRight(u.Path, "/")
	seg := p[strings.LastIndexByte(p, '/')+1:]
	if len(seg) > 100 || !isKey(seg) {
		return ""
	}
	return seg
}

// isKey reports whether s may be an author key taken from a profile URL:
// letters and numbers of any script (Unicode's L and N), and . _ ~ -
// after the first. (A regexp with \p{L} cost every feedgen command about
// a millisecond, to compile it as the command started.)
func isKey(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsNumber(r):
		case i > 0 && strings.ContainsRune("._~-", r):
		default:
			return false
		}
	}
	return true
}
