// Package listing is the HTTP contract of the article listing
// /articles/?limit=&offset=, as the original dynamic service defined it,
// with nothing of the content behind it: how a query is read (ParseQuery),
// which page a query names and where that page's file is (Query, PagePath,
// ParsePagePath), the links and the head of a page (AppendHead), the pages
// past the end (AppendEmptyPage), the JSON string encoding (AppendString),
// and the fixed answers and headers (NotFoundBody, OptionsBody,
// AppendMethodNotAllowed, Allow, Vary, ContentType).
//
// Everything that writes or answers the listing reads it here: the feed
// that renders pages, the build that writes them, the server, and the
// generators of other platforms' rules.
package listing
