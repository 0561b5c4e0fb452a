package rules

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/listing"
)

// The plain targets (nginx, caddy, apache) answer the listing with
// regular expressions and lookup tables, without a script. What they share
// is here: lookups, each a variable computed from the raw query or from
// other variables by the first of its cases that matches, which each
// target writes in its own syntax (nginx map, Caddy map, mod_rewrite
// conditions). They read a query as listing.ParseQuery does as far as
// regular expressions go:
//
//   - pairs split on '&', the last value of a parameter wins, keys
//     percent-encoded or not;
//   - limit and offset with leading zeros, '_' between digits, a '+'
//     sign, ASCII and Unicode white space around (as '+', %20, %0A, %C2%A0,
//     ...), limits above max_limit clamped, zero, negative and invalid
//     values read as the default; digits percent-encoded in a limit;
//   - filter values in any form a client may encode them (each byte
//     percent-encoded or not, a space as '+' or %20), mapped onto their
//     folders by a table of the build's values; a value no article has
//     selects the empty collection;
//   - an offset at or past the end: its count from a table of the build's
//     counts, its previous link by a subtraction done digit by digit.
//
// What a regular expression cannot read they answer with the JSON 404:
// digits of other scripts, an offset with escaped digits or more than
// three '_', the previous link of a page past the end when a filter value
// is not written as links write it, or when the offset ends in more than
// rxMaxZeros zeros before its last digits.

// rxQuery names the raw query string in the source of an rxLookup.
const rxQuery = "query"

// rxMethod stands for the request's method in the body of the 405, which
// each target writes with its own variable.
const rxMethod = "\ue000"

// An rxCase is one row of a lookup: when the source matches the regular
// expression re (in the syntax PCRE and Go's RE2 share), the variable is
// out, in which ${1} to ${9} stand for re's groups.
type rxCase struct {
	re, out string
}

// An rxLookup sets variable name from its source, the concatenation of
// parts: "$" and a variable's name (rxQuery for the raw query), or text.
// The first case that matches gives the value; none, def.
type rxLookup struct {
	name   string
	source []string
	cases  []rxCase
	def    string
}

// The markers in the values of the lookups: a filter value that is
// certainly no value of the build (the empty collection), one that cannot
// be told (the JSON 404), and a page past the end, whose body the past
// lookups compute.
const (
	rxUnknown = "?"
	rxUnsure  = "!"
	rxPast    = "#"
)

// rxLookups returns the lookups that choose the answer to a GET of the
// listing, in an order in which each uses only the variables before it.
// The last, "page", is the file of the page (relative to the root, past
// the end when it is missing), rxUnknown for the page of the empty
// collection at offset 0, rxPast for a page past the end, or "" for the
// JSON 404.
func rxLookups(s *Site) []rxLookup {
	var ls []rxLookup
	keys := append([]string{"limit", "offset"}, listing.FilterKeys()...)
	for _, k := range keys {
		ls = append(ls, rxLookup{name: "arg_" + k, source: []string{"$" + rxQuery}, cases: []rxCase{{re: rxArg(k), out: "${1}"}}})
	}
	ls = append(ls, rxLookup{name: "limit", source: []string{"$arg_limit"}, cases: rxLimitCases(s.Paging), def: strconv.Itoa(s.Paging.DefaultLimit)})
	ls = append(ls, rxLookup{name: "offset", source: []string{"$arg_offset"}, cases: rxOffsetCases(), def: "0"})
	values := rxValues(s)
	fffd := false
	for _, vs := range values {
		fffd = fffd || slices.ContainsFunc(vs, func(v string) bool { return strings.ContainsRune(v, utf8.RuneError) })
	}
	var segs []string
	for _, k := range listing.FilterKeys() {
		cases, def := rxValueCases(k, values[k], fffd)
		ls = append(ls, rxLookup{name: "seg_" + k, source: []string{"$arg_" + k}, cases: cases, def: def})
		segs = append(segs, "$seg_"+k)
	}
	ls = append(ls, rxLookup{name: "collection", source: segs, cases: rxCollectionCases(s, values), def: rxUnsure})
	unknown := regexp.QuoteMeta(rxUnknown)
	ls = append(ls, rxLookup{
		name:   "page",
		source: []string{"$limit", "|", "$offset", "|", "$collection"},
		cases: []rxCase{
			// An offset of more than 18 digits has no page: it is past
			// the end, and too long a name for some file systems.
			{re: `^([0-9]+)\|([0-9]{1,18})\|(` + listing.Dir + `[^|]*)$`, out: listing.PagePathOf("${3}", "${1}", "${2}")},
			{re: `^[0-9]+\|[0-9]+\|` + listing.Dir, out: rxPast},
			{re: `^[0-9]+\|0\|` + unknown + `$`, out: rxUnknown},
			{re: `^[0-9]+\|[0-9]+\|` + unknown + `$`, out: rxPast},
		},
	})
	return ls
}

