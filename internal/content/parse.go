package content

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/adrg/frontmatter"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/yamlnode"
	"github.com/yuin/goldmark/parser"
	"gopkg.in/yaml.v3"
)

// frontMatterKeys are the keys an article's front matter may have.
var frontMatterKeys = []string{"id", "title", "published", "announcement", "tags", "pageviews",
	"comments_count", "author", "author_name", "author_url", "img_big", "img_big_2x", "img_small",
	"img_small_2x", "draft"}

// foreignKeys are the front matter keys of Hugo (and of Jekyll and
// other generators) that have an equivalent here, lowercased, as Hugo
// reads keys in any case: what to write instead. Hugo keys with no
// equivalent (lastmod, weight, aliases, expirydate...) get only the
// warning of an unknown key.
var foreignKeys = map[string]string{
	"date":         publishedHint,
	"publishdate":  publishedHint,
	"pubdate":      publishedHint,
	"published_at": publishedHint,
	"description":  "write announcement: (the text under the title in the listing; without it, the body's first paragraph)",
	"summary":      "write announcement: (the text under the title in the listing; without it, the body's first paragraph)",
	"slug":         "an article's slug is its file name: rename the file to SLUG.md",
	"url":          "an article's URL is {site_url}/SECTION/CATEGORY/SLUG/, from where its file is: move or rename the file",
	"categories":   categoryHint,
	"category":     categoryHint,
	"section":      "an article's section is its folder: move the file to content/SECTION/CATEGORY/",
	"authors":      "write author: KEY (one key of authors in config.yaml), or author_name: and author_url:",
	"image":        "write img_big: (and img_small: for the small picture)",
	"images":       "write img_big: (one URL; and img_small: for the small picture)",
}

const (
	publishedHint = "write published: (the publication time, YYYY-MM-DDTHH:MM:SS in the site's timezone)"
	categoryHint  = "an article's category is its folder: move the file to content/SECTION/CATEGORY/, with CATEGORY one of sections in config.yaml"
)

// isDateKey reports whether key is another generator's name for
// published.
func isDateKey(key string) bool { return foreignKeys[strings.ToLower(key)] == publishedHint }

// parsed is the outcome of reading one file: an article when it is valid,
// and its errors and warnings.
type parsed struct {
	article  *Article
	errs     diag.List
	warnings diag.List
}

// fileParser turns one file's bytes into an Article.
type fileParser struct {
	cfg    *config.Config
	md     parser.Parser
	yaml   yamlnode.Parser // its nodes live until the next file
	fields fieldReader     // so do its fields
}

// yamlFormat hands the raw front matter to the caller: the YAML is parsed
// by yamlnode, which keeps lines.
var yamlFormat = frontmatter.NewFormat("---", "---", func(data []byte, v any) error {
	*(v.(*[]byte)) = data
	return nil
})

// splitFrontMatter returns the front matter of data (the lines between the
// opening and closing --- lines) and the body after it, as adrg/frontmatter
// splits them. The usual shape, a file that starts with a line "---" and
// whose first "---" anywhere after it is a line of its own, is split here
// without copying; adrg/frontmatter splits every other file (leading blank
// lines, delimiters with spaces around, no closing line). FuzzSplit checks
// that both ways agree.
func splitFrontMatter(data []byte) (fm, body []byte, err error) {
	if fm, body, ok := splitSimple(data); ok {
		return fm, body, nil
	}
	body, err = frontmatter.MustParse(bytes.NewReader(data), &fm, yamlFormat)
	return fm, body, err
}

// splitSimple splits a file of the usual shape, and reports whether it was
// one. The first "---" after the opening line being a whole line means no
// earlier line can be a delimiter: any line that is "---" once trimmed
// holds a "---".
func splitSimple(data []byte) (fm, body []byte, ok bool) {
	var rest []byte
	switch {
	case bytes.HasPrefix(data, []byte("---\n")):
		rest = data[4:]
	case bytes.HasPrefix(data, []byte("---\r\n")):
		rest = data[5:]
	default:
		return nil, nil, false
	}
	i := bytes.Index(rest, []byte("---"))
	if i < 0 || (i > 0 && rest[i-1] != '\n') {
		return nil, nil, false
	}
	after := rest[i+3:]
	switch {
	case len(after) == 0:
	case after[0] == '\n':
		after = after[1:]
	case len(after) > 1 && after[0] == '\r' && after[1] == '\n':
		after = after[2:]
	default:
		return nil, nil, false
	}
	return rest[:i:i], after, true
}

