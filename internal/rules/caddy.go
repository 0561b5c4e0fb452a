package rules

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// caddyTarget is Caddy 2.6 (as Debian 12 ships it) and later: maps read
// the query (see plainrules.go) and choose the page, which file_server
// serves.
func caddyTarget() Target {
	return Target{
		Name:     "caddy",
		Files:    []string{"Caddyfile"},
		Run:      "caddy run --config OUTDIR/Caddyfile --adapter caddyfile (Caddy 2.6 or later), restarted after each build",
		Counts:   true,
		Layouts:  []string{layout.PagesName},
		Generate: caddyGenerate,
		Commands: caddyCommands,
	}
}

// caddyCommands are how Caddy runs the Caddyfile in dir: with its admin
// endpoint off, it is restarted to take the file written again.
func caddyCommands(dir string, _ bool) Commands {
	run := "caddy run --config " + ShellQuote(filepath.Join(dir, "Caddyfile")) + " --adapter caddyfile"
	return Commands{Start: run, Then: "restart Caddy, whose admin endpoint is off (stop it, and start it)", Reload: run}
}

const caddyfile = `# feedgen rules caddy: the listing <<path>> of the build in <<root>>,
# a complete Caddyfile for Caddy 2.6 or later:
#
#   <<start>>
#
# It answers as feedgen serve does <<path>> with limit and offset (leading
# zeros, '_', white space, clamping and invalid values included), the
# filters, the pages past the end, OPTIONS, 405, HEAD and the 301 for
# <<bare>>. What its maps cannot read is the JSON 404: digits of other
# scripts, an offset with escaped digits. It holds the build's filter values
# and counts: write it again when feedgen build says a build made it stale
# (feedgen rules --check tells too), and restart Caddy. Its admin
# endpoint is off, so that it never takes the port of another Caddy.
{
	admin off
	auto_https off
}

http://:<<port>> {
<<bind>>	root * <<root q>>

	route {
<<maps>>
		header Content-Type <<type>>
		@listing vars {path} <<paths>>
		header @listing Allow <<allow>>
		header @listing Vary <<vary>>

		@options {
			vars {path} <<paths>>
			method OPTIONS
		}
		respond @options <<options>> 200
		@not_allowed {
			vars {path} <<paths>>
			not method GET HEAD OPTIONS
		}
		respond @not_allowed <<not allowed>> 405

		# The listing's path without its slash: 301 to it with the query.
		@redirect {
			vars {path} <<bare>>
			not vars {fg_location} ""
		}
		header @redirect Location {fg_location}
		respond @redirect 301

		# Nothing else, the files by their paths neither.
		@elsewhere not vars {path} <<paths>>
		respond @elsewhere <<not found>> 404
<<feeds>>
		@not_found vars {fg_page} ""
		respond @not_found <<not found>> 404
		@empty vars {fg_page} <<unknown>>
		respond @empty <<empty>> 200
		# The page's file; there is none past the end, nor for "<<past>>".
		@page file {fg_page}
		rewrite @page /{fg_page}
		file_server @page
		@past not vars {fg_body} ""
		respond @past {fg_body} 200
		respond <<not found>> 404
	}
}
`

// caddyFeed answers the feed <<feed>>, which caddyFeeds writes once a
// format of the build (with the placeholders of caddyfile): the feed file
// of the collection the maps choose, as the page is chosen (limit and
// offset are not read), with its format's Content-Type.
const caddyFeed = `
		# The reader feed <<feed>>: its collection's file.
		@feed_<<name>> {
			vars {path} <<feed>>
			vars_regexp {fg_collection} <<feed collection>>
			file /{fg_collection}/<<feed file>>
		}
		route @feed_<<name>> {
			header Content-Type <<feed type>>
			rewrite * /{fg_collection}/<<feed file>>
			file_server
		}
`