// The reader feeds (SPEC §13) of a build are files, which a plain target
// maps a request onto as it does a page: the feed path of each format the
// build has (Site.Feeds) gets the listing's methods and headers, and the
// feed file of the collection the "collection" lookup chooses, with its
// format's Content-Type (limit and offset are not read). A collection
// that is none of the build's (rxUnknown, rxUnsure: rxFeedCollection does
// not match) or has no feed file (no articles) is the JSON 404: no empty
// feeds.

// feedPaths returns the request path of each feed of s, in the order of
// s.Feeds.
func feedPaths(s *Site) []string {
	var ps []string
	for _, f := range s.Feeds {
		ps = append(ps, listing.Path+f.File)
	}
	return ps
}

// rxFeedPaths returns the regular expression of the request paths of the
// feeds of s (with no ^ or $): "" for a build without feeds.
func rxFeedPaths(s *Site) string {
	var alts []string
	for _, p := range feedPaths(s) {
		alts = append(alts, regexp.QuoteMeta(p))
	}
	if len(alts) == 0 {
		return ""
	}
	return "(?:" + strings.Join(alts, "|") + ")"
}

// rxFeedCollection matches the value of the "collection" lookup that is a
// collection's folder, which may hold feeds.
const rxFeedCollection = "^" + listing.Dir + "(?:/|$)"

// rxMaxZeros is the most zeros an offset past the end may have before
// its last digits (as many as max_limit has) for the past lookups to
// compute its previous link: 10^40 is past the end of any feed.
const rxMaxZeros = 40

