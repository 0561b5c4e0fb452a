package feed

import (
	"strconv"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// AppendArticle appends the JSON object of one article, keys in the
// original's order. a must not have been slimmed (content.Article.Slim).
func AppendArticle(dst []byte, a *content.Article) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, a.ID, 10)
	dst = append(dst, `,"title":`...)
	dst = listing.AppendString(dst, a.Title)
	dst = append(dst, `,"url":`...)
	dst = listing.AppendString(dst, a.URL)
	dst = append(dst, `,"category":`...)
	dst = listing.AppendString(dst, a.Category)
	dst = append(dst, `,"category_url":`...)
	dst = listing.AppendString(dst, a.CategoryURL)
	dst = append(dst, `,"announcement":`...)
	dst = listing.AppendString(dst, a.Announcement)
	dst = append(dst, `,"tags":`...)
	dst = appendTags(dst, a.Tags)
	dst = append(dst, `,"pageviews":`...)
	dst = strconv.AppendInt(dst, a.Pageviews, 10)
	dst = append(dst, `,"comments_count":`...)
	dst = strconv.AppendInt(dst, a.Comments, 10)
	dst = append(dst, `,"img_big":`...)
	dst = listing.AppendString(dst, a.ImgBig)
	dst = append(dst, `,"img_big_2x":`...)
	dst = listing.AppendString(dst, a.ImgBig2x)
	dst = append(dst, `,"img_small":`...)
	dst = listing.AppendString(dst, a.ImgSmall)
	dst = append(dst, `,"img_small_2x":`...)
	dst = listing.AppendString(dst, a.ImgSmall2x)
	dst = append(dst, `,"author_name":`...)
	dst = listing.AppendString(dst, a.AuthorName)
	dst = append(dst, `,"author_url":`...)
	dst = listing.AppendString(dst, a.AuthorURL)
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
		return listing.AppendString(dst, tags[0])
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
	return listing.AppendString(dst, string(b))
}
