package listing

import "strconv"

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
	dir, limit, offset, index, ok := SplitPagePath(p)
	if !ok || dir != Dir {
		return 0, 0, false, false
	}
	return limit, offset, index, true
}