// rxPastLookups returns the lookups that compute the page past the end
// of a collection (or of the empty one), after those of rxLookups: "count"
// is the collection's count when the offset is past its end, "link" the
// query of the previous link; either is "" when the offset is not past the
// end (an offset of aligned mode that is not) or the link cannot be
// computed.
//
// The previous link's offset is offset-limit, computed on the offset
// padded with zeros to one digit more than max_limit has: the digits of
// max_limit's length from the right one at a time, each lookup taking
// "limit|digits left|borrow|digits done" to the next, then the digits
// left less the borrow, their zeros becoming nines.
func rxPastLookups(s *Site) []rxLookup {
	var ls []rxLookup
	n := len(strconv.Itoa(s.Paging.MaxLimit))
	var pad []rxCase
	for d := 1; d <= n; d++ {
		pad = append(pad, rxCase{re: "^([0-9]{" + strconv.Itoa(d) + "})$", out: strings.Repeat("0", n+1-d) + "${1}"})
	}
	pad = append(pad, rxCase{re: "^([0-9]+)$", out: "${1}"})
	ls = append(ls, rxLookup{name: "pad", source: []string{"$offset"}, cases: pad})
	source := []string{"$limit", "|", "$pad", "|0|"}
	for i := 0; i < n; i++ {
		var cs []rxCase
		for _, l := range s.Paging.Limits {
			ld := int(fmt.Sprintf("%0*d", n, l)[n-1-i] - '0')
			for borrow := 0; borrow <= 1; borrow++ {
				for o := 0; o <= 9; o++ {
					r, b := o-ld-borrow, 0
					if r < 0 {
						r, b = r+10, 1
					}
					cs = append(cs, rxCase{
						re:  fmt.Sprintf(`^(%d)\|([0-9]*)%d\|%d\|([0-9]*)$`, l, o, borrow),
						out: fmt.Sprintf("${1}|${2}|%d|%d${3}", b, r),
					})
				}
			}
		}
		name := "digit" + strconv.Itoa(i)
		ls = append(ls, rxLookup{name: name, source: source, cases: cs})
		source = []string{"$" + name}
	}
	// The digits left less the borrow, as "digits|zeros|digits done": the
	// zeros at their end become nines.
	dec := []rxCase{{re: `^[0-9]+\|([0-9]+)\|0\|([0-9]+)$`, out: "${1}||${2}"}}
	for d := 1; d <= 9; d++ {
		dec = append(dec, rxCase{re: fmt.Sprintf(`^[0-9]+\|([0-9]*)%d(0*)\|1\|([0-9]+)$`, d), out: fmt.Sprintf("${1}%d|${2}|${3}", d-1)})
	}
	ls = append(ls, rxLookup{name: "borrow", source: source, cases: dec})
	var nines []rxCase
	for z := 0; z <= rxMaxZeros; z++ {
		nines = append(nines, rxCase{re: "^([0-9]*)\\|" + strings.Repeat("0", z) + "\\|([0-9]+)$", out: "${1}" + strings.Repeat("9", z) + "${2}"})
	}
	ls = append(ls, rxLookup{name: "nines", source: []string{"$borrow"}, cases: nines})
	// The previous link's limit and offset: no offset when offset <= limit.
	var prev []rxCase
	for _, l := range s.Paging.Limits {
		prev = append(prev, rxCase{re: fmt.Sprintf(`^%d\|(?:%s)\|`, l, rxAtMost(strconv.Itoa(l))), out: fmt.Sprintf("limit=%d", l)})
	}
	prev = append(prev, rxCase{re: `^([0-9]+)\|[0-9]+\|0*([1-9][0-9]*)$`, out: "limit=${1}&offset=${2}"})
	ls = append(ls, rxLookup{name: "previous", source: []string{"$limit", "|", "$offset", "|", "$nines"}, cases: prev})
	// The filter parameters of the link, as links write them: a value
	// written so is repeated as it is.
	var link []string
	for _, k := range listing.FilterKeys() {
		out := k + "=${1}&"
		if k > "offset" {
			out = "&" + k + "=${1}"
			if !slices.Contains(link, "$previous") {
				link = append(link, "$previous", "|")
			}
		}
		ls = append(ls, rxLookup{name: "param_" + k, source: []string{"$arg_" + k},
			cases: []rxCase{{re: "^$", out: ""}, {re: "^(" + rxFormEncoded + ")$", out: out}}, def: rxUnsure})
		link = append(link, "$param_"+k, "|")
	}
	link = link[:len(link)-1]
	ls = append(ls, rxLookup{name: "link", source: link, cases: []rxCase{{
		re: `^([^|!]*)\|([^|!]*)\|([^|!]+)\|([^|!]*)\|([^|!]*)$`, out: "${1}${2}${3}${4}${5}",
	}}})
	// The count of a collection past whose end the offset is.
	var past []rxCase
	byCount := map[int][]string{}
	var counts []int
	for _, c := range s.Collections {
		if byCount[c.Count] == nil {
			counts = append(counts, c.Count)
		}
		byCount[c.Count] = append(byCount[c.Count], c.Dir)
	}
	slices.Sort(counts)
	for _, c := range counts {
		dirs := byCount[c]
		for len(dirs) > 0 {
			// At most rxMaxLen bytes of folders a case.
			n, size := 0, 0
			for n < len(dirs) && (n == 0 || size+len(dirs[n]) < rxMaxLen) {
				size += len(dirs[n]) + 1
				n++
			}
			past = append(past, rxCase{re: "^(?:" + strings.Join(dirs[:n], "|") + `)\|(?:` + rxAtLeast(strconv.Itoa(c)) + ")$", out: strconv.Itoa(c)})
			dirs = dirs[n:]
		}
	}
	past = append(past, rxCase{re: "^" + regexp.QuoteMeta(rxUnknown) + `\|[0-9]+$`, out: "0"})
	ls = append(ls, rxLookup{name: "count", source: []string{"$collection", "|", "$offset"}, cases: past})
	return ls
}

// rxBody returns the text of the page past the end around its count and
// the query of its previous link.
func rxBody(s *Site) (head, middle, tail string) {
	link := string(listing.AppendString(nil, s.BaseURL+listing.Path+"?"))
	return `{"count":`, `,"next":null,"previous":` + link[:len(link)-1], `","results":[]}`
}

