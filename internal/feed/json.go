package feed

import (
	"strconv"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/content"
)

const hex = "0123456789abcdef"

// AppendString appends s as a JSON string, byte for byte as the original
// service wrote it: non-ASCII raw except U+2028 and U+2029; '"' and '\\'
// escaped; \n \r \t \b \f short; other controls as \u00xx; '<', '>', '&'
// and '/' as they are. Invalid UTF-8 becomes U+FFFD.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '"', '\\':
				dst = append(dst, '\\', c)
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xf])
			}
			i++
			start = i
			continue
		}
		if c >= 0xc2 && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80 {
			i += 2 // a two-byte character (Cyrillic, Greek, ...): as it is
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, "\ufffd"...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hex[r&0xf])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// AppendArticle appends the JSON object of one article, keys in the
// original's order.
func AppendArticle(dst []byte, a *content.Article) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, a.ID, 10)
	dst = append(dst, `,"title":`...)
	dst = AppendString(dst, a.Title)
	dst = append(dst, `,"url":`...)
	dst = AppendString(dst, a.URL)
	dst = append(dst, `,"category":`...)
	dst = AppendString(dst, a.Category)
	dst = append(dst, `,"category_url":`...)
	dst = AppendString(dst, a.CategoryURL)
	dst = append(dst, `,"announcement":`...)
	dst = AppendString(dst, a.Announcement)
	dst = append(dst, `,"tags":`...)
	dst = appendTags(dst, a.Tags)
	dst = append(dst, `,"pageviews":`...)
	dst = strconv.AppendInt(dst, a.Pageviews, 10)
	dst = append(dst, `,"comments_count":`...)
	dst = strconv.AppendInt(dst, a.Comments, 10)
	dst = append(dst, `,"img_big":`...)
	dst = AppendString(dst, a.ImgBig)
	dst = append(dst, `,"img_big_2x":`...)
	dst = AppendString(dst, a.ImgBig2x)
	dst = append(dst, `,"img_small":`...)
	dst = AppendString(dst, a.ImgSmall)
	dst = append(dst, `,"img_small_2x":`...)
	dst = AppendString(dst, a.ImgSmall2x)
	dst = append(dst, `,"author_name":`...)
	dst = AppendString(dst, a.AuthorName)
	dst = append(dst, `,"author_url":`...)
	dst = AppendString(dst, a.AuthorURL)
	dst = append(dst, `,"published":"`...)
	dst = a.Published.AppendFormat(dst, content.PublishedLayout)
	return append(dst, `"}`...)
}

// appendTags writes the tags joined by ", " as one JSON string.
func appendTags(dst []byte, tags []string) []byte {
	switch len(tags) {
	case 0:
		return append(dst, `""`...)
	case 1:
		return AppendString(dst, tags[0])
	}
	n := 0
	for _, t := range tags {
		n += len(t) + 2
	}
	b := make([]byte, 0, n)
	for i, t := range tags {
		if i > 0 {
			b = append(b, ", "...)
		}
		b = append(b, t...)
	}
	return AppendString(dst, string(b))
}
