package rules

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// netlifyTarget is Netlify: an edge function answers every request as
// feedgen serve does, reading pages from the published build; _redirects
// maps the canonical requests onto the pages on its own, for when the
// edge function does not run (it bypasses on error).
func netlifyTarget() Target {
	return Target{
		Name:     "netlify",
		Files:    []string{"_redirects", netlifyEdgeFunction},
		Run:      "copy _redirects into the published folder and netlify/ into the site's base folder, then netlify deploy",
		Counts:   true,
		Generate: netlifyGenerate,
	}
}

// netlifyEdgeFunction is the edge function's file, where Netlify looks
// for edge functions in a site's base directory.
const netlifyEdgeFunction = "netlify/edge-functions/feedgen.js"

// netlifyAdapter is the edge function's module: every request of the site
// goes to respond, which reads a page by passing a request for its file
// down Netlify's chain (to the published files).
const netlifyAdapter = `
export default async function (request, context) {
    return respond(request, function (page) {
        return context.next(page);
    });
}

export const config = {path: "/*", onError: "bypass"};
`

func netlifyGenerate(s *Site) (map[string][]byte, error) {
	d, err := newSiteData(s, true)
	if err != nil {
		return nil, err
	}
	js, err := script("// feedgen rules netlify: the edge function that answers every request of the site as\n"+
		"// feedgen serve does, its pages read from the published build. It holds the build's counts:\n"+
		"// write it again after each build.\n", d, fetchAdapterJS+netlifyAdapter)
	if err != nil {
		return nil, err
	}
	return map[string][]byte{"_redirects": netlifyRedirects(s), netlifyEdgeFunction: js}, nil
}

// netlifyRedirects returns the _redirects rules of the canonical requests:
// for each collection, limit and offset as links name them. Query
// conditions match the decoded value, the last one of a parameter, in any
// order, and ignore other parameters: so the filtered collections come
// first (two filters before one), the main listing last, and each
// collection's rule without limit or offset after its others. A
// collection whose value a rule cannot hold (unruly) has no rules: the
// edge function answers it.
func netlifyRedirects(s *Site) []byte {
	var b strings.Builder
	b.WriteString(`# feedgen rules netlify: the canonical requests of the listing, mapped onto
# the pages of the build (copy this file into the published folder). The
# edge function netlify/edge-functions/feedgen.js answers every request
# before these rules; they answer on their own when it does not run, and
# then only the canonical requests exactly. Written again after each build:
# it names the build's collections.
`)
	colls := slices.Clone(s.Collections)
	slices.SortStableFunc(colls, func(a, b manifest.Collection) int { return len(b.Params) - len(a.Params) })
	p := s.Paging
	for _, c := range colls {
		if len(c.Params) == 0 && c.Dir != listing.Dir || slices.ContainsFunc(c.Params, unruly) {
			continue
		}
		var cond []string
		for _, prm := range c.Params {
			cond = append(cond, prm.Key+"="+prm.Value)
		}
		rule := func(to string, conds ...string) {
			parts := append([]string{listing.Path}, cond...)
			parts = append(parts, conds...)
			parts = append(parts, "/"+to, "200")
			b.WriteString(strings.Join(parts, "  ") + "\n")
		}
		b.WriteByte('\n')
		for _, l := range p.Limits {
			ls := strconv.Itoa(l)
			rule(c.Dir+"/"+ls+"/:offset.json", "limit="+ls, "offset=:offset")
			rule(c.Dir+"/"+ls+"/0.json", "limit="+ls)
		}
		ds := strconv.Itoa(p.DefaultLimit)
		rule(c.Dir+"/"+ds+"/:offset.json", "offset=:offset")
		rule(c.Dir + "/" + ds + "/0.json")
	}
	return []byte(b.String())
}

// unruly reports whether the value of p cannot be a condition of a rule
// of _redirects: white space or control characters, which end or break
// the rule; '%' and '+', which Netlify reads otherwise in a rule and in a
// request; '=' and '&'; a leading ':', which makes it a placeholder.
func unruly(p listing.Param) bool {
	return strings.HasPrefix(p.Value, ":") || strings.ContainsAny(p.Value, "%+=&") ||
		strings.ContainsFunc(p.Value, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}