// caddyFeeds returns what answers the feeds of s, with the placeholders
// of caddyfile: each feed of a collection the build has, then the JSON
// 404 for the others; "" for a build without feeds.
func caddyFeeds(s *Site) string {
	if len(s.Feeds) == 0 {
		return ""
	}
	var b strings.Builder
	for _, f := range s.Feeds {
		b.WriteString(strings.NewReplacer("<<name>>", f.Name, "<<feed>>", listing.Path+f.File, "<<feed file>>", f.File,
			"<<feed type>>", caddyQuote(f.ContentType)).Replace(caddyFeed))
	}
	b.WriteString("\t\t# A feed of a collection the build has none of.\n\t\t@no_feed vars {path} " + strings.Join(feedPaths(s), " ") + "\n\t\trespond @no_feed <<not found>> 404\n")
	return b.String()
}

func caddyGenerate(s *Site) (*Output, error) {
	if err := unholdable("the Caddyfile", rootLabel, s.Root, "`\n\r"); err != nil {
		return nil, fmt.Errorf("caddy: %w", err)
	}
	var maps strings.Builder
	for _, l := range append(append(rxLookups(s), rxPastLookups(s)...), rxBodyLookup(s), rxLocation()) {
		caddyMap(&maps, l)
	}
	bind := ""
	if h := strings.Trim(s.Host(), "[]"); h != "" {
		bind = "\tbind " + h + "\n"
	}
	conf := strings.Replace(caddyfile, "<<feeds>>", caddyFeeds(s), 1)
	conf = strings.NewReplacer(
		"<<path>>", listing.Path,
		"<<paths>>", strings.Join(append([]string{listing.Path}, feedPaths(s)...), " "),
		"<<feed collection>>", caddyQuote(rxFeedCollection),
		"<<bare>>", strings.TrimSuffix(listing.Path, "/"),
		"<<root>>", s.Root,
		"<<root q>>", caddyQuote(s.Root),
		"<<start>>", caddyCommands(s.OutDir, false).Start,
		"<<port>>", s.Port(),
		"<<bind>>", bind,
		"<<maps>>", maps.String(),
		"<<type>>", listing.ContentType,
		"<<allow>>", caddyQuote(listing.Allow),
		"<<vary>>", listing.Vary,
		"<<options>>", caddyQuote(listing.OptionsBody),
		"<<not allowed>>", caddyQuote(strings.ReplaceAll(string(listing.AppendMethodNotAllowed(nil, rxMethod)), rxMethod, "{method}")),
		"<<not found>>", caddyQuote(listing.NotFoundBody),
		"<<unknown>>", caddyQuote(rxUnknown),
		"<<empty>>", caddyQuote(rxEmptyPage(s)),
		"<<past>>", rxPast,
	).Replace(conf)
	return &Output{Files: map[string][]byte{"Caddyfile": []byte(conf)}}, nil
}

// caddyMap writes lookup l as a map of Caddy's.
func caddyMap(b *strings.Builder, l rxLookup) {
	var src strings.Builder
	for _, p := range l.source {
		switch {
		case p == "$"+rxQuery:
			src.WriteString("{query}")
		case strings.HasPrefix(p, "$"):
			src.WriteString("{fg_" + p[1:] + "}")
		default:
			src.WriteString(p)
		}
	}
	fmt.Fprintf(b, "\t\tmap %s {fg_%s} {\n", caddyQuote(src.String()), l.name)
	for _, c := range l.cases {
		// The output of a regular expression is expanded (${1}), not
		// replaced ({placeholder}).
		out := rxTemplate(c.out, func(s string) string { return strings.ReplaceAll(s, "$", "$$") }, func(n string) string { return "${" + n + "}" })
		fmt.Fprintf(b, "\t\t\t%s %s\n", caddyQuote("~"+strings.ReplaceAll(c.re, "`", `\x60`)), caddyQuote(out))
	}
	fmt.Fprintf(b, "\t\t\tdefault %s\n\t\t}\n", caddyQuote(l.def))
}

// caddyQuote quotes s as one token of a Caddyfile: between backquotes,
// where nothing is escaped, unless it holds one.
func caddyQuote(s string) string {
	if !strings.Contains(s, "`") {
		return "`" + s + "`"
	}
	return `"` + strings.ReplaceAll(s, `"`, `\"`) + `"`
}
