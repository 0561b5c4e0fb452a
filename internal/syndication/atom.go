package syndication

// AppendAtom appends the Atom 1.0 feed of ch and items to dst, as
// Django's Atom1Feed writes it for the Feed AppendRSS describes: the
// feed's id is its link and an entry's its guid (the link, not passed
// through iri_to_uri, as the links are), an item's description a summary
// of type html; the channel's description is not written (Atom has a
// subtitle, which the Feed does not set).
func AppendAtom(dst []byte, ch *Channel, items []Item) []byte {
	link := iriToURI(ch.Link)
	dst = append(dst, xmlHead...)
	dst = appendStart(dst, "feed", attr{"xml:lang", ch.Language}, attr{"xmlns", "http://www.w3.org/2005/Atom"})
	dst = appendElement(dst, "title", ch.Title)
	dst = appendElement(dst, "link", "", attr{"href", link}, attr{"rel", "alternate"})
	dst = appendElement(dst, "link", "", attr{"href", iriToURI(ch.FeedURL)}, attr{"rel", "self"})
	dst = appendElement(dst, "id", ch.Link) // the link as given: Django's feed_guid or link
	dst = appendStart(dst, "updated")
	dst = appendRFC3339(dst, Latest(items))
	dst = appendEnd(dst, "updated")
	for i := range items {
		it := &items[i]
		link := iriToURI(it.Link)
		dst = appendStart(dst, "entry")
		dst = appendElement(dst, "title", it.Title)
		dst = appendElement(dst, "link", "", attr{"href", link}, attr{"rel", "alternate"})
		dst = appendStart(dst, "published")
		dst = appendRFC3339(dst, it.Published)
		dst = appendEnd(dst, "published")
		dst = appendStart(dst, "author")
		dst = appendElement(dst, "name", it.AuthorName)
		dst = appendElement(dst, "uri", iriToURI(it.AuthorLink))
		dst = appendEnd(dst, "author")
		dst = appendElement(dst, "id", it.Link) // the guid: the link as given
		dst = appendElement(dst, "summary", it.Description, attr{"type", "html"})
		for _, c := range it.Categories {
			dst = appendElement(dst, "category", "", attr{"term", c})
		}
		dst = appendEnd(dst, "entry")
	}
	return appendEnd(dst, "feed")
}
