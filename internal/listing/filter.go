package listing

import (
	"strings"

	"github.com/feedgen/feedgen/internal/config"
)

// FilterKeys returns the query parameters that select a filtered
// collection (SPEC §7), sorted: the parameters a reader of a build gives
// ParseQuery. A query with any of them asks for a filtered collection, and
// one that no build pre-renders is not found, never the main listing.
func FilterKeys() []string { return []string{"author", "category", "section", "tag"} }

// FilterParams returns the query parameters, sorted, that select the
// collections of the filter named in config: the filter's own parameter,
// and section for a category (a category is within its section).
func FilterParams(filter string) []string {
	if filter == config.FilterCategory {
		return []string{config.FilterCategory, config.FilterSection}
	}
	return []string{filter}
}

// Kind returns the parameter keys of params (sorted by key) joined by
// "&": the kind of collection they select, "" for the main listing. The
// kinds a build pre-renders are those of its filters' FilterParams.
func Kind(params []Param) string {
	switch len(params) {
	case 0:
		return ""
	case 1:
		return params[0].Key
	}
	keys := make([]string, len(params))
	for i, p := range params {
		keys[i] = p.Key
	}
	return strings.Join(keys, "&")
}

// FilterKind returns the Kind of the collections of the filter named in
// config.
func FilterKind(filter string) string { return strings.Join(FilterParams(filter), "&") }
