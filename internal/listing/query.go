package listing

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/config"
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
func ParseQuery(raw string, p config.Pagination, filters []string) Query {
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
// decoded. Malformed escapes are kept as they are; invalid UTF-8 becomes
// U+FFFD.
func unescape(s string) string {
	if !strings.ContainsAny(s, "%+") {
		if utf8.ValidString(s) {
			return s
		}
		return strings.ToValidUTF8(s, "\ufffd")
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
	return strings.ToValidUTF8(string(b), "\ufffd")
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