// rxBodyLookup returns the lookup of the page past the end, after those
// of rxPastLookups: "" when the offset is not past the end (of aligned
// mode) or the page cannot be computed.
func rxBodyLookup(s *Site) rxLookup {
	head, middle, tail := rxBody(s)
	return rxLookup{name: "body", source: []string{"$count", "|", "$link"}, cases: []rxCase{{
		re: `^([0-9]+)\|(.+)$`, out: head + "${1}" + middle + "${2}" + tail,
	}}}
}

// rxValues returns the values of each filter parameter in the build's
// collections, sorted.
func rxValues(s *Site) map[string][]string {
	values := map[string][]string{}
	for _, c := range s.Collections {
		for _, p := range c.Params {
			if !slices.Contains(values[p.Key], p.Value) {
				values[p.Key] = append(values[p.Key], p.Value)
			}
		}
	}
	for _, vs := range values {
		slices.Sort(vs)
	}
	return values
}

// rxEmptyPage is the page of the empty collection at offset 0: no
// count, no links, whatever the limit.
func rxEmptyPage(s *Site) string {
	return string(listing.AppendEmptyPage(nil, s.BaseURL, nil, 0, s.Paging.DefaultLimit, "0"))
}

// rxArg returns the regular expression of a query whose last parameter
// key (percent-encoded or not) has its value as group 1, empty for a key
// without '='. The greedy lead finds the last one.
func rxArg(key string) string {
	k := rxKey(key)
	return `^(?:.*&)?` + k + `(?:=([^&]*))?(?:&.*)?$`
}

// rxKey returns the regular expression of key, a parameter name of ASCII
// letters, each one as it is or percent-encoded.
func rxKey(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		b.WriteString("(?:" + key[i:i+1] + "|" + rxEscape(key[i]) + ")")
	}
	return b.String()
}

// rxEscape returns the regular expression of the percent-encoding of
// byte c, hex digits in either case.
func rxEscape(c byte) string {
	const digits = "0123456789ABCDEF"
	hex := func(d byte) string {
		if d < 10 {
			return digits[d : d+1]
		}
		return "[" + digits[d:d+1] + strings.ToLower(digits[d:d+1]) + "]"
	}
	return "%" + hex(c>>4) + hex(c&15)
}

// rxSpace is the regular expression of the white space that int()
// strips around a number, as a query writes it: '+' for a space, or
// percent-encoded (UTF-8 for the non-ASCII ones): U+0009-000D, U+0020,
// U+0085, U+00A0, U+1680, U+2000-200A, U+2028, U+2029, U+202F, U+205F,
// U+3000 (TestSpace checks it against listing.ParseInt).
const rxSpace = `(?:\+|%20|%0[9A-Da-d]|%[Cc]2%(?:85|[Aa]0)|%[Ee]1%9[Aa]%80|%[Ee]2%80%(?:8[0-9Aa]|[Aa][89Ff])|%[Ee]2%81%9[Ff]|%[Ee]3%80%80)*`

// The parts of an integer as a query may write it: a digit (d), a
// digit from lo to 9, the '_' between two digits, and the signs.
func rxDigit(d byte) string { return "(?:" + string('0'+d) + "|" + rxEscape('0'+d) + ")" }

func rxDigitFrom(lo byte) string {
	if lo == 9 {
		return rxDigit(9)
	}
	return "(?:[" + string('0'+lo) + "-9]|%3[" + string('0'+lo) + "-9])"
}

const (
	rxUnderscore = "(?:_|%5[fF])"
	rxPlus       = "(?:%2[bB])?"
	rxMinus      = "(?:-|%2[dD])"
	// rxZeros are leading zeros, each with the '_' that may follow it.
	rxZeros = "(?:" + "(?:0|%30)" + rxUnderscore + "?)*"
)

// rxUncertain matches a value that may be a number a regular expression
// does not read: a non-ASCII byte, as it is or percent-encoded (digits of
// other scripts).
const rxUncertain = `[^[:ascii:]]|%[89a-fA-F][0-9a-fA-F]`

