package rules

import (
	"bytes"
	_ "embed" // the scripts
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/feedgen/feedgen/internal/listing"
)

// The JavaScript targets share one script, js/listing.js: the listing's
// contract, from a request to its answer. Each target's script is the
// site's data (jsData), then listing.js, then the platform's adapter.

//go:embed js/listing.js
var listingJS string

//go:embed js/assemble.js
var assembleJS string

//go:embed js/nginx.js
var nginxAdapterJS string

//go:embed js/fetch.js
var fetchAdapterJS string

//go:embed js/cloudfront.js
var cloudfrontAdapterJS string

// siteData is what listing.js knows of a site: the F it reads (its
// comment says what each field is).
type siteData struct {
	Chunked     int            `json:"x,omitempty"` // 1 for layout: chunks
	LinkPrefix  string         `json:"b"`
	Default     int            `json:"d"`
	Max         int            `json:"m"`
	Limits      []int          `json:"l"`
	Aligned     int            `json:"a,omitempty"` // 1 or 0
	Kinds       map[string]int `json:"k"`
	Collections map[string]any `json:"c"`
	Zeros       string         `json:"n"`
	NotFound    string         `json:"nf"`
	Options     string         `json:"op"`
	NotAllowed  [2]string      `json:"mna"`
	Unavailable string         `json:"ua,omitempty"` // the 503 of a chunk or feed that cannot be read
	RetryAfter  string         `json:"ra,omitempty"`
	// Feeds are the Content-Type of each reader feed the build has, by
	// its request path.
	Feeds       map[string]any `json:"ft,omitempty"`
	ContentType string         `json:"ct"`
	Allow       string         `json:"allow"`
	Vary        string         `json:"vary"`
}

// newSiteData returns the data of s for listing.js; with filters false,
// only the main listing's (a request for a filtered collection is then
// not found).
func newSiteData(s *Site, filters bool) (*siteData, error) {
	p := s.Paging
	if s.layout().Assembled {
		return chunkedSiteData(s, filters), nil
	}
	if len(p.Limits) == 0 || !p.HasLimit(p.DefaultLimit) || !p.HasLimit(p.MaxLimit) {
		return nil, fmt.Errorf("pagination of the build: limits %v must hold the default %d and the max %d", p.Limits, p.DefaultLimit, p.MaxLimit)
	}
	d := baseSiteData(s)
	d.Limits = p.Limits
	if p.Offsets == listing.OffsetsAligned {
		d.Aligned = 1
	}
	main := false
	for _, c := range s.Collections {
		if len(c.Params) == 0 {
			if c.Dir == listing.Dir {
				d.Collections[""] = c.Count
				main = true
			}
			continue
		}
		if !filters {
			continue
		}
		params := slices.Clone(c.Params)
		slices.SortFunc(params, func(a, b listing.Param) int { return strings.Compare(a.Key, b.Key) })
		kind := listing.Kind(params)
		d.Kinds[kind] = 1
		node, _ := d.Collections[kind].(map[string]any)
		if node == nil {
			node = map[string]any{}
			d.Collections[kind] = node
		}
		for i := len(params) - 1; i > 0; i-- {
			next, _ := node[params[i].Value].(map[string]any)
			if next == nil {
				next = map[string]any{}
				node[params[i].Value] = next
			}
			node = next
		}
		var leaf any = c.Count
		if c.Dir != plainDir(params) {
			leaf = []any{c.Count, c.Dir}
		}
		node[params[0].Value] = leaf
	}
	if !main {
		return nil, fmt.Errorf("the build's manifest has no main listing (collection %q)", listing.Dir)
	}
	if filters {
		for _, f := range s.Filters {
			d.Kinds[listing.FilterKind(f)] = 1
		}
	}
	return d, nil
}

