package listing

import (
	"slices"
	"strings"
)

// A Filter is one kind of filtered collection: a name for config.yaml's
// filters: and the manifest, the query parameters that select one of its
// collections, and how an article's values for them are found. filters
// below is the one table of them: the config checks names against it, the
// feed groups articles by it, the content keeps what it reads, the
// manifest and the server know its parameters, and the JavaScript of
// feedgen rules is given its parameters. Adding a kind is one entry (and a
// field of Fields, when it reads a value of an article that Fields does
// not hold yet).
type Filter struct {
	// Name is the filter's name in config.yaml's filters: and in a
	// build's manifest.
	Name string
	// Params are the query parameters that select one of its
	// collections, sorted: the filter's own, and those of the collection
	// it is within (a category is within its section).
	Params []string
	// Reads are the fields of an article the filter reads, which an
	// article keeps once it is encoded (content.Article.Slim).
	Reads Field
	// Values calls add once for each collection of the filter that an
	// article with fields f is in, with the values of Params in their
	// order. A value is never empty: an empty value is no filter.
	Values func(f *Fields, add func(values ...Param))
}

// Fields are the values of an article that filters select it by.
type Fields struct {
	Section     string
	SectionSlug string
	Tags        []string
	Author      string // the key of the config's authors; "" for an inline author
}

// A Field is a set of Fields, one bit each.
type Field uint8

// The fields of Fields.
const (
	FieldSection Field = 1 << iota
	FieldSectionSlug
	FieldTags
	FieldAuthor
)

// filters is the table of filter kinds, in the order a config's filters
// are kept in (Config.Filters, and the manifest's).
var filters = [...]Filter{
	{
		Name: "section", Params: []string{"section"}, Reads: FieldSection,
		Values: func(f *Fields, add func(...Param)) {
			add(Param{Key: "section", Value: f.Section})
		},
	},
	{
		Name: "category", Params: []string{"category", "section"}, Reads: FieldSection | FieldSectionSlug,
		Values: func(f *Fields, add func(...Param)) {
			add(Param{Key: "category", Value: f.SectionSlug}, Param{Key: "section", Value: f.Section})
		},
	},
	{
		Name: "tag", Params: []string{"tag"}, Reads: FieldTags,
		Values: func(f *Fields, add func(...Param)) {
			for _, t := range f.Tags {
				if t != "" {
					add(Param{Key: "tag", Value: t})
				}
			}
		},
	},
	{
		Name: "author", Params: []string{"author"}, Reads: FieldAuthor,
		Values: func(f *Fields, add func(...Param)) {
			if f.Author != "" {
				add(Param{Key: "author", Value: f.Author})
			}
		},
	},
}

// Filters returns the filter kinds, in the order of the table: a copy,
// which the caller may change.
func Filters() []Filter {
	fs := slices.Clone(filters[:])
	for i := range fs {
		fs[i].Params = slices.Clone(fs[i].Params)
	}
	return fs
}

// FilterNames returns the names of the filter kinds, in the order of the
// table.
func FilterNames() []string {
	names := make([]string, len(filters))
	for i, f := range filters {
		names[i] = f.Name
	}
	return names
}

// FilterNamed returns the filter kind called name.
func FilterNamed(name string) (Filter, bool) {
	for _, f := range filters {
		if f.Name == name {
			f.Params = slices.Clone(f.Params)
			return f, true
		}
	}
	return Filter{}, false
}

// FilterKeys returns the query parameters that select a filtered
// collection, sorted: the parameters a reader of a build gives
// ParseQuery. A query with any of them asks for a filtered collection, and
// one that no build pre-renders is not found, never the main listing.
func FilterKeys() []string {
	var keys []string
	for _, f := range filters {
		for _, p := range f.Params {
			if !slices.Contains(keys, p) {
				keys = append(keys, p)
			}
		}
	}
	slices.Sort(keys)
	return keys
}

// Reads returns the fields of an article that the filters named read.
func Reads(names []string) Field {
	var r Field
	for _, n := range names {
		if f, ok := FilterNamed(n); ok {
			r |= f.Reads
		}
	}
	return r
}

// Kind returns the parameter keys of params (sorted by key) joined by
// "&": the kind of collection they select, "" for the main listing. The
// kinds a build pre-renders are those of its filters: Filter.Kind.
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

// Kind returns the kind of the filter's collections (see Kind).
func (f Filter) Kind() string { return strings.Join(f.Params, "&") }

// FilterKind returns the Kind of the collections of the filter called
// name; "" when there is none.
func FilterKind(name string) string {
	f, _ := FilterNamed(name)
	return f.Kind()
}

// FilterParams returns the query parameters, sorted, that select the
// collections of the filter called name.
func FilterParams(name string) []string {
	f, _ := FilterNamed(name)
	return slices.Clone(f.Params)
}