// parse validates the file at display path p (section, slug and article
// slug already taken from its location). It keeps no reference to data,
// which the caller reuses for the next file. The jobs, in turn: split
// the file (fileCheck.split), read its front matter's keys into an
// Article (decode), check the keys it must have (required), resolve
// section, author and URLs against the config (resolve), and take the
// announcement from the body when none is written (summary).
func (fp *fileParser) parse(p, section, sectionSlug, slug string, data []byte) parsed {
	c := &fileCheck{fp: fp, p: p}
	data, body, pairs, ok := c.split(data)
	if !ok {
		return c.r
	}
	a := &Article{Shown: &Shown{}, Path: p, Section: section, SectionSlug: sectionSlug, Slug: slug, Line: c.open}
	c.decode(a, pairs)
	c.required()
	c.resolve(a, pairs)
	if !c.seen.announcement {
		c.summary(a, data, body)
	}
	if len(c.r.errs) == 0 {
		c.r.article = a
	}
	return c.r
}

// fileCheck is the parse of one file under way: where it is, what was
// found wrong, and which keys its front matter has.
type fileCheck struct {
	fp   *fileParser
	p    string // the file, as reported
	open int    // the line of the opening ---
	r    parsed
	seen struct {
		id, title, published, announcement bool
		author, authorName, authorURL      bool
		imgSmall, imgSmall2x               bool
	}
	author field // the author key, when seen.author
	// dateKeys are the keys of other generators for published (date:),
	// with the warning each gets when published: is there too.
	dateKeys []dateKey
	// cased are the keys of feedgen's written in another case (Draft:),
	// lowercased.
	cased []string
}

// dateKey is a key of another generator for published, and its warning.
type dateKey struct {
	f   field
	msg string
}

// fail records an error at line.
func (c *fileCheck) fail(line int, format string, args ...any) {
	c.r.errs.Add(c.p, line, fmt.Sprintf(format, args...))
}

// split checks data is text, splits it into front matter and body, and
// reads the front matter's keys. It returns data without a byte order
// mark; false when the file has an error that stops its parse.
func (c *fileCheck) split(data []byte) (_, body []byte, pairs []field, ok bool) {
	if len(bytes.TrimSpace(data)) == 0 {
		c.fail(0, "file is empty: start it with front matter between --- lines (id, title, published)")
		return nil, nil, nil, false
	}
	if !validUTF8(data) {
		c.fail(invalidUTF8Line(data), "invalid UTF-8: save the file with UTF-8 encoding")
		return nil, nil, nil, false
	}
	data = bytes.TrimPrefix(data, []byte("\xef\xbb\xbf"))

	fm, body, err := splitFrontMatter(data)
	c.open = openingLine(data)
	switch {
	case errors.Is(err, frontmatter.ErrNotFound) && c.open > 0:
		c.fail(c.open, "front matter is not closed: add a line --- after its last key")
		return nil, nil, nil, false
	case errors.Is(err, frontmatter.ErrNotFound):
		c.fail(1, "no front matter: start the file with a line ---, the keys id, title and published, then a line ---")
		return nil, nil, nil, false
	case err != nil:
		c.fail(0, "reading front matter: %v", err)
		return nil, nil, nil, false
	}
	// The front matter starts on the line after the opening ---.
	root, err := c.fp.yaml.Parse(fm, c.open)
	if err != nil {
		if line, msg, ok := aliasProblem(fm, c.open, err); ok {
			c.fail(line, "%s", msg)
		} else {
			c.fail(yamlnode.Line(err, c.open), "%v", err)
		}
		return nil, nil, nil, false
	}
	if root == nil {
		c.fail(c.open, "front matter is empty: add the keys id, title and published")
		return nil, nil, nil, false
	}
	if pairs, err = c.fp.fields.read(root); err != nil {
		c.fail(yamlnode.Line(err, root.Line), "%v", err)
		return nil, nil, nil, false
	}
	return data, body, pairs, true
}

