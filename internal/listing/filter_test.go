package listing

import (
	"slices"
	"testing"
)

// TestFilters checks each entry of the filter table: a name of its own,
// parameters sorted and among FilterKeys, a kind of its own, fields it
// reads, and values that are exactly its parameters, in their order, never
// empty.
func TestFilters(t *testing.T) {
	fields := Fields{Section: "news", SectionSlug: "politics", Tags: []string{"Go", "", "Go"}, Author: "ivan"}
	names, kinds := map[string]bool{}, map[string]bool{}
	for _, f := range Filters() {
		if names[f.Name] || kinds[f.Kind()] {
			t.Errorf("filter %q: name or kind %q given twice", f.Name, f.Kind())
		}
		names[f.Name], kinds[f.Kind()] = true, true
		if len(f.Params) == 0 || !slices.IsSorted(f.Params) || !slices.Contains(f.Params, f.Name) {
			t.Errorf("filter %q: parameters %q must be sorted and hold its name", f.Name, f.Params)
		}
		for _, p := range f.Params {
			if !slices.Contains(FilterKeys(), p) {
				t.Errorf("filter %q: parameter %q is not in FilterKeys %q", f.Name, p, FilterKeys())
			}
		}
		if f.Reads == 0 || Reads([]string{f.Name}) != f.Reads {
			t.Errorf("filter %q reads no field", f.Name)
		}
		if got, ok := FilterNamed(f.Name); !ok || got.Name != f.Name || FilterKind(f.Name) != f.Kind() {
			t.Errorf("FilterNamed(%q) = %+v, %v", f.Name, got, ok)
		}
		n := 0
		f.Values(&fields, func(values ...Param) {
			n++
			if len(values) != len(f.Params) {
				t.Fatalf("filter %q: %d values for parameters %q", f.Name, len(values), f.Params)
			}
			for i, v := range values {
				if v.Key != f.Params[i] || v.Value == "" {
					t.Errorf("filter %q: value %d is %+v, want a value of %q", f.Name, i, v, f.Params[i])
				}
			}
		})
		if n == 0 {
			t.Errorf("filter %q: an article with every field set is in none of its collections", f.Name)
		}
	}
	if !slices.Equal(FilterNames(), []string{"section", "category", "tag", "author"}) {
		t.Errorf("FilterNames() = %q: a config's filters are kept in this order, and a manifest records them so", FilterNames())
	}
	if _, ok := FilterNamed("year"); ok {
		t.Error("FilterNamed found a kind the table does not have")
	}
}
