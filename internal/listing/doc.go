// Package listing is the HTTP contract of the article listing
// /articles/?limit=&offset=, as the original dynamic service defined it,
// with nothing of the content behind it: which pages exist (Pagination),
// the kinds of filtered collection (the table Filters), how a query is
// read (ParseQuery), which page a query names and where that page's file
// is (PageKey, its Path and ParsePageKey), the folders of the filtered
// collections (CollectionDir, EncodeValue), the links and the head of a
// page (AppendHead), the pages past the end (AppendEmptyPage), the JSON
// string encoding (AppendString), and the fixed answers and headers
// (NotFoundBody, OptionsBody, AppendMethodNotAllowed, Allow, Vary,
// ContentType).
//
// Everything that writes or answers the listing reads it here: the feed
// that renders pages, the build that writes them, the server, and the
// generators of other platforms' rules.
//
// # Folders of filtered collections
//
// The pages of a filtered collection are in articles/, then each filter's
// name and the encoded value, filters in alphabetical order:
// ?tag=Go is articles/tag/_47o/, ?section=news&category=politics is
// articles/category/politics/section/news/. The encoding of a value keeps
// each byte that is a-z, 0-9 or '-', and writes every other byte of its
// UTF-8 (capitals, '_', '.', space, '%', non-ASCII, ...) as '_' and two
// lowercase hex digits: Go is _47o, Ёжик is _d0_81_d0_b6_d0_b8_d0_ba.
// A name that would be a Windows device name (con, prn, aux, nul, com0-9,
// lpt0-9) has its last letter or digit written so too: con is co_6e. A
// name that would be longer than 200 bytes is _h and the lowercase hex
// SHA-256 of the value instead; the manifest lists the values of every
// collection. Names are only a-z, 0-9, '-' and '_': safe in URL paths,
// object storage keys and file names on every system, never . or .., and
// distinct for distinct values also where case is not (Go and go are two
// tags).
package listing
