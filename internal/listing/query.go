package listing

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query is a request for one page, as the original service understood it:
// the key of a page, (collection, limit, offset).
type Query struct {
	// Params are the filters that select the collection, sorted by key:
	// the last non-empty value of each parameter named as a filter. None
	// for the main listing.
	Params []Param
	Limit  int // the effective limit: default when absent or invalid, clamped to max_limit
	// Offset is the effective offset as a canonical decimal (no sign, no
	// leading zeros): it may be larger than any integer type.
	Offset string
}

// ParseQuery reads the raw query string of a request the way the original
// service did: pairs split on '&' only, keys and values percent-decoded
// with '+' as a space (invalid UTF-8 becomes U+FFFD), the last value of a
// parameter wins, and limit and offset read as the original's language
// read integers. The parameters named in filters select a collection (an
// empty value is no filter); other parameters are ignored.
func ParseQuery(raw string, p Pagination, filters []string) Query {
	var limit, offset string
	var haveLimit, haveOffset bool
	var params []Param
	for raw != "" {
		var pair string
		pair, raw, _ = strings.Cut(raw, "&")
		if pair == "" {
			continue
		}
		k, v, _ := strings.Cut(pair, "=")
		switch unescape(k) {
		case "limit":
			limit, haveLimit = v, true
		case "offset":
			offset, haveOffset = v, true
		default:
			if len(filters) > 0 {
				params = setParam(params, filters, unescape(k), v)
			}
		}
	}
	q := Query{Limit: p.DefaultLimit, Offset: "0"}
	for _, f := range params {
		if f.Value != "" {
			q.Params = append(q.Params, Param{Key: f.Key, Value: unescape(f.Value)})
		}
	}
	slices.SortFunc(q.Params, func(a, b Param) int { return strings.Compare(a.Key, b.Key) })
	if haveLimit {
		if neg, digits, ok := ParseInt(unescape(limit)); ok && !neg && digits != "0" {
			q.Limit = p.MaxLimit
			if n, small := smallInt(digits); small && n < int64(p.MaxLimit) {
				q.Limit = int(n)
			}
		}
	}
	if haveOffset {
		if neg, digits, ok := ParseInt(unescape(offset)); ok && !neg {
			q.Offset = digits
		}
	}
	return q
}

// setParam records the raw value v of parameter key when key is one of
// filters: the last value of a parameter wins.
func setParam(params []Param, filters []string, key, v string) []Param {
	if !slices.Contains(filters, key) {
		return params
	}
	for i := range params {
		if params[i].Key == key {
			params[i].Value = v
			return params
		}
	}
	return append(params, Param{Key: key, Value: v})
}

// unescape percent-decodes s with '+' as a space, as an HTML form is
// decoded. Malformed escapes are kept as they are; invalid UTF-8 is
// replaced as ValidUTF8 says.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		if utf8.ValidString(s) {
			return s
		}
		return ValidUTF8([]byte(s))
	}
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '+':
			b = append(b, ' ')
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			b = append(b, unhex(s[i+1])<<4|unhex(s[i+2]))
			i += 2
		default:
			b = append(b, c)
		}
	}
	return ValidUTF8(b)
}

// ValidUTF8 returns b as a string with each maximal subpart of an
// ill-formed sequence replaced by one U+FFFD, as Unicode recommends
// (chapter 3, "U+FFFD Substitution of Maximal Subparts") and as the
// original's Python decodes bytes (bytes.decode("utf-8", "replace")): a
// byte that cannot start a sequence is one subpart (%C0%AF gives two
// U+FFFD, %ED%A0%80 three), and a lead byte with the continuation bytes
// that may follow it, cut short, is one (%E2%82 gives one). Go's
// strings.ToValidUTF8 replaces each run of bad bytes by one U+FFFD instead.
func ValidUTF8(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	out := make([]byte, 0, len(b)+8)
	for i := 0; i < len(b); {
		if c := b[i]; c < utf8.RuneSelf {
			out = append(out, c)
			i++
			continue
		}
		if r, n := utf8.DecodeRune(b[i:]); r != utf8.RuneError || n > 1 {
			out = append(out, b[i:i+n]...)
			i += n
			continue
		}
		i += maximalSubpart(b[i:])
		out = append(out, "\ufffd"...)
	}
	return string(out)
}

