package layout

import "github.com/feedgen/feedgen/internal/listing"

// The names of the layouts, as config.yaml's pagination.layout and a
// manifest's pagination.layout write them.
const (
	PagesName  = "pages"  // a file per pre-rendered page
	ChunksName = "chunks" // articles in content-addressed chunks, pages assembled per request
)

// A Layout is one way a build stores its listing: which kinds of file it
// writes under listing.Dir, and what it answers. Layouts returns every
// one; Of the one of a build. Compare two by Name.
type Layout struct {
	// Name is the layout's pagination.layout.
	Name string
	// Kinds are the kinds of file a build of the layout writes under
	// listing.Dir.
	Kinds []Kind
	// Assembled says that a page is put together per request from the
	// chunks the indexes name (docs/contract.md §12), by code: feedgen
	// serve, or an edge function. A server that only maps a request onto
	// a file cannot answer it. The counts of its collections are in its
	// indexes, not in anything a server's config holds.
	Assembled bool
	// EveryPage says that every limit 1..max_limit is answered at every
	// offset: pagination.limits and pagination.offsets name no file (so
	// max_limit need not be a limit, and offsets: aligned is refused).
	EveryPage bool
}

// Pages is the layout of a file per pre-rendered page.
func Pages() Layout { return Layout{Name: PagesName, Kinds: []Kind{Page, Feed}} }

// Chunks is the layout of chunks and indexes, pages put together per
// request.
func Chunks() Layout {
	return Layout{Name: ChunksName, Kinds: []Kind{Index, Leaf, Chunk, Feed}, Assembled: true, EveryPage: true}
}

// Layouts returns every layout, the default (pages) first.
func Layouts() []Layout { return []Layout{Pages(), Chunks()} }

// Named returns the layout of that name, "" meaning pages; ok is false
// for a name no layout has.
func Named(name string) (l Layout, ok bool) {
	if name == "" {
		return Pages(), true
	}
	for _, l := range Layouts() {
		if l.Name == name {
			return l, true
		}
	}
	return Layout{Name: name}, false
}

// Of returns the layout of a build of pagination p; for a layout no
// layout has (a newer feedgen's, refused by config and manifest checks),
// one with that name that writes and answers nothing.
func Of(p listing.Pagination) Layout {
	l, _ := Named(p.Layout)
	return l
}

// Field returns what pagination.layout holds for l: "" for pages (so that
// the manifests of the pages layout stay as they were), its name for the
// others.
func (l Layout) Field() string {
	if l.Name == PagesName {
		return ""
	}
	return l.Name
}

// Has reports whether a build of the layout writes files of kind k (the
// manifest: every build).
func (l Layout) Has(k Kind) bool {
	if k == Manifest {
		return true
	}
	for _, h := range l.Kinds {
		if h == k {
			return true
		}
	}
	return false
}

// Answers reports whether a query for limit n (1..MaxLimit, as
// listing.ParseQuery gives it) of a build of pagination p has pages:
// every such limit in a layout of EveryPage, else the pre-rendered ones.
func (l Layout) Answers(p listing.Pagination, n int) bool {
	if l.EveryPage {
		return n >= 1 && n <= p.MaxLimit
	}
	return l.Has(Page) && p.HasLimit(n)
}

// CheckFile says what is wrong with a file at p whose SHA-256 is sum in a
// manifest of the layout, or "": it must be of a kind the layout writes,
// and one named by its digest must have that name.
func (l Layout) CheckFile(p string, sum [32]byte) string {
	k := Classify(p)
	if !l.Has(k) || k == Manifest {
		return "not a file of the " + l.Name + " layout (" + l.kindList() + ")"
	}
	if want, ok := k.NameOf(sum); ok && want != p {
		return "its sha256 is not the one its name gives"
	}
	return ""
}

// kindList names the kinds of l, for messages: "page", "chunk index or chunk".
func (l Layout) kindList() string {
	s := ""
	for i, k := range l.Kinds {
		switch {
		case i == 0:
		case i == len(l.Kinds)-1:
			s += " or "
		default:
			s += ", "
		}
		s += k.String()
	}
	return s
}