// fieldErr reports a problem with the value of f: where f is, if the
// value comes through an alias, with a note saying where it is written.
func (c *fileCheck) fieldErr(f field, msg string) {
	line, note := f.where(f.value.Line)
	c.r.errs.Add(c.p, line, msg+note)
}

// bad reports err, a problem with the value of f.
func (c *fileCheck) bad(f field, err error) { c.fieldErr(f, f.key+": "+err.Error()) }

// str returns the string value of f; false, reported, when it is not one.
func (c *fileCheck) str(f field) (string, bool) {
	s, err := yamlnode.String(f.value)
	if err != nil {
		c.bad(f, err)
	}
	return s, err == nil
}

// text returns the string value of f, "" when it is not one (reported).
func (c *fileCheck) text(f field) string {
	s, _ := c.str(f)
	return s
}

// counter returns the value of f, a count of 0 or more.
func (c *fileCheck) counter(f field) int64 {
	v, err := yamlnode.Int(f.value)
	if err != nil {
		c.bad(f, err)
		return 0
	}
	if v < 0 {
		c.fieldErr(f, fmt.Sprintf("%s: %d is negative: counters are 0 or more", f.key, v))
		return 0
	}
	return v
}

// decode reads each key of the front matter into a, as it is written.
func (c *fileCheck) decode(a *Article, pairs []field) {
	for _, kv := range pairs {
		switch kv.key {
		case "id":
			c.id(a, kv)
		case "title":
			c.seen.title = true
			var ok bool
			a.Title, ok = c.str(kv)
			if ok && strings.TrimSpace(a.Title) == "" {
				c.fieldErr(kv, "title is empty: give the article a headline")
			}
		case "published":
			c.published(a, kv)
		case "announcement":
			c.seen.announcement = true
			a.Announcement = c.text(kv)
		case "tags":
			c.tags(a, kv)
		case "pageviews":
			a.Pageviews = c.counter(kv)
		case "comments_count":
			a.Comments = c.counter(kv)
		case "author":
			c.seen.author, c.author = true, kv
			a.AuthorKey = c.text(kv)
		case "author_name":
			c.seen.authorName = true
			a.AuthorName = c.text(kv)
		case "author_url":
			c.seen.authorURL = true
			a.AuthorURL = c.text(kv)
		case "img_big":
			a.ImgBig = c.text(kv)
		case "img_big_2x":
			a.ImgBig2x = c.text(kv)
		case "img_small":
			c.seen.imgSmall = true
			a.ImgSmall = c.text(kv)
		case "img_small_2x":
			c.seen.imgSmall2x = true
			a.ImgSmall2x = c.text(kv)
		case "draft":
			v, err := yamlnode.Bool(kv.value)
			if err != nil {
				c.bad(kv, err)
			}
			a.Draft = v
		default:
			c.unknown(kv)
		}
	}
}

func (c *fileCheck) id(a *Article, kv field) {
	c.seen.id = true
	a.Line = kv.keyLine
	v, err := yamlnode.Int(kv.value)
	if err != nil || v <= 0 {
		c.fieldErr(kv, fmt.Sprintf("id: want a positive whole number, got %s", quoteValue(kv.value)))
		return
	}
	a.ID = v
}

func (c *fileCheck) published(a *Article, kv field) {
	c.seen.published = true
	s, ok := c.str(kv)
	if !ok {
		return
	}
	wall, instant, err := parseTime(s, c.fp.cfg.Location)
	if err != nil {
		c.fieldErr(kv, "published: "+err.Error())
		return
	}
	a.Published, a.Instant = wall, instant
}

func (c *fileCheck) tags(a *Article, kv field) {
	tags, err := yamlnode.Strings(kv.value)
	if err != nil {
		if it := badItem(kv.value); it != nil {
			f, line := kv.item(it)
			at, note := f.where(line)
			c.r.errs.Add(c.p, at, kv.key+": "+err.Error()+note)
			return
		}
		c.bad(kv, err)
		return
	}
	a.Tags = tags
}

