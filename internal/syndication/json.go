package syndication

import "github.com/feedgen/feedgen/internal/listing"

// JSONFeedVersion is the version URL a JSON Feed starts with.
const JSONFeedVersion = "https://jsonfeed.org/version/1.1"

// AppendJSON appends the JSON Feed 1.1 of ch and items to dst, serialized
// as the listing's JSON is (no spaces, UTF-8 as it is, the same escapes:
// listing.AppendString), keys in SPEC §13's order; an item's image and
// tags only when it has them.
func AppendJSON(dst []byte, ch *Channel, items []Item) []byte {
	dst = append(dst, `{"version":`...)
	dst = listing.AppendString(dst, JSONFeedVersion)
	dst = append(dst, `,"title":`...)
	dst = listing.AppendString(dst, ch.Title)
	dst = append(dst, `,"home_page_url":`...)
	dst = listing.AppendString(dst, ch.Link)
	dst = append(dst, `,"feed_url":`...)
	dst = listing.AppendString(dst, ch.FeedURL)
	dst = append(dst, `,"description":`...)
	dst = listing.AppendString(dst, ch.Description)
	dst = append(dst, `,"language":`...)
	dst = listing.AppendString(dst, ch.Language)
	dst = append(dst, `,"items":[`...)
	for i := range items {
		it := &items[i]
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"id":`...)
		dst = listing.AppendString(dst, it.Link)
		dst = append(dst, `,"url":`...)
		dst = listing.AppendString(dst, it.Link)
		dst = append(dst, `,"title":`...)
		dst = listing.AppendString(dst, it.Title)
		dst = append(dst, `,"content_text":`...)
		dst = listing.AppendString(dst, it.Description)
		if it.Image != "" {
			dst = append(dst, `,"image":`...)
			dst = listing.AppendString(dst, it.Image)
		}
		dst = append(dst, `,"date_published":"`...)
		dst = appendRFC3339(dst, it.Published)
		dst = append(dst, `","authors":[{"name":`...)
		dst = listing.AppendString(dst, it.AuthorName)
		dst = append(dst, `,"url":`...)
		dst = listing.AppendString(dst, it.AuthorLink)
		dst = append(dst, `}]`...)
		if len(it.Categories) > 0 {
			dst = append(dst, `,"tags":[`...)
			for j, c := range it.Categories {
				if j > 0 {
					dst = append(dst, ',')
				}
				dst = listing.AppendString(dst, c)
			}
			dst = append(dst, ']')
		}
		dst = append(dst, '}')
	}
	return append(dst, "]}"...)
}