// baseSiteData returns what every site's data holds: the link prefix,
// the default and largest limit, the bodies and headers, the feeds, no
// limits, kinds nor collections yet.
func baseSiteData(s *Site) *siteData {
	p := s.Paging
	prefix := listing.AppendString(nil, s.BaseURL+listing.Path+"?")
	mna := string(listing.AppendMethodNotAllowed(nil, "@"))
	at := strings.IndexByte(mna, '@')
	d := &siteData{
		LinkPrefix: string(prefix[1 : len(prefix)-1]),
		Default:    p.DefaultLimit, Max: p.MaxLimit, Limits: []int{},
		Kinds:       map[string]int{},
		Collections: map[string]any{},
		Zeros:       digitZeros(),
		NotFound:    listing.NotFoundBody, Options: listing.OptionsBody,
		NotAllowed:  [2]string{mna[:at], mna[at+1:]},
		ContentType: listing.ContentType, Allow: listing.Allow, Vary: listing.Vary,
	}
	if len(s.Feeds) > 0 {
		d.Feeds = map[string]any{}
		for _, f := range s.Feeds {
			d.Feeds[listing.Path+f.File] = f.ContentType
		}
		d.Unavailable, d.RetryAfter = listing.UnavailableBody, listing.RetryAfter
	}
	return d
}

// chunkedSiteData returns the data of a site of layout: chunks, whose
// pages assemble.js puts together: no limits (any is answered), no
// counts nor folders (each collection's index has its count, and
// assemble.js names its folder), so that the script holds nothing a
// build changes: only the configuration (base URL, limits, filters).
func chunkedSiteData(s *Site, filters bool) *siteData {
	d := baseSiteData(s)
	d.Chunked, d.Unavailable, d.RetryAfter = 1, listing.UnavailableBody, listing.RetryAfter
	if filters {
		for _, c := range s.Collections {
			if len(c.Params) > 0 {
				params := slices.Clone(c.Params)
				slices.SortFunc(params, func(a, b listing.Param) int { return strings.Compare(a.Key, b.Key) })
				d.Kinds[listing.Kind(params)] = 1
			}
		}
		for _, f := range s.Filters {
			d.Kinds[listing.FilterKind(f)] = 1
		}
	}
	return d
}

// plainDir is the folder of the collection of params (sorted) as
// listing.js writes it: each value's bytes kept or escaped, as
// listing.EncodeValue does for all but device names of Windows and long
// values, whose folders the data names.
func plainDir(params []listing.Param) string {
	var b strings.Builder
	b.WriteString(listing.Dir)
	for _, p := range params {
		b.WriteString("/" + p.Key + "/")
		for i := 0; i < len(p.Value); i++ {
			c := p.Value[i]
			if 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "_%02x", c)
			}
		}
	}
	return b.String()
}

// digitZeros returns the zeros of the runs of ten Unicode decimal digits
// (category Nd) past ASCII, each as its difference from the one before in
// base 36, comma-separated: the digits feedgen serve reads in a limit or
// offset, from the same table.
func digitZeros() string {
	var zeros []string
	last := uint32(0)
	add := func(lo, hi, stride uint32) {
		for r := lo; r <= hi; r += stride {
			if r >= 0x80 && (r-lo)%10 == 0 {
				zeros = append(zeros, strconv.FormatUint(uint64(r-last), 36))
				last = r
			}
		}
	}
	for _, r := range unicode.Nd.R16 {
		add(uint32(r.Lo), uint32(r.Hi), uint32(r.Stride))
	}
	for _, r := range unicode.Nd.R32 {
		add(r.Lo, r.Hi, r.Stride)
	}
	return strings.Join(zeros, ",")
}

// script returns the JavaScript of a target: a header comment, the data
// of d, listing.js, assemble.js for a build of layout: chunks, and the
// adapter.
func script(header string, d *siteData, adapter string) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(header)
	var data bytes.Buffer
	enc := json.NewEncoder(&data)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(d); err != nil {
		return nil, fmt.Errorf("encoding the site's data: %w", err)
	}
	if d.Chunked == 1 {
		// A literal: nginx's njs runs the top level for every request,
		// and makes this object several times faster than it parses
		// JSON. It has no key that a request chose (no filter value,
		// such as __proto__, which JSON.parse would make a key like any
		// other); the JSON has no line break (Encode escapes U+2028 and
		// U+2029 too).
		b.WriteString("var F = ")
		b.WriteString(strings.TrimSuffix(data.String(), "\n"))
		b.WriteString(";\n")
	} else {
		// JSON.parse, not a literal: a value such as __proto__ is then a
		// key like any other. The JSON has no line break (Encode escapes
		// U+2028 and U+2029 too): only its backslashes and quotes are
		// escaped.
		b.WriteString("var F = JSON.parse('")
		b.WriteString(strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(strings.TrimSuffix(data.String(), "\n")))
		b.WriteString("');\n")
	}
	b.WriteString(strings.Replace(listingJS, filterKeysJS, filterKeysLiteral(), 1))
	if d.Chunked == 1 {
		b.WriteString(assembleJS)
	}
	b.WriteString(adapter)
	return b.Bytes(), nil
}