// unknown reports a key that is not feedgen's.
func (c *fileCheck) unknown(kv field) {
	// A key of feedgen's in another case (Hugo's Draft: or Tags:) is an
	// error, not the warning of an unknown key: ignored, it would
	// publish a draft or drop the tags without a word.
	if lower := strings.ToLower(kv.key); slices.Contains(frontMatterKeys, lower) {
		c.cased = append(c.cased, lower)
		c.r.errs.Add(c.p, kv.keyLine, fmt.Sprintf("front matter key %q is %s in another case: write %s: (keys are lowercase; Hugo reads them in any case, feedgen does not)", kv.key, lower, lower)+kv.keyNote)
		return
	}
	msg := fmt.Sprintf("unknown front matter key %q is ignored", kv.key)
	if h, ok := foreignKeys[strings.ToLower(kv.key)]; ok {
		msg += ": " + h
	} else if s := config.Suggest(kv.key, frontMatterKeys); s != "" {
		msg += fmt.Sprintf(": did you mean %q?", s)
	}
	if isDateKey(kv.key) {
		// Its warning waits for required: without published:, the first
		// is the error of the missing key instead.
		c.dateKeys = append(c.dateKeys, dateKey{kv, msg + kv.keyNote})
		return
	}
	c.r.warnings.Add(c.p, kv.keyLine, msg+kv.keyNote)
}

// required reports the keys every article must have that the front
// matter lacks: one message a line, so a date: standing for a missing
// published: gets the error saying to rename it, not its warning too;
// and a key written in another case (Title:) its error only.
func (c *fileCheck) required() {
	for i, d := range c.dateKeys {
		if i == 0 && !c.seen.published {
			c.r.errs.Add(c.p, d.f.keyLine, fmt.Sprintf("missing required key published: rename %s: to published: (feedgen's name for the publication time)", d.f.key)+d.f.keyNote)
			continue
		}
		c.r.warnings.Add(c.p, d.f.keyLine, d.msg)
	}
	for _, req := range []struct {
		have bool
		key  string
		hint string
	}{
		{c.seen.id, "id", "id: 123 (a positive number, unique across the site)"},
		{c.seen.title, "title", "title: Your headline"},
		{c.seen.published, "published", "published: 2025-01-31T09:30:00"},
	} {
		switch {
		case req.have, slices.Contains(c.cased, req.key):
		case req.key == "published" && len(c.dateKeys) > 0:
		default:
			c.r.errs.Add(c.p, c.open, fmt.Sprintf("missing required key %s: add e.g. %s", req.key, req.hint))
		}
	}
}

// resolve sets what a takes from the config: its category's name and
// URLs, its author, its images' URLs (the default avatar when it has
// none).
func (c *fileCheck) resolve(a *Article, pairs []field) {
	cfg, p, open := c.fp.cfg, c.p, c.open
	cats, ok := cfg.Sections[a.Section]
	switch {
	case !ok:
		c.r.errs.Add(p, 0, fmt.Sprintf("section %q is not in config.yaml: add it under sections (%s)", a.Section, cfg.Path))
	default:
		name, ok := cats[a.SectionSlug]
		if !ok {
			c.r.errs.Add(p, 0, fmt.Sprintf("category %s/%s is not in config.yaml: add %s: <display name> under sections.%s (%s)", a.Section, a.SectionSlug, a.SectionSlug, a.Section, cfg.Path))
		}
		a.Category = name
	}
	a.CategoryURL = cfg.SiteURL + "/" + a.Section + "/" + a.SectionSlug + "/"
	a.URL = a.CategoryURL + a.Slug + "/"

	switch seen := c.seen; {
	case seen.author:
		au, ok := cfg.Authors[a.AuthorKey]
		if !ok {
			c.fieldErr(c.author, fmt.Sprintf("unknown author %q: add it to authors in %s, or use author_name and author_url", a.AuthorKey, cfg.Path))
		}
		if seen.authorName || seen.authorURL {
			c.r.warnings.Add(p, c.author.line, "author is set, so author_name and author_url are ignored")
		}
		a.AuthorName, a.AuthorURL = au.Name, au.URL
	case seen.authorName && seen.authorURL:
		a.AuthorKey = ""
	case seen.authorName || seen.authorURL:
		c.r.errs.Add(p, open, "an inline author needs both author_name and author_url")
	default:
		c.r.errs.Add(p, open, fmt.Sprintf("no author: set author (a key of authors in %s) or both author_name and author_url", cfg.Path))
	}
	var uerr error
	a.AuthorURL, uerr = resolveURL(cfg.SiteURL, a.AuthorURL)
	if uerr != nil {
		c.r.errs.Add(p, open, "author_url: "+uerr.Error())
	}

	if !c.seen.imgSmall {
		a.ImgSmall = cfg.DefaultAvatar
	}
	if !c.seen.imgSmall2x {
		a.ImgSmall2x = a.ImgSmall
	}
	for _, img := range []struct {
		key string
		v   *string
	}{{"img_big", &a.ImgBig}, {"img_big_2x", &a.ImgBig2x}, {"img_small", &a.ImgSmall}, {"img_small_2x", &a.ImgSmall2x}} {
		res, err := resolveURL(cfg.MediaURL, *img.v)
		if err != nil {
			c.fieldErr(fieldOf(pairs, img.key, open), img.key+": "+err.Error())
		}
		*img.v = res
	}
}

