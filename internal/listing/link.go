package listing

import (
	"net/url"
	"slices"
	"strconv"
	"strings"
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
		dst = AppendLink(dst, baseURL, params, limit, strconv.FormatInt(off+int64(limit), 10))
	}
	dst = append(dst, `,"previous":`...)
	switch {
	case small && off <= 0:
		dst = append(dst, "null"...)
	case small && off-int64(limit) <= 0:
		dst = AppendLink(dst, baseURL, params, limit, "")
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
// offset) of the collection filtered by params; an empty offset is left
// out. Parameters are in sorted key order and encoded as an HTML form
// encodes them.
func AppendLink(dst []byte, baseURL string, params []Param, limit int, offset string) []byte {
	u := make([]byte, 0, len(baseURL)+64)
	u = append(u, baseURL...)
	u = append(u, Path+"?"...)
	all := make([]Param, 0, len(params)+2)
	all = append(all, params...)
	all = append(all, Param{"limit", strconv.Itoa(limit)})
	if offset != "" {
		all = append(all, Param{"offset", offset})
	}
	slices.SortStableFunc(all, func(a, b Param) int { return strings.Compare(a.Key, b.Key) })
	for i, p := range all {
		if i > 0 {
			u = append(u, '&')
		}
		u = append(u, url.QueryEscape(p.Key)...)
		u = append(u, '=')
		u = append(u, url.QueryEscape(p.Value)...)
	}
	return AppendString(dst, string(u))
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