// rxLimitCases returns the cases that read the limit's raw value: the
// limit to answer, or "" for the JSON 404.
func rxLimitCases(p listing.Pagination) []rxCase {
	head, tail := "^"+rxSpace+rxPlus+rxZeros, rxSpace+"$"
	cs := []rxCase{
		{re: `^$`, out: strconv.Itoa(p.DefaultLimit)},
		{re: "^" + rxSpace + rxMinus, out: strconv.Itoa(p.DefaultLimit)}, // negative, or not a number
	}
	for _, l := range p.Limits {
		cs = append(cs, rxCase{re: head + rxNumber(strconv.Itoa(l)) + tail, out: strconv.Itoa(l)})
	}
	cs = append(cs,
		rxCase{re: head + "(?:" + rxAbove(strconv.Itoa(p.MaxLimit)) + ")" + tail, out: strconv.Itoa(p.MaxLimit)},
		rxCase{re: head + rxDigit(0) + tail, out: strconv.Itoa(p.DefaultLimit)},
		// Any other number is a limit that is not pre-rendered.
		rxCase{re: head + rxDigitFrom(0) + "(?:" + rxUnderscore + "?" + rxDigitFrom(0) + ")*" + tail, out: ""},
		rxCase{re: rxUncertain, out: ""},
	)
	return cs
}

// rxNumber returns the regular expression of the decimal digits n, with
// '_' allowed between two of them.
func rxNumber(n string) string {
	var b strings.Builder
	for i := 0; i < len(n); i++ {
		if i > 0 {
			b.WriteString(rxUnderscore + "?")
		}
		b.WriteString(rxDigit(n[i] - '0'))
	}
	return b.String()
}