// summary takes the announcement from the first paragraph of body (data
// is the whole file, for the line of an error).
func (c *fileCheck) summary(a *Article, data, body []byte) {
	var err error
	if a.Announcement, err = firstParagraph(c.fp.md, body); err != nil {
		c.r.errs.Add(c.p, bytes.Count(data[:len(data)-len(body)], []byte("\n"))+1, err.Error())
	}
}

// fieldOf returns the field key of fields, or one that reports at line
// def when there is none.
func fieldOf(fields []field, key string, def int) field {
	for _, f := range fields {
		if f.key == key {
			return f
		}
	}
	return field{key: key, value: &yaml.Node{Line: def}, line: def}
}

// resolveURL prefixes a path that starts with "/" with prefix, as plain
// text; absolute http(s) URLs and "" are kept as written.
func resolveURL(prefix, s string) (string, error) {
	switch {
	case s == "":
		return "", nil
	case strings.HasPrefix(s, "//"), strings.HasPrefix(s, "http://"), strings.HasPrefix(s, "https://"):
		return s, nil
	case strings.HasPrefix(s, "/"):
		return prefix + s, nil
	}
	return s, fmt.Errorf("%q is neither a path starting with / nor an http(s) URL", s)
}

// parseTime reads published: local wall-clock time in loc, a date alone
// (midnight of that day in loc), or a time with a zone offset converted to
// loc.
func parseTime(written string, loc *time.Location) (wall, instant time.Time, err error) {
	s := strings.TrimSpace(written)
	if t, err := time.ParseInLocation(time.DateOnly, s, loc); err == nil {
		return wallClock(t), t, nil
	}
	if len(s) >= 11 && s[10] == ' ' {
		s = s[:10] + "T" + s[11:]
	}
	if t, err := time.ParseInLocation(PublishedLayout, s, loc); err == nil {
		return wallClock(t), t, nil
	}
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		t = t.In(loc)
		return wallClock(t), t, nil
	}
	if p := dateRange(s); p != "" {
		return time.Time{}, time.Time{}, fmt.Errorf("%q: %s", written, p)
	}
	return time.Time{}, time.Time{}, fmt.Errorf("%q is not a date and time: write YYYY-MM-DDTHH:MM:SS, e.g. 2025-01-31T09:30:00, or a date alone, 2025-01-31 (midnight)", written)
}