// maximalSubpart returns the length of the maximal subpart of the
// ill-formed sequence that b starts with: the lead byte and the
// continuation bytes that a well-formed sequence could have after it
// (Unicode's table 3-7), or 1 for a byte that starts none.
func maximalSubpart(b []byte) int {
	n, lo, hi := 0, byte(0x80), byte(0xbf)
	switch c := b[0]; {
	case c >= 0xc2 && c <= 0xdf:
		n = 2
	case c == 0xe0:
		n, lo = 3, 0xa0
	case c == 0xed:
		n, hi = 3, 0x9f
	case c >= 0xe1 && c <= 0xef:
		n = 3
	case c == 0xf0:
		n, lo = 4, 0x90
	case c == 0xf4:
		n, hi = 4, 0x8f
	case c >= 0xf1 && c <= 0xf3:
		n = 4
	default:
		return 1
	}
	i := 1
	for ; i < n && i < len(b) && b[i] >= lo && b[i] <= hi; i++ {
		lo, hi = 0x80, 0xbf
	}
	return i
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case '0' <= c && c <= '9':
		return c - '0'
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// ParseInt reads s as Python's int() reads a string: optional white space
// around, an optional sign, then decimal digits of any script with single
// underscores between digits. It returns the sign and the value as a
// canonical ASCII decimal (no leading zeros; "0" for zero, never negative
// zero).
func ParseInt(s string) (neg bool, digits string, ok bool) {
	if canonicalDigits(s) {
		return false, s, true // the usual case, without a copy
	}
	s = strings.TrimFunc(s, isSpace)
	if s == "" {
		return false, "", false
	}
	switch s[0] {
	case '+':
		s = s[1:]
	case '-':
		neg, s = true, s[1:]
	}
	b := make([]byte, 0, len(s))
	prevDigit := false
	for _, r := range s {
		if r == '_' {
			if !prevDigit {
				return false, "", false
			}
			prevDigit = false
			continue
		}
		d := digitValue(r)
		if d < 0 {
			return false, "", false
		}
		if len(b) > 0 || d != 0 {
			b = append(b, byte('0'+d))
		}
		prevDigit = true
	}
	if !prevDigit {
		return false, "", false // empty, or ends with '_'
	}
	if len(b) == 0 {
		return false, "0", true
	}
	return neg, string(b), true
}

// canonicalDigits reports whether s is ASCII digits without a leading zero
// (or "0"): what ParseInt would return for it.
func canonicalDigits(s string) bool {
	if s == "" || s[0] == '0' && len(s) > 1 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// isSpace reports whether int() strips r around a number: the Unicode
// white space U+0009-000D, U+0020, U+0085, U+00A0, U+1680, U+2000-200A,
// U+2028, U+2029, U+202F, U+205F, U+3000. Not the ASCII separators
// U+001C-001F: Python's str.isspace accepts them, but int() rejects them.
func isSpace(r rune) bool {
	switch {
	case r >= 0x09 && r <= 0x0d, r == 0x20, r == 0x85, r == 0xa0, r == 0x1680,
		r >= 0x2000 && r <= 0x200a, r == 0x2028, r == 0x2029, r == 0x202f, r == 0x205f, r == 0x3000:
		return true
	}
	return false
}

// digitValue returns the value of a Unicode decimal digit (category Nd),
// or -1. Unicode encodes every such digit in a run of ten, zero first.
func digitValue(r rune) int {
	if r >= '0' && r <= '9' {
		return int(r - '0')
	}
	if r < 0x80 || !unicode.Is(unicode.Nd, r) {
		return -1
	}
	for _, rg := range unicode.Nd.R16 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	for _, rg := range unicode.Nd.R32 {
		if r >= rune(rg.Lo) && r <= rune(rg.Hi) {
			return int(r-rune(rg.Lo)) % 10
		}
	}
	return -1
}
