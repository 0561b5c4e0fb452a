package listing

import (
	"strconv"
	"strings"
)

// Dir is the folder, inside the output folder, that holds every page; the
// listing's URL path is Path.
const Dir = "articles"

// Path is the URL path of the listing.
const Path = "/" + Dir + "/"

// IndexPath is the file of the page for Path with no query: the default
// limit, offset 0, of the main listing.
const IndexPath = Dir + "/index.json"

// A PageKey names one page of a build: the folder of its collection (Dir
// for the main listing, CollectionDir for a filtered one), and its limit
// and offset, or Index for the collection's index page (the default
// limit at offset 0, which a query without limit and offset names).
//
// A key has one file name, Path, and ParsePageKey reads it back: every
// package that writes, lists, checks or serves pages goes through the
// two, and none reads a page path on its own.
type PageKey struct {
	Dir    string
	Limit  int // > 0, unless Index
	Offset int // >= 0, unless Index
	Index  bool
}

// Path returns the file of the page, relative to the output folder:
// dir/limit/offset.json, or dir/index.json for an index page
// (articles/20/40.json, articles/tag/go/index.json).
func (k PageKey) Path() string {
	if k.Index {
		return k.Dir + "/index.json"
	}
	b := make([]byte, 0, len(k.Dir)+24)
	b = append(b, k.Dir...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(k.Limit), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(k.Offset), 10)
	b = append(b, ".json"...)
	return string(b)
}

// PagePathOf is PageKey.Path with the limit and offset given as text:
// the one format of a page's file, for the rules of other platforms,
// where they are placeholders (":offset", "${2}").
func PagePathOf(dir, limit, offset string) string {
	return dir + "/" + limit + "/" + offset + ".json"
}

// String returns the page's path.
func (k PageKey) String() string { return k.Path() }

// ParsePageKey reads a page path as PageKey.Path writes it, for any
// collection: its folder is Dir or a folder inside it, limit and offset
// are canonical decimals (no sign, no leading zero) that fit an int, and
// the limit is not 0. It does not check that the folder is a
// collection's: the manifest says which are. ok is false for any path
// Path never writes.
func ParsePageKey(p string) (k PageKey, ok bool) {
	if !strings.HasPrefix(p, Dir) || len(p) > len(Dir) && p[len(Dir)] != '/' {
		return PageKey{}, false
	}
	if d, found := strings.CutSuffix(p, "/index.json"); found {
		return PageKey{Dir: d, Index: true}, true
	}
	rest, found := strings.CutSuffix(p, ".json")
	i := strings.LastIndexByte(rest, '/')
	if !found || i < 0 {
		return PageKey{}, false
	}
	j := strings.LastIndexByte(rest[:i], '/')
	if j < len(Dir) {
		return PageKey{}, false
	}
	limit, lok := canonicalInt(rest[j+1 : i])
	offset, ook := canonicalInt(rest[i+1:])
	if !lok || !ook || limit == 0 {
		return PageKey{}, false
	}
	return PageKey{Dir: rest[:j], Limit: limit, Offset: offset}, true
}

// canonicalInt reads s as a canonical decimal that fits an int.
func canonicalInt(s string) (int, bool) {
	if !canonicalDigits(s) || len(s) > 19 {
		return 0, false
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}
