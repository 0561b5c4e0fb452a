// Package syndication writes the reader feeds of a collection of the
// listing (SPEC §13): RSS 2.0 and Atom 1.0 byte for byte as Django 3.2's
// syndication framework writes them (django.utils.feedgenerator's
// Rss201rev2Feed and Atom1Feed, through its SimplerXMLGenerator), and
// JSON Feed 1.1 serialized as the listing's JSON.
//
// It knows nothing of articles or collections: a feed is a Channel and
// its Items, and each format is an entry of Formats (its name in
// config.yaml, its file, its Content-Type, its writer), so that a new
// format is one more entry.
package syndication