// rxAbove returns the regular expression of the numbers above n (decimal
// digits, no leading zero), with '_' allowed between two digits.
func rxAbove(n string) string {
	anyDigit := "(?:" + rxUnderscore + "?" + rxDigitFrom(0) + ")"
	alts := []string{rxDigitFrom(1) + anyDigit + "{" + strconv.Itoa(len(n)) + ",}"} // longer
	for i := 0; i < len(n); i++ {
		d := n[i] - '0'
		if d == 9 {
			continue
		}
		alt := rxNumber(n[:i])
		if i > 0 {
			alt += rxUnderscore + "?"
		}
		alt += rxDigitFrom(d + 1)
		if rest := len(n) - i - 1; rest > 0 {
			alt += anyDigit + "{" + strconv.Itoa(rest) + "}"
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, "|")
}

// rxOffsetCases returns the cases that read the offset's raw value: the
// offset as a canonical decimal, or "" for the JSON 404.
func rxOffsetCases() []rxCase {
	head, tail := "^"+rxSpace+rxPlus, rxSpace+"$"
	return []rxCase{
		{re: `^$`, out: "0"},
		{re: "^" + rxSpace + rxMinus, out: "0"}, // negative, or not a number
		{re: head + "(?:0_?)*0" + tail, out: "0"},
		{re: head + "(?:0_?)*([1-9][0-9]*)(?:_([0-9]+))?(?:_([0-9]+))?(?:_([0-9]+))?" + tail, out: "${1}${2}${3}${4}"},
		// Any other number: escaped digits, more '_'.
		{re: head + rxDigitFrom(0) + "(?:" + rxUnderscore + "?" + rxDigitFrom(0) + ")*" + tail, out: ""},
		{re: rxUncertain, out: ""},
	}
}

// rxMaxLen is about the longest regular expression of a case: nginx
// reads no longer parameter than 4096 bytes.
const rxMaxLen = 3000

// rxValueCases returns the cases that map the raw value of filter
// parameter key onto its part of a collection's folder, and the default:
// "" for no filter, "/key/NAME" for a value of the build (NAME as
// listing.EncodeValue writes it), "/key/?" (the default) for a value no
// article has, or "/key/!" for a value that cannot be told from one of
// the build: one with a malformed escape (whose '%' is kept), a non-ASCII
// byte as it is, or when some value of the build has U+FFFD, an escaped
// non-ASCII byte (invalid UTF-8 decodes to U+FFFD).
//
// A value whose every form makes too long a regular expression is matched
// only as links write it; then a value written otherwise cannot be told,
// and one longer than it in every form neither when even that is too long.
func rxValueCases(key string, values []string, fffd bool) (cases []rxCase, def string) {
	unknown, unsure := "/"+key+"/"+rxUnknown, "/"+key+"/"+rxUnsure
	cs := []rxCase{{re: `^$`, out: ""}}
	partly := false // some value is matched only as links write it
	long := -1      // the fewest characters of a value matched in no form
	for _, v := range values {
		out := "/" + key + "/" + listing.EncodeValue(v)
		if re := rxValue(v); len(re) < rxMaxLen {
			cs = append(cs, rxCase{re: "^" + re + "$", out: out})
			continue
		}
		partly = true
		if re := regexp.QuoteMeta(url.QueryEscape(v)); len(re) < rxMaxLen {
			cs = append(cs, rxCase{re: "^" + re + "$", out: out})
		} else if n := utf8.RuneCountInString(v); long < 0 || n < long {
			long = n
		}
	}
	if long >= 0 {
		cs = append(cs, rxCase{re: "^" + rxChars(long) + "$", out: unsure})
	}
	re := `%(?:[^0-9a-fA-F]|[0-9a-fA-F](?:[^0-9a-fA-F]|$)|$)|[^[:ascii:]]`
	if fffd {
		re += `|%[89a-fA-F][0-9a-fA-F]`
	}
	cs = append(cs, rxCase{re: re, out: unsure})
	if partly {
		return append(cs, rxCase{re: "^" + rxFormEncoded + "$", out: unknown}), unsure
	}
	return cs, unknown
}

// rxChars returns a regular expression of n characters or more. Go's
// regular expressions (Caddy's) take no repetition count over 1000: a
// larger one is written as a sequence of counts of 1000 at most.
func rxChars(n int) string {
	var b strings.Builder
	for ; n > 1000; n -= 1000 {
		b.WriteString(".{1000}")
	}
	b.WriteString(".{" + strconv.Itoa(n) + ",}")
	return b.String()
}

// rxValue returns the regular expression of the ways a query may write
// value v: each character as it is (where a query can hold it so) or its
// bytes percent-encoded, a space also as '+'.
func rxValue(v string) string {
	var b strings.Builder
	for len(v) > 0 {
		r, size := utf8.DecodeRuneInString(v)
		var alts []string
		switch {
		case r == ' ':
			alts = append(alts, `\+`)
		case r == utf8.RuneError && size == 1:
		case r >= 0x80 || r > ' ' && r < 0x7f && !strings.ContainsRune("&+%#", r):
			alts = append(alts, regexp.QuoteMeta(v[:size]))
		}
		var esc strings.Builder
		for i := 0; i < size; i++ {
			esc.WriteString(rxEscape(v[i]))
		}
		alts = append(alts, esc.String())
		b.WriteString("(?:" + strings.Join(alts, "|") + ")")
		v = v[size:]
	}
	return b.String()
}

// rxCollectionCases returns the cases that map the parts of the filters
// (seg_author, seg_category, seg_section, seg_tag concatenated) onto the
// collection's folder: the main listing's, a collection of the build,
// rxUnknown for the empty collection of a kind the build pre-renders, or
// rxUnsure (the default) for the JSON 404. A value of the build has its
// collection where its parameter alone is a kind (the articles of a
// category are in its section): one case maps them all; a category and
// its section are a collection each.
func rxCollectionCases(s *Site, values map[string][]string) []rxCase {
	dirs := map[string]bool{}
	for _, c := range s.Collections {
		dirs[c.Dir] = true
	}
	cs := []rxCase{{re: "^$", out: listing.Dir}}
	var single, kinds []string
	for _, f := range s.Filters {
		params := listing.FilterParams(f)
		if len(params) == 1 {
			k := params[0]
			single = append(single, k)
			for _, v := range values[k] {
				if seg := "/" + k + "/" + listing.EncodeValue(v); !dirs[listing.Dir+seg] {
					cs = append(cs, rxCase{re: "^" + seg + "$", out: rxUnknown})
				}
			}
		}
		var k strings.Builder
		for _, p := range params {
			k.WriteString("/" + p + `/(?:[a-z0-9_-]+|` + regexp.QuoteMeta(rxUnknown) + ")")
		}
		kinds = append(kinds, k.String())
	}
	if len(single) > 0 {
		cs = append(cs, rxCase{re: "^(/(?:" + strings.Join(single, "|") + ")/[a-z0-9_-]+)$", out: listing.Dir + "${1}"})
	}
	for _, c := range s.Collections {
		if len(c.Params) > 1 {
			cs = append(cs, rxCase{re: "^" + strings.TrimPrefix(c.Dir, listing.Dir) + "$", out: c.Dir})
		}
	}
	if len(kinds) > 0 {
		cs = append(cs, rxCase{re: "^(?:" + strings.Join(kinds, "|") + ")$", out: rxUnknown})
	}
	return cs
}

// rxLocation returns the lookup of the Location of the 301 for the
// listing's path without its slash: the path, and the query as it was
// sent when it has one. feedgen serve percent-encodes the bytes of a query
// it does not repeat as they are, which a lookup cannot: the location of
// such a query is "", the JSON 404.
func rxLocation() rxLookup {
	return rxLookup{name: "location", source: []string{"$" + rxQuery}, cases: []rxCase{
		{re: "^$", out: listing.Path},
		{re: `^([A-Za-z0-9._~/#%\[\]=:;$&()+,!?*@'-]+)$`, out: listing.Path + "?${1}"},
	}}
}

// rxTemplate writes out, the output of a case, with lit for its text and
// group for each ${N}.
func rxTemplate(out string, lit func(string) string, group func(n string) string) string {
	var b strings.Builder
	for {
		m := groupRef.FindStringSubmatchIndex(out)
		if m == nil {
			b.WriteString(lit(out))
			return b.String()
		}
		b.WriteString(lit(out[:m[0]]))
		b.WriteString(group(out[m[2]:m[3]]))
		out = out[m[1]:]
	}
}

// groupRef is a group in the output of a case.
var groupRef = regexp.MustCompile(`\$\{([1-9])\}`)

// rxFormEncoded is the regular expression of a value as an HTML form
// encodes it (url.QueryEscape): A-Za-z0-9 and -_.~ as they are, a space
// as '+', every other byte percent-encoded with uppercase hex, the bytes
// valid UTF-8.
const rxFormEncoded = `(?:[A-Za-z0-9._~-]|\+|%(?:[01][0-9A-F]|2[1-9A-CF]|3[A-F]|40|5[B-E]|60|7[B-DF])` +
	`|%(?:C[2-9A-F]|D[0-9A-F])` + rxCont +
	`|%E0%[AB][0-9A-F]` + rxCont + `|%E[1-9A-CEF]` + rxCont + rxCont + `|%ED%[89][0-9A-F]` + rxCont +
	`|%F0%[9AB][0-9A-F]` + rxCont + rxCont + `|%F[1-3]` + rxCont + rxCont + rxCont + `|%F4%8[0-9A-F]` + rxCont + rxCont + `)+`

// rxCont is a continuation byte of UTF-8, percent-encoded.
const rxCont = `%[89AB][0-9A-F]`

// rxAtLeast returns the regular expression of the canonical decimals
// (no leading zero) at least n, itself one.
func rxAtLeast(n string) string {
	if n == "0" {
		return "[0-9]+"
	}
	alts := []string{n, "[1-9][0-9]{" + strconv.Itoa(len(n)) + ",}"}
	for i := 0; i < len(n); i++ {
		if n[i] == '9' {
			continue
		}
		alt := n[:i] + "[" + string(n[i]+1) + "-9]"
		if rest := len(n) - i - 1; rest > 0 {
			alt += "[0-9]{" + strconv.Itoa(rest) + "}"
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, "|")
}

// rxAtMost returns the regular expression of the canonical decimals
// (no leading zero) at most n, itself one.
func rxAtMost(n string) string {
	alts := []string{n, "0"}
	if len(n) > 1 {
		alts = append(alts, "[1-9][0-9]{0,"+strconv.Itoa(len(n)-2)+"}")
	}
	for i := 0; i < len(n); i++ {
		lo := "0"
		if i == 0 {
			lo = "1"
		}
		if n[i] <= lo[0] {
			continue
		}
		alt := n[:i] + "[" + lo + "-" + string(n[i]-1) + "]"
		if rest := len(n) - i - 1; rest > 0 {
			alt += "[0-9]{" + strconv.Itoa(rest) + "}"
		}
		alts = append(alts, alt)
	}
	return strings.Join(alts, "|")
}
