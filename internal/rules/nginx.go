package rules

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// nginxTarget is plain nginx: maps read the query (see plainrules.go) and
// choose the page, which nginx serves from the build's folder.
func nginxTarget() Target {
	return Target{
		Name:       "nginx",
		Files:      []string{"nginx.conf"},
		Run:        "include OUTDIR/nginx.conf; in http {}, then nginx -s reload",
		Counts:     true,
		Layouts:    []string{layout.PagesName},
		Standalone: true,
		Instead:    Instead{Target: "nginx-njs", How: "nginx puts its pages together with its JavaScript module (Debian: libnginx-mod-http-js)"},
		Generate:   nginxGenerate,
		Commands:   nginxCommands,
	}
}

// nginxCommands are how nginx runs nginx.conf in dir: the system's nginx,
// which includes it, is reloaded; a standalone config runs with dir as
// nginx's prefix.
func nginxCommands(dir string, standalone bool) Commands {
	if !standalone {
		return Commands{Then: "reload nginx", Reload: "nginx -s reload"}
	}
	run := "nginx -p " + ShellQuote(dir) + " -c nginx.conf"
	return Commands{Start: run, Stop: run + " -s stop", Then: "reload nginx", Reload: run + " -s reload"}
}

const nginxConf = `# feedgen rules nginx: the listing <<path>> of the build in <<root>>,
<<use>>
#
# It answers as feedgen serve does <<path>> with limit and offset (leading
# zeros, '_', white space, clamping and invalid values included), the
# filters, the pages past the end, OPTIONS, 405, HEAD and the 301 for
# <<bare>>. What its maps cannot read is the JSON 404: digits of other
# scripts, an offset with escaped digits. It holds the build's filter values
# and counts: write it again when feedgen build says a build made it stale
# (feedgen rules --check tells too), then nginx -s reload. Its
# variables start with $feedgen_: include it once in an http {}.
<<maps>>
map $request_method $feedgen_method {
    "~^(?:GET|HEAD)$" "";
    "~^OPTIONS$" options;
    default 405;
}

server {
    listen <<listen>>;
    root <<qroot>>;
    absolute_redirect off;
    server_tokens off;
    charset off;
    autoindex off;
    types { }
    default_type <<type>>;

    location = <<path>> {
<<methods>>        if ($feedgen_page = "") {
            return 404 <<not found>>;
        }
        if ($feedgen_page = "<<unknown>>") {
            return 200 <<empty>>;
        }
        # The page's file; there is none past the end, nor for "<<past>>".
        try_files /$feedgen_page @feedgen_past;
    }

<<feeds>>
    location @feedgen_past {
        add_header Allow <<allow>> always;
        add_header Vary <<vary>> always;
        if ($feedgen_body = "") {
            return 404 <<not found>>;
        }
        return 200 $feedgen_body;
    }

    # The listing's path without its slash: 301 to it with the query.
    location = <<bare>> {
        if ($feedgen_location = "") {
            return 404 <<not found>>;
        }
        return 301 $feedgen_location;
    }

    # TRACE, which nginx refuses before any location runs (its own HTML
    # 405): answered here as feedgen serve answers it.
    error_page 405 = @feedgen_method;
    location @feedgen_method {
        if ($uri = <<path>>) {
            add_header Allow <<allow>> always;
            add_header Vary <<vary>> always;
            return 405 <<not allowed>>;
        }
        if ($uri = <<bare>>) {
            return 301 $feedgen_location;
        }
<<feed trace>>        return 404 <<not found>>;
    }

    # Nothing else, the files by their paths neither.
    location / {
        return 404 <<not found>>;
    }
}
`

// nginxMethods answers the methods of the listing (with the placeholders
// of nginxConf), in its location and the feeds'.
const nginxMethods = `        add_header Allow <<allow>> always;
        add_header Vary <<vary>> always;
        if ($feedgen_method = options) {
            return 200 <<options>>;
        }
        if ($feedgen_method) {
            return 405 <<not allowed>>;
        }
`

// nginxFeed is the location of the reader feeds, which nginxFeeds writes
// for a build with feeds (with the placeholders of nginxConf). It ends in
// \z, not $, which also matches before a last newline (%0A in a path).
const nginxFeed = `
    # The reader feeds: the feed file of the collection the maps choose,
    # as the page is chosen (limit and offset are not read); the JSON 404
    # for a collection the build has no feed of.
    location ~ "^<<feed dir>>(?<feedgen_feed><<feed files>>)\z" {
<<methods>>        if ($feedgen_collection !~ "<<feed collection>>") {
            return 404 <<not found>>;
        }
        rewrite ^ <<feeds prefix>>$feedgen_collection/$feedgen_feed last;
    }
`

// nginxFeedFiles returns the location of the feed files of s, reached
// only by internal redirects (the rewrites of nginx's feed locations,
// nginx-njs's feedgen.js), which ask only for a feed the build has: each
// format's Content-Type by the file's extension, and the listing's
// headers. A request for its path from outside, or a feed gone since,
// is the JSON 404 of any other path. "" for a build without feeds.
func nginxFeedFiles(s *Site) string {
	if len(s.Feeds) == 0 {
		return ""
	}
	var types strings.Builder
	for _, f := range s.Feeds {
		fmt.Fprintf(&types, "            %s %s;\n", nginxQuote(f.ContentType), strings.TrimPrefix(path.Ext(f.File), "."))
	}
	headers := "        add_header Allow " + nginxQuote(listing.Allow) + " always;\n        add_header Vary " + listing.Vary + " always;\n"
	return `
    # The reader feeds' files, reached only by internal redirects.
    location ^~ ` + nginxFeedsPrefix + ` {
        internal;
        alias ` + nginxQuote(nginxPath(s, s.Root)+"/") + `;
        # A feed is a file of the build: none through a symbolic link
        # (its 403 is the JSON 404).
        disable_symlinks on from=$document_root;
        types {
` + types.String() + `        }
        charset off;
` + headers + `        error_page 403 404 = @feedgen_no_feed;
    }

    location @feedgen_no_feed {
        types { }
        default_type ` + listing.ContentType + `;
        return 404 ` + nginxQuote(listing.NotFoundBody) + `;
    }
`
}