// dateRange returns what is out of range in s, a time written in the
// shape of published (YYYY-MM-DD, then maybe THH:MM:SS and a zone) whose
// numbers time.Parse refused: "month 13 is out of range: months are 01 to
// 12", the days of the month (leap years counted), hours, minutes,
// seconds. It returns "" when s is not of that shape, or nothing in it is
// out of range.
func dateRange(s string) string {
	num := func(i, n int) (int, bool) {
		if i+n > len(s) {
			return 0, false
		}
		v := 0
		for _, c := range s[i : i+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	if !ok1 || !ok2 || !ok3 || s[4] != '-' || s[7] != '-' {
		return ""
	}
	switch {
	case mo > 12 && d >= 1 && d <= 12 && mo <= daysIn(y, time.Month(d)):
		const swapped = "month %02d is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD)"
		// The value meant, when it is one: with the seconds a time
		// without them lacks.
		meant := fmt.Sprintf("%s-%02d-%02d%s", s[:4], d, mo, s[10:])
		if _, ok := withSeconds(meant); ok {
			meant = meant[:16] + ":00" + meant[16:]
		}
		if _, _, err := parseTime(meant, time.UTC); err != nil {
			return fmt.Sprintf(swapped, mo)
		}
		return fmt.Sprintf(swapped+": did you mean %s?", mo, meant)
	case mo < 1 || mo > 12:
		return fmt.Sprintf("month %02d is out of range: months are 01 to 12 (YYYY-MM-DD)", mo)
	case d < 1 || d > daysIn(y, time.Month(mo)):
		return fmt.Sprintf("day %02d is out of range: the days of %s %d are 01 to %d", d, time.Month(mo), y, daysIn(y, time.Month(mo)))
	case len(s) == 10:
		return ""
	}
	h, ok1 := num(11, 2)
	mi, ok2 := num(14, 2)
	if !ok1 || !ok2 || s[10] != 'T' || s[13] != ':' {
		return ""
	}
	switch {
	case h > 23:
		return fmt.Sprintf("hour %02d is out of range: hours are 00 to 23 (midnight is 00:00:00 of the next day)", h)
	case mi > 59:
		return fmt.Sprintf("minute %02d is out of range: minutes are 00 to 59", mi)
	}
	if t, ok := withSeconds(s); ok {
		return "no seconds: write HH:MM:SS, e.g. " + t
	}
	sec, ok := num(17, 2)
	if !ok || s[16] != ':' {
		return ""
	}
	if sec > 59 {
		return fmt.Sprintf("second %02d is out of range: seconds are 00 to 59", sec)
	}
	return ""
}

// withSeconds returns, for s a date and time without seconds
// (YYYY-MM-DDTHH:MM, maybe with a zone: Z or +02:00), its time with them
// and the zone: "10:00:00+02:00"; ok is false for any other s, and when
// the seconds do not make s a valid time.
func withSeconds(s string) (string, bool) {
	if len(s) < 16 || s[10] != 'T' || s[13] != ':' || len(s) > 16 && !strings.ContainsRune("Z+-", rune(s[16])) {
		return "", false
	}
	full := s[:16] + ":00" + s[16:]
	if _, _, err := parseTime(full, time.UTC); err != nil {
		return "", false
	}
	return full[11:], true
}

// daysIn returns the number of days of month m of year y.
func daysIn(y int, m time.Month) int {
	return time.Date(y, m+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// wallClock keeps t's wall clock, dropping its zone, so that times compare
// as written.
func wallClock(t time.Time) time.Time {
	y, mo, d := t.Date()
	h, mi, sec := t.Clock()
	return time.Date(y, mo, d, h, mi, sec, 0, time.UTC)
}

// openingLine returns the 1-based line of the opening --- of the front
// matter, or 0 when the first non-blank line is something else.
func openingLine(data []byte) int {
	for n := 1; len(data) > 0; n++ {
		line, rest, _ := bytes.Cut(data, []byte("\n"))
		data = rest
		t := bytes.TrimSpace(line)
		if len(t) == 0 {
			continue
		}
		if string(t) == "---" {
			return n
		}
		return 0
	}
	return 0
}

func invalidUTF8Line(data []byte) int {
	line := 1
	for len(data) > 0 {
		r, size := utf8.DecodeRune(data)
		if r == utf8.RuneError && size <= 1 {
			return line
		}
		if r == '\n' {
			line++
		}
		data = data[size:]
	}
	return line
}

func quoteValue(n *yaml.Node) string {
	n = deref(n)
	if n == nil || yamlnode.IsNull(n) {
		return "an empty value"
	}
	if n.Kind != yaml.ScalarNode {
		return "a list or mapping"
	}
	return fmt.Sprintf("%q", n.Value)
}
