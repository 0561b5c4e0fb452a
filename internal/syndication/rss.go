package syndication

// AppendRSS appends the RSS 2.0 feed of ch and items to dst, as Django's
// Rss201rev2Feed writes it for a Feed whose items have a title, link,
// description, author name and link (no e-mail: dc:creator), publication
// date and categories, and whose guid is the link.
func AppendRSS(dst []byte, ch *Channel, items []Item) []byte {
	dst = append(dst, xmlHead...)
	dst = appendStart(dst, "rss", attr{"version", "2.0"}, attr{"xmlns:atom", "http://www.w3.org/2005/Atom"})
	dst = appendStart(dst, "channel")
	dst = appendElement(dst, "title", ch.Title)
	dst = appendElement(dst, "link", iriToURI(ch.Link))
	dst = appendElement(dst, "description", ch.Description)
	dst = appendElement(dst, "atom:link", "", attr{"href", iriToURI(ch.FeedURL)}, attr{"rel", "self"})
	dst = appendElement(dst, "language", ch.Language)
	dst = appendStart(dst, "lastBuildDate")
	dst = appendRFC2822(dst, Latest(items))
	dst = appendEnd(dst, "lastBuildDate")
	for i := range items {
		it := &items[i]
		link := iriToURI(it.Link)
		dst = appendStart(dst, "item")
		dst = appendElement(dst, "title", it.Title)
		dst = appendElement(dst, "link", link)
		dst = appendElement(dst, "description", it.Description)
		if it.AuthorName != "" {
			dst = appendElement(dst, "dc:creator", it.AuthorName, attr{"xmlns:dc", "http://purl.org/dc/elements/1.1/"})
		}
		dst = appendStart(dst, "pubDate")
		dst = appendRFC2822(dst, it.Published)
		dst = appendEnd(dst, "pubDate")
		dst = appendElement(dst, "guid", it.Link) // the link as given: Django quotes the link, not the guid
		for _, c := range it.Categories {
			dst = appendElement(dst, "category", c)
		}
		dst = appendEnd(dst, "item")
	}
	dst = appendEnd(dst, "channel")
	return appendEnd(dst, "rss")
}
