package listing

import (
	"iter"
	"slices"
)

// Offsets modes: which offsets of each limit are pre-rendered.
const (
	OffsetsAll     = "all"     // every offset 0..count-1
	OffsetsAligned = "aligned" // multiples of the limit only
)

// Pagination is which pages of each collection exist: the limit a query
// without one gets, the largest limit a query may ask for, the limits
// pre-rendered, and their offsets. config.yaml's pagination: sets it; a
// build's manifest records it, in this JSON.
type Pagination struct {
	DefaultLimit int    `json:"default_limit"`
	MaxLimit     int    `json:"max_limit"`
	Limits       []int  `json:"limits"`  // ascending, unique
	Offsets      string `json:"offsets"` // OffsetsAll or OffsetsAligned
	// Layout names the layout of the build (package layout): "" for
	// the pages layout, so that its manifests stay as they were.
	Layout string `json:"layout,omitempty"`
}

// HasLimit reports whether limit l is pre-rendered.
func (p Pagination) HasLimit(l int) bool {
	_, ok := slices.BinarySearch(p.Limits, l)
	return ok
}

// Pages returns how many pages limit l has in a collection of count
// articles: one at least (empty when count is 0), then one per offset,
// or with OffsetsAligned one per multiple of l. It does not overflow.
func (p Pagination) Pages(count, l int) int {
	switch {
	case count <= 1:
		return 1
	case p.Offsets == OffsetsAligned:
		return (count-1)/l + 1 // (count+l-1)/l overflows for l near MaxInt
	}
	return count
}

// Keys returns the keys of the pages of a collection of count articles
// in folder dir, in the order a build writes them: for the main listing
// (main), its index page first, then each limit's offsets ascending. A
// collection has at least the page at offset 0 of each limit, empty when
// it holds no article.
func (p Pagination) Keys(dir string, count int, main bool) iter.Seq[PageKey] {
	return func(yield func(PageKey) bool) {
		if main && !yield(PageKey{Dir: dir, Index: true}) {
			return
		}
		for _, l := range p.Limits {
			step := 1
			if p.Offsets == OffsetsAligned {
				step = l
			}
			for off := 0; ; off += step {
				if !yield(PageKey{Dir: dir, Limit: l, Offset: off}) {
					return
				}
				if off >= count-step {
					break // the last page; off+step cannot overflow below
				}
			}
		}
	}
}
