package rules

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
)

// netlifyTarget is Netlify: an edge function answers every request as
// feedgen serve does, reading pages from the published build; _redirects
// maps the canonical requests onto the pages on its own, for when the
// edge function does not run (it bypasses on error).
func netlifyTarget() Target {
	return Target{
		Name:     "netlify",
		Files:    []string{"_redirects", netlifyNotFound, netlifyEdgeFunction},
		Run:      "copy _redirects and " + netlifyNotFound + " into the published folder and netlify/ into the site's base folder, then netlify deploy",
		Counts:   true,
		Layouts:  []string{layout.PagesName, layout.ChunksName},
		Generate: netlifyGenerate,
		Commands: func(string, bool) Commands {
			return Commands{Then: "deploy them with the build", Reload: "netlify deploy"}
		},
	}
}

// netlifyEdgeFunction is the edge function's file, where Netlify looks
// for edge functions in a site's base directory.
const netlifyEdgeFunction = "netlify/edge-functions/feedgen.js"

// netlifyNotFound is the file of the JSON 404 that _redirects answers
// with what its rules cannot answer exactly.
const netlifyNotFound = "feedgen-404.json"

// netlifyAdapter is the edge function's module: every request of the site
// goes to respond, which reads a page by passing a request for its file
// down Netlify's chain (to the published files).
const netlifyAdapter = `
export default async function (request, context) {
    var next = function (r) {
        return context.next(r);
    };
    return respond(request, next, fetchStore(request.url, next));
}

export const config = {path: "/*", onError: "bypass"};
`

func netlifyGenerate(s *Site) (*Output, error) {
	d, err := newSiteData(s, true)
	if err != nil {
		return nil, err
	}
	header := "// feedgen rules netlify: the edge function that answers every request of the site as\n" +
		"// feedgen serve does, its pages read from the published build. It holds the build's counts:\n" +
		"// write it again after each build.\n"
	if d.Chunked == 1 {
		header = "// feedgen rules netlify: the edge function that answers every request of the site as\n" +
			"// feedgen serve does, putting its pages together from each collection's index and chunks,\n" +
			"// read from the published build. A build does not make it stale: write it again when\n" +
			"// config.yaml's base_url, pagination, filters or feeds change.\n"
	}
	js, err := script(header, d, fetchAdapterJS+netlifyAdapter)
	if err != nil {
		return nil, err
	}
	return &Output{Files: map[string][]byte{"_redirects": netlifyRedirects(s), netlifyNotFound: []byte(listing.NotFoundBody), netlifyEdgeFunction: js}}, nil
}

