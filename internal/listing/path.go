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

// PagePath returns the file of the page (limit, offset) of the collection
// whose pages are in folder dir (Dir for the main listing).
func PagePath(dir string, limit, offset int) string {
	b := make([]byte, 0, len(dir)+24)
	b = append(b, dir...)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(limit), 10)
	b = append(b, '/')
	b = strconv.AppendInt(b, int64(offset), 10)
	b = append(b, ".json"...)
	return string(b)
}

// ParsePagePath reads a page path written by PagePath or IndexPath, inside
// the main listing's folder.
func ParsePagePath(p string) (limit, offset int, index, ok bool) {
	if p == IndexPath {
		return 0, 0, true, true
	}
	rest, found := strings.CutPrefix(p, Dir+"/")
	if !found {
		return 0, 0, false, false
	}
	l, o, found := strings.Cut(strings.TrimSuffix(rest, ".json"), "/")
	if !found || !strings.HasSuffix(rest, ".json") {
		return 0, 0, false, false
	}
	limit, err1 := strconv.Atoi(l)
	offset, err2 := strconv.Atoi(o)
	if err1 != nil || err2 != nil || limit <= 0 || offset < 0 || strconv.Itoa(limit) != l || strconv.Itoa(offset) != o {
		return 0, 0, false, false
	}
	return limit, offset, false, true
}
