package listing

import (
	"strconv"
)

// Param is one query parameter that selects a collection: a filter, such
// as tag=Go. The main listing has none.
type Param struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// AppendHead appends the head of a page of a collection of count articles
// (filtered by params, sorted by key) for (limit, offset), up to the
// opening bracket of its results: {"count":C,"next":N,"previous":P,"results":[
//
// next is null when offset+limit >= count; previous is null at offset 0,
// the link without offset when offset-limit <= 0, else the link to
// offset-limit. offset is a canonical decimal of any size (Query.Offset).
func AppendHead(dst []byte, baseURL string, params []Param, count, limit int, offset string) []byte {
	dst = append(dst, `{"count":`...)
	dst = strconv.AppendInt(dst, int64(count), 10)
	dst = append(dst, `,"next":`...)
	off, small := smallInt(offset)
	if !small || off+int64(limit) >= int64(count) {
		dst = append(dst, "null"...)
	} else {
		var nb [20]byte
		dst = AppendLink(dst, baseURL, params, limit, string(strconv.AppendInt(nb[:0], off+int64(limit), 10)))
	}
	dst = append(dst, `,"previous":`...)
	switch {
	case small && off <= 0:
		dst = append(dst, "null"...)
	case small && off-int64(limit) <= 0:
		dst = AppendLink(dst, baseURL, params, limit, "")
	case small:
		var nb [20]byte
		dst = AppendLink(dst, baseURL, params, limit, string(strconv.AppendInt(nb[:0], off-int64(limit), 10)))
	default:
		dst = AppendLink(dst, baseURL, params, limit, subtract(offset, limit))
	}
	return append(dst, `,"results":[`...)
}

// AppendEmptyPage appends the page the original service gave for an offset
// at or past the end of a collection of count articles: no results, no
// next link, and the previous link by the rules of AppendHead. offset is a
// canonical decimal of any size.
func AppendEmptyPage(dst []byte, baseURL string, params []Param, count, limit int, offset string) []byte {
	dst = AppendHead(dst, baseURL, params, count, limit, offset)
	return append(dst, "]}"...)
}

// AppendLink appends the JSON string of the link to the page (limit,
// offset) of the collection filtered by params (sorted by key); an empty
// offset is left out. Parameters are in sorted key order and encoded as
// an HTML form encodes them (url.QueryEscape). It allocates nothing: the
// server writes two links for every page it puts together.
func AppendLink(dst []byte, baseURL string, params []Param, limit int, offset string) []byte {
	dst = AppendString(dst, baseURL)
	dst = append(dst[:len(dst)-1], Path+"?"...) // the link goes on inside the string
	first := true
	sep := func() {
		if !first {
			dst = append(dst, '&')
		}
		first = false
	}
	limitDone, offsetDone := false, offset == ""
	for _, p := range params {
		if !limitDone && p.Key > "limit" {
			sep()
			dst = append(dst, "limit="...)
			dst = strconv.AppendInt(dst, int64(limit), 10)
			limitDone = true
		}
		if !offsetDone && p.Key > "offset" {
			sep()
			dst = append(append(dst, "offset="...), offset...)
			offsetDone = true
		}
		sep()
		dst = appendQueryEscape(dst, p.Key)
		dst = append(dst, '=')
		dst = appendQueryEscape(dst, p.Value)
	}
	if !limitDone {
		sep()
		dst = append(dst, "limit="...)
		dst = strconv.AppendInt(dst, int64(limit), 10)
	}
	if !offsetDone {
		sep()
		dst = append(append(dst, "offset="...), offset...) // digits: nothing to escape
	}
	return append(dst, '"')
}

// appendQueryEscape appends s escaped as url.QueryEscape escapes it:
// letters, digits and -_.~ as they are, a space as '+', every other byte
// as '%' and two uppercase hex digits. The result needs no escaping in a
// JSON string.
func appendQueryEscape(dst []byte, s string) []byte {
	const upper = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_', c == '.', c == '~':
			dst = append(dst, c)
		case c == ' ':
			dst = append(dst, '+')
		default:
			dst = append(dst, '%', upper[c>>4], upper[c&15])
		}
	}
	return dst
}

// smallInt parses a non-negative decimal that fits in 62 bits.
func smallInt(s string) (int64, bool) {
	if len(s) > 18 {
		return 0, false
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// subtract returns the decimal s - n for a decimal s of any size greater than n.
func subtract(s string, n int) string {
	if v, ok := smallInt(s); ok {
		return strconv.FormatInt(v-int64(n), 10)
	}
	d := []byte(s)
	borrow := n
	for i := len(d) - 1; i >= 0 && borrow > 0; i-- {
		v := int(d[i]-'0') - borrow%10
		borrow /= 10
		if v < 0 {
			v += 10
			borrow++
		}
		d[i] = byte('0' + v)
	}
	i := 0
	for i < len(d)-1 && d[i] == '0' {
		i++
	}
	return string(d[i:])
}

// FeedURL returns the absolute URL of the feed file of the collection
// filtered by params (sorted by key): {baseURL}/articles/{file}, then the
// parameters as AppendLink encodes them (SPEC §13).
func FeedURL(baseURL, file string, params []Param) string {
	b := make([]byte, 0, len(baseURL)+len(Path)+len(file)+32)
	b = append(append(append(b, baseURL...), Path...), file...)
	for i, p := range params {
		if i == 0 {
			b = append(b, '?')
		} else {
			b = append(b, '&')
		}
		b = appendQueryEscape(b, p.Key)
		b = append(b, '=')
		b = appendQueryEscape(b, p.Value)
	}
	return string(b)
}