// netlifyRedirects returns the _redirects rules of the canonical requests:
// for each collection, limit and offset as links name them. Query
// conditions match the decoded value, the last one of a parameter, in any
// order, and ignore other parameters: so the filtered collections come
// first (two filters before one), the main listing last, and each
// collection's rule without limit or offset after its others. A
// collection whose value a rule cannot hold (unruly) has no rules.
//
// What no rule answers exactly gets the JSON 404 (feedgen-404.json, with
// status 404), never another collection's page: before each collection's
// rules, a request with a filter parameter it does not have (tag=X with
// section=news); after all of them, one with any filter parameter, whose
// value is unknown, unruly or not pre-rendered with the others; and the
// manifest by its path. The pages stay reachable by their paths: the edge
// function reads them through the same chain.
func netlifyRedirects(s *Site) []byte {
	var b strings.Builder
	if !s.layout().Has(layout.Page) {
		b.WriteString(`# feedgen rules netlify: a build of layout: chunks has no page files. The
# edge function netlify/edge-functions/feedgen.js answers every request,
# putting pages together from the indexes and chunks; when it does not run,
# these rules make the listing the JSON 404 (copy this file and
# feedgen-404.json into the published folder). A build does not make them
# stale.
`)
		b.WriteString(listing.Path + "  /" + netlifyNotFound + "  404\n")
		if len(s.Feeds) > 0 {
			// A reader feed of the main listing is its file; of a
			// filtered collection, the JSON 404.
			b.WriteByte('\n')
			for _, from := range feedPaths(s) {
				for _, k := range listing.FilterKeys() {
					b.WriteString(strings.Join([]string{from, k + "=:value", "/" + netlifyNotFound, "404!"}, "  ") + "\n")
				}
			}
		}
		writeHidden(&b)
		return []byte(b.String())
	}
	b.WriteString(`# feedgen rules netlify: the canonical requests of the listing, mapped onto
# the pages of the build (copy this file and feedgen-404.json into the
# published folder). The edge function netlify/edge-functions/feedgen.js
# answers every request before these rules; they answer on their own when
# it does not run, and then only the canonical requests exactly: the others
# get the JSON 404. Written again after each build: it names the build's
# collections.
`)
	colls := slices.Clone(s.Collections)
	slices.SortStableFunc(colls, func(a, b manifest.Collection) int { return len(b.Params) - len(a.Params) })
	p := s.Paging
	notFound := "/" + netlifyNotFound
	for _, c := range colls {
		if len(c.Params) == 0 && c.Dir != listing.Dir || slices.ContainsFunc(c.Params, unruly) {
			continue
		}
		var cond []string
		for _, prm := range c.Params {
			cond = append(cond, prm.Key+"="+prm.Value)
		}
		ruleFrom := func(from, to, status string, conds ...string) {
			parts := append([]string{from}, cond...)
			parts = append(parts, conds...)
			parts = append(parts, to, status)
			b.WriteString(strings.Join(parts, "  ") + "\n")
		}
		rule := func(to, status string, conds ...string) { ruleFrom(listing.Path, to, status, conds...) }
		b.WriteByte('\n')
		// A request with a filter parameter the collection has not (the
		// main listing: any) is another collection's, or not found. The
		// feeds' rules are forced (!): their paths are files too.
		for _, k := range listing.FilterKeys() {
			if len(c.Params) == 0 || !slices.ContainsFunc(c.Params, func(p listing.Param) bool { return p.Key == k }) {
				rule(notFound, "404", k+"=:value")
				for _, from := range feedPaths(s) {
					ruleFrom(from, notFound, "404!", k+"=:value")
				}
			}
		}
		// A collection's feeds; the main listing's are their paths' files,
		// and Netlify would read /articles/feed.rss/ as their path too.
		for _, f := range s.Feeds {
			if len(c.Params) > 0 {
				ruleFrom(listing.Path+f.File, "/"+layout.FeedPath(c.Dir, f), "200!")
			}
		}
		for _, l := range p.Limits {
			ls := strconv.Itoa(l)
			rule("/"+listing.PagePathOf(c.Dir, ls, ":offset"), "200", "limit="+ls, "offset=:offset")
			rule("/"+listing.PagePathOf(c.Dir, ls, "0"), "200", "limit="+ls)
		}
		// Any other limit: not one of the build's (or clamped, or not a
		// plain number), which the edge function computes.
		rule(notFound, "404", "limit=:limit")
		ds := strconv.Itoa(p.DefaultLimit)
		rule("/"+listing.PagePathOf(c.Dir, ds, ":offset"), "200", "offset=:offset")
		rule("/"+listing.PagePathOf(c.Dir, ds, "0"), "200")
	}
	writeHidden(&b)
	return []byte(b.String())
}

// writeHidden writes the rules that hide the build's own files. Not
// articles/*: the edge function reads the pages, indexes and chunks
// through Netlify's chain, rules included.
func writeHidden(b *strings.Builder) {
	b.WriteString("\n# The build's own files by their paths: not found.\n")
	for _, from := range []string{manifest.Name, outdir.Unfinished} {
		b.WriteString("/" + from + "  /" + netlifyNotFound + "  404!\n")
	}
}

// unruly reports whether the value of p cannot be a condition of a rule
// of _redirects: white space or control characters, which end or break
// the rule; '%' and '+', which Netlify reads otherwise in a rule and in a
// request; '=' and '&'; a leading ':', which makes it a placeholder.
func unruly(p listing.Param) bool {
	return strings.HasPrefix(p.Value, ":") || strings.ContainsAny(p.Value, "%+=&") ||
		strings.ContainsFunc(p.Value, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) })
}