// nginxFeedsPrefix is the prefix of the internal location of the feed
// files; it is nginx.js's FEEDS.
const nginxFeedsPrefix = "/.feedgen-feeds/"

// nginxFeeds returns the locations of the feeds of s, with the
// placeholders of nginxConf: "" for a build without feeds.
func nginxFeeds(s *Site) string {
	if len(s.Feeds) == 0 {
		return ""
	}
	var files []string
	for _, f := range s.Feeds {
		files = append(files, regexp.QuoteMeta(f.File))
	}
	return strings.NewReplacer("<<feed dir>>", regexp.QuoteMeta(listing.Path), "<<feed files>>", strings.Join(files, "|")).Replace(nginxFeed) +
		nginxFeedFiles(s)
}

// nginxFeedTrace returns what the location of nginx's 405 answers for
// the feeds' paths (TRACE): the listing's 405; "" without feeds.
func nginxFeedTrace(s *Site) string {
	if len(s.Feeds) == 0 {
		return ""
	}
	return `        if ($uri ~ "^` + rxFeedPaths(s) + `\z") {
            add_header Allow <<allow>> always;
            add_header Vary <<vary>> always;
            return 405 <<not allowed>>;
        }
`
}

// nginxUse says, in the header of nginx.conf, how nginx takes it: in
// its http {}, or as it is (--standalone).
func nginxUse(s *Site) string {
	if s.Standalone {
		return "# in the http {} of this complete config (see its first lines)."
	}
	return "# for nginx's http {} context: include " + filepath.Join(s.OutDir, "nginx.conf") + ";"
}

// nginxUnquotable are the characters nginx.conf cannot hold in a quoted
// path.
const nginxUnquotable = "\"\\$;{}\n\r"

func nginxGenerate(s *Site) (*Output, error) {
	if err := unholdable("nginx.conf", rootLabel, s.Root, nginxUnquotable); err != nil {
		return nil, fmt.Errorf("nginx: %w", err)
	}
	if strings.Contains(s.BaseURL, "$") {
		return nil, fmt.Errorf("nginx: the base_url %q has a $, which nginx.conf cannot hold in a value", s.BaseURL)
	}
	var maps strings.Builder
	for _, l := range append(append(rxLookups(s), rxPastLookups(s)...), rxBodyLookup(s), rxLocation()) {
		maps.WriteString("\n")
		nginxMap(&maps, l)
	}
	conf := strings.NewReplacer("<<feeds>>", nginxFeeds(s), "<<feed trace>>", nginxFeedTrace(s)).Replace(nginxConf)
	conf = strings.ReplaceAll(conf, "<<methods>>", nginxMethods)
	conf = strings.NewReplacer(
		"<<path>>", listing.Path,
		"<<bare>>", strings.TrimSuffix(listing.Path, "/"),
		"<<root>>", nginxPath(s, s.Root),
		"<<qroot>>", nginxQuote(nginxPath(s, s.Root)),
		"<<use>>", nginxUse(s),
		"<<maps>>", maps.String(),
		"<<listen>>", s.Listen,
		"<<type>>", listing.ContentType,
		"<<allow>>", nginxQuote(listing.Allow),
		"<<vary>>", listing.Vary,
		"<<options>>", nginxQuote(listing.OptionsBody),
		"<<not allowed>>", nginxQuote(string(listing.AppendMethodNotAllowed(nil, rxMethod))),
		"<<not found>>", nginxQuote(listing.NotFoundBody),
		"<<unknown>>", rxUnknown,
		"<<empty>>", nginxQuote(rxEmptyPage(s)),
		"<<past>>", rxPast,
		"<<feed collection>>", rxFeedCollection,
		"<<feeds prefix>>", nginxFeedsPrefix,
	).Replace(conf)
	if s.Standalone {
		main, err := nginxStandalone(s, []byte(conf), "")
		if err != nil {
			return nil, err
		}
		conf = string(main)
	}
	return &Output{Files: map[string][]byte{"nginx.conf": []byte(conf)}}, nil
}

// nginxMap writes lookup l as a map of nginx.
func nginxMap(b *strings.Builder, l rxLookup) {
	var src strings.Builder
	for _, p := range l.source {
		switch {
		case p == "$"+rxQuery:
			src.WriteString("$args")
		case strings.HasPrefix(p, "$"):
			src.WriteString("$feedgen_" + p[1:])
		default:
			src.WriteString(p)
		}
	}
	fmt.Fprintf(b, "map %s $feedgen_%s {\n", nginxQuote(src.String()), l.name)
	for _, c := range l.cases {
		re := "~" + c.re
		if c.re == "^$" {
			re = "" // nginx tries no regular expression on an empty value
		}
		out := rxTemplate(c.out, func(s string) string { return s }, func(n string) string { return "$" + n })
		fmt.Fprintf(b, "    %s %s;\n", nginxQuote(re), nginxQuote(out))
	}
	fmt.Fprintf(b, "    default %s;\n}\n", nginxQuote(l.def))
}

// nginxQuote quotes s for nginx.conf; rxMethod in s stands for the
// request's method.
func nginxQuote(s string) string {
	s = strings.NewReplacer(`\`, `\\`, `"`, `\"`, rxMethod, "$request_method").Replace(s)
	return `"` + s + `"`
}