// filterKeysJS stands in listing.js for the query parameters of the
// filters: script writes listing.FilterKeys there, a literal of the
// table's, not a copy by hand.
const filterKeysJS = "FILTER_KEYS"

// filterKeysLiteral returns listing.FilterKeys as a JavaScript array.
func filterKeysLiteral() string {
	keys := listing.FilterKeys()
	q := make([]string, len(keys))
	for i, k := range keys {
		q[i] = strconv.Quote(k) // lowercase letters: the same in JavaScript
	}
	return "[" + strings.Join(q, ", ") + "]"
}

// compact removes what a script does not need to run: indentation, blank
// lines and comment lines (listing.js and the adapters only comment on
// lines of their own).
func compact(js []byte) []byte {
	var b bytes.Buffer
	for line := range strings.SplitSeq(string(js), "\n") {
		line = strings.TrimLeft(line, " \t")
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		b.WriteString(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

// minify removes the white space of a compacted script that separates no
// two words (names, numbers, keywords) nor two '+' or two '-', outside
// string literals, and the ';' that ends the last statement of a block
// (JavaScript inserts one before a '}'); it writes a hexadecimal number in
// decimal when that is shorter. It relies on what listing.js and the
// CloudFront adapter (the script it makes small) promise: no comment left,
// every statement ending with ';', no regular expression nor template
// literal.
func minify(js []byte) []byte {
	word := func(c byte) bool {
		return c == '_' || c == '$' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= 0x80
	}
	// endsWith reports whether b ends with the keyword k.
	endsWith := func(b []byte, k string) bool {
		n := len(b) - len(k)
		return n >= 0 && string(b[n:]) == k && (n == 0 || !word(b[n-1]))
	}
	var b []byte
	var headers []bool // for each '(' open: whether it opens the head of an if, for or while
	headEnd := -1      // where the last head closed: a ';' there is an empty statement
	empty := -1        // where the last empty statement is: its ';' stays
	for i := 0; i < len(js); i++ {
		switch c := js[i]; c {
		case '(':
			headers = append(headers, endsWith(b, "if") || endsWith(b, "for") || endsWith(b, "while"))
			b = append(b, c)
		case ')':
			if n := len(headers); n > 0 {
				if headers[n-1] {
					headEnd = len(b) + 1
				}
				headers = headers[:n-1]
			}
			b = append(b, c)
		case ';':
			if len(b) == headEnd || endsWith(b, "else") || endsWith(b, "do") {
				empty = len(b)
			}
			b = append(b, c)
		case '"', '\'':
			j := i + 1
			for j < len(js) && js[j] != c {
				if js[j] == '\\' {
					j++
				}
				j++
			}
			b = append(b, js[i:min(j+1, len(js))]...)
			i = j
		case ' ', '\t', '\n':
			j := i
			for j+1 < len(js) && (js[j+1] == ' ' || js[j+1] == '\t' || js[j+1] == '\n') {
				j++
			}
			if len(b) > 0 && j+1 < len(js) {
				p, n := b[len(b)-1], js[j+1]
				if word(p) && word(n) || p == n && (p == '+' || p == '-') {
					b = append(b, ' ')
				}
			}
			i = j
		case '}':
			if n := len(b); n > 0 && b[n-1] == ';' && n-1 != empty {
				b = b[:n-1]
			}
			b = append(b, c)
		case '0':
			j := i + 2
			for j < len(js) && strings.IndexByte("0123456789abcdefABCDEF", js[j]) >= 0 {
				j++
			}
			// A number of its own: no word before, no word or '.' after.
			if i+1 < len(js) && js[i+1] == 'x' && (len(b) == 0 || !word(b[len(b)-1])) && (j == len(js) || !word(js[j]) && js[j] != '.') {
				if v, err := strconv.ParseUint(string(js[i+2:j]), 16, 53); err == nil && len(strconv.FormatUint(v, 10)) < j-i {
					b = strconv.AppendUint(b, v, 10)
					i = j - 1
					continue
				}
			}
			b = append(b, c)
		default:
			b = append(b, c)
		}
	}
	return b
}
