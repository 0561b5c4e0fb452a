package rules

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// apacheTarget is Apache httpd 2.4: mod_rewrite reads the query (the
// lookups of plainrules.go as conditions that set variables) and chooses
// the page, which Apache serves; ErrorDocument writes the other bodies.
func apacheTarget() Target {
	return Target{
		Name:       "apache",
		Files:      []string{"apache.conf"},
		Run:        "Include OUTDIR/apache.conf in httpd.conf, with mod_rewrite and mod_headers (a2enmod rewrite headers), then apachectl graceful",
		Counts:     true,
		Layouts:    []string{layout.PagesName},
		Standalone: true,
		ModulesDir: apacheModules,
		Modules:    apacheModuleFiles(),
		Generate:   apacheGenerate,
		Commands:   apacheCommands,
	}
}

// apacheCommands are how Apache runs apache.conf in dir: the system's
// Apache, which includes it, is reloaded gracefully; a standalone config
// runs with dir as its server root (Debian's apache2; httpd elsewhere).
func apacheCommands(dir string, standalone bool) Commands {
	if !standalone {
		return Commands{Then: "reload Apache", Reload: "apachectl graceful"}
	}
	run := "apache2 -d " + ShellQuote(dir) + " -f apache.conf -k "
	return Commands{Start: run + "start", Stop: run + "stop", Then: "reload Apache", Reload: run + "graceful"}
}

const apacheConf = `# feedgen rules apache: the listing <<path>> of the build in <<root>>,
<<use>>
#
# It answers as feedgen serve does <<path>> with limit and offset (leading
# zeros, '_', white space, clamping and invalid values included), the
# filters, the pages past the end, HEAD and OPTIONS. Apache adds to the 405
# an empty Allow field, and makes the Location of the 301 for <<bare>>
# absolute. What its rules cannot read is the JSON 404: digits of other
# scripts, an offset with escaped digits. It holds the build's filter values
# and counts: write it again when feedgen build says a build made it stale
# (feedgen rules --check tells too), then apachectl graceful.

Listen <<listen>>

<VirtualHost <<vhost>>>
    DocumentRoot <<qroot>>
    <Directory <<qroot>>>
        Require all granted
        Options None
        AllowOverride None
        ForceType <<type>>
    </Directory>
    AddDefaultCharset Off
    # No TRACE: the Allow of a 405 would name it.
    TraceEnable off

    # The bodies: the JSON 404 and 405, and the answers of status 200 that
    # are not files (OPTIONS, the pages of the empty collection and past
    # the end), which the rules put in FG_BODY from these parts.
    ErrorDocument 404 <<not found>>
    ErrorDocument 405 <<not allowed>>
    ErrorDocument 200 "%{reqenv:FG_BODY}"
    SetEnvIfExpr true <<options>>
    SetEnvIfExpr true <<empty>>
    SetEnvIfExpr true <<head>>
    SetEnvIfExpr true <<middle>>
    SetEnvIfExpr true <<tail>>
    Header always set Content-Type <<type>>
    Header always set Allow <<allow>> env=FG_LISTING
    Header always set Vary <<vary>> env=FG_LISTING
<<feed types>>
    RewriteEngine On
    RewriteRule ^<<paths>>$ - [E=FG_LISTING:1]

    # The listing's path without its slash: 301 to it with the query.
    RewriteCond %{QUERY_STRING} ^$
    RewriteRule ^<<bare>>$ <<path>>? [R=301,L]
    RewriteCond %{QUERY_STRING} <<safe>>
    RewriteRule ^<<bare>>$ <<path>> [R=301,L]

    # Nothing else, the files by their paths neither.
    RewriteRule !^<<paths>>$ - [R=404,L]

    RewriteCond %{REQUEST_METHOD} =OPTIONS
    RewriteRule ^ - [E=FG_BODY:%{ENV:FG_OPTIONS},R=200,L]
    RewriteCond %{REQUEST_METHOD} !^(?:GET|HEAD)$
    RewriteRule ^ - [R=405,L]
<<lookups>>
<<feeds>>    RewriteCond %{ENV:FG_PAGE} ^$
    RewriteRule ^ - [R=404,L]
    RewriteCond %{ENV:FG_PAGE} =<<unknown>>
    RewriteRule ^ - [E=FG_BODY:%{ENV:FG_EMPTY},R=200,L]
    # The page's file; there is none past the end, nor for "<<past>>".
    RewriteCond <<page>> -f
    RewriteRule ^ <<page>> [L]
<<past lookups>>
    RewriteCond %{ENV:FG_COUNT} ^$ [OR]
    RewriteCond %{ENV:FG_LINK} ^$
    RewriteRule ^ - [R=404,L]
    RewriteRule ^ - [E=FG_BODY:%{ENV:FG_HEAD}%{ENV:FG_COUNT}%{ENV:FG_MIDDLE}%{ENV:FG_LINK}%{ENV:FG_TAIL},R=200,L]
</VirtualHost>
`

// apacheFeed answers the feed <<feed>>, which apacheFeeds writes once a
// format of the build (with the placeholders of apacheConf): the feed
// file of the collection the lookups choose, as the page is chosen (limit
// and offset are not read), its format's Content-Type set by <<env>>.
const apacheFeed = `    RewriteCond %{ENV:FG_COLLECTION} <<feed collection>>
    RewriteCond <<feed file>> -f
    RewriteRule ^<<feed re>>$ <<feed file>> [E=<<env>>:1,L]
`

// apacheFeedEnv is the variable that says a feed of format name is
// answered.
func apacheFeedEnv(name string) string { return apacheVar("feed_" + name) }

// apacheFeeds returns the rules that answer the feeds of s, with the
// placeholders of apacheConf: each feed of a collection the build has,
// then the JSON 404 for the others; "" for a build without feeds.
func apacheFeeds(s *Site) string {
	if len(s.Feeds) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("\n    # The reader feeds: their collection's file.\n")
	for _, f := range s.Feeds {
		b.WriteString(strings.NewReplacer("<<feed re>>", regexp.QuoteMeta(listing.Path+f.File), "<<env>>", apacheFeedEnv(f.Name),
			"<<feed file>>", apacheRewriteArg(s.Root+"/%{ENV:FG_COLLECTION}/"+f.File)).Replace(apacheFeed))
	}
	b.WriteString("    RewriteRule ^" + rxFeedPaths(s) + "$ - [R=404,L]\n\n")
	return b.String()
}

// apacheFeedTypes returns the headers that give each feed its format's
// Content-Type, after the listing's: "" for a build without feeds.
func apacheFeedTypes(s *Site) string {
	var b strings.Builder
	for _, f := range s.Feeds {
		b.WriteString("    Header always set Content-Type " + apacheQuote(f.ContentType) + " env=" + apacheFeedEnv(f.Name) + "\n")
	}
	return b.String()
}

// apacheUse says, in the header of apache.conf, how Apache takes it:
// included in its main config, with the modules it needs, or as it is
// (--standalone), which loads them.
func apacheUse(s *Site) string {
	if s.Standalone {
		return `# for Apache httpd 2.4.13 or later, in this complete config, which loads
# the modules it needs above.`
	}
	return `# for Apache httpd 2.4.13 or later: Include ` + filepath.Join(s.OutDir, "apache.conf") + `
# in its main config. It needs these modules, which it does not load:
# mod_rewrite, mod_headers, mod_setenvif and mod_authz_core (Debian: a2enmod
# rewrite headers; setenvif and authz_core are on by default).`
}

// apacheUnquotable are the characters apache.conf cannot hold in a
// quoted path.
const apacheUnquotable = "\"'\\%$\n\r\t"

func apacheGenerate(s *Site) (*Output, error) {
	if err := unholdable("apache.conf", rootLabel, s.Root, apacheUnquotable); err != nil {
		return nil, fmt.Errorf("apache: %w", err)
	}
	if strings.ContainsAny(s.BaseURL, `$\`) {
		return nil, fmt.Errorf("apache: the base_url %q has a character apache.conf cannot hold in a value", s.BaseURL)
	}
	var lookups, past strings.Builder
	for _, l := range rxLookups(s) {
		if err := apacheLookup(&lookups, l); err != nil {
			return nil, err
		}
	}
	for _, l := range rxPastLookups(s) {
		if err := apacheLookup(&past, l); err != nil {
			return nil, err
		}
	}
	vhost := "*:" + s.Port()
	if s.Host() != "" {
		vhost = s.Listen
	}
	head, middle, tail := rxBody(s)
	notAllowed := apacheExpr(string(listing.AppendMethodNotAllowed(nil, rxMethod)))
	notAllowed = strings.ReplaceAll(notAllowed, rxMethod, "%{REQUEST_METHOD}")
	safe := rxLocation().cases[1].re
	conf := strings.NewReplacer("<<feeds>>", apacheFeeds(s), "<<feed types>>", apacheFeedTypes(s)).Replace(apacheConf)
	paths := listing.Path
	if fs := rxFeedPaths(s); fs != "" {
		paths = "(?:" + regexp.QuoteMeta(listing.Path) + "|" + fs + ")"
	}
	conf = strings.NewReplacer(
		"<<path>>", listing.Path,
		"<<paths>>", paths,
		"<<feed collection>>", rxFeedCollection,
		"<<bare>>", strings.TrimSuffix(listing.Path, "/"),
		"<<root>>", s.Root,
		"<<qroot>>", apacheQuote(s.Root),
		"<<use>>", apacheUse(s),
		"<<listen>>", s.Listen,
		"<<vhost>>", vhost,
		"<<type>>", listing.ContentType,
		"<<allow>>", apacheQuote(listing.Allow),
		"<<vary>>", listing.Vary,
		"<<not found>>", apacheQuote(apacheExpr(listing.NotFoundBody)),
		"<<not allowed>>", apacheQuote(notAllowed),
		"<<options>>", apacheQuote("FG_OPTIONS="+listing.OptionsBody),
		"<<empty>>", apacheQuote("FG_EMPTY="+rxEmptyPage(s)),
		"<<head>>", apacheQuote("FG_HEAD="+head),
		"<<middle>>", apacheQuote("FG_MIDDLE="+middle),
		"<<tail>>", apacheQuote("FG_TAIL="+tail),
		"<<safe>>", apacheRewriteArg(safe),
		"<<lookups>>", lookups.String(),
		"<<unknown>>", rxUnknown,
		"<<past>>", rxPast,
		"<<page>>", apacheRewriteArg(s.Root+"/%{ENV:FG_PAGE}"),
		"<<past lookups>>", past.String(),
	).Replace(conf)
	if s.Standalone {
		main, err := apacheStandalone(s, []byte(conf))
		if err != nil {
			return nil, err
		}
		conf = string(main)
	}
	return &Output{Files: map[string][]byte{"apache.conf": []byte(conf)}}, nil
}

// apacheLookup writes lookup l as mod_rewrite rules that set the variable
// FG_NAME: its default first, then its cases from the last, so that the
// first that matches is the one that sets it last.
func apacheLookup(b *strings.Builder, l rxLookup) error {
	var src strings.Builder
	for _, p := range l.source {
		switch {
		case p == "$"+rxQuery:
			src.WriteString("%{QUERY_STRING}")
		case strings.HasPrefix(p, "$"):
			src.WriteString("%{ENV:" + apacheVar(p[1:]) + "}")
		default:
			src.WriteString(p)
		}
	}
	name := apacheVar(l.name)
	def, err := apacheValue(l.def)
	if err != nil {
		return err
	}
	fmt.Fprintf(b, "\n    RewriteRule ^ - %s\n", apacheRewriteArg("[E="+name+":"+def+"]"))
	for i := len(l.cases) - 1; i >= 0; i-- {
		c := l.cases[i]
		out, err := apacheValue(c.out)
		if err != nil {
			return err
		}
		fmt.Fprintf(b, "    RewriteCond %s %s\n    RewriteRule ^ - %s\n", apacheRewriteArg(src.String()), apacheRewriteArg(c.re), apacheRewriteArg("[E="+name+":"+out+"]"))
	}
	return nil
}

// apacheVar is the name of the variable of a lookup.
func apacheVar(name string) string { return "FG_" + strings.ToUpper(name) }

// apacheValue writes the output of a case as the value of mod_rewrite's
// E flag: its groups as %N, '%' and '$' escaped; a ',' would end the flag.
func apacheValue(out string) (string, error) {
	if strings.Contains(out, ",") {
		return "", fmt.Errorf("apache: a value with a comma: %q", out)
	}
	return rxTemplate(out, func(s string) string {
		return strings.NewReplacer(`%`, `\%`, `$`, `\$`).Replace(s)
	}, func(n string) string { return "%" + n }), nil
}

// apacheExpr escapes s as the text of an expression of ErrorDocument:
// backslashes, and the '%' and '$' that would start a variable.
func apacheExpr(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `$`, `\$`).Replace(s)
}

// apacheRewriteArg writes s as one argument of RewriteCond or
// RewriteRule, which read a backslash as it is but before white space, and
// a quote only as the first character.
func apacheRewriteArg(s string) string {
	return strings.NewReplacer(" ", `\ `, "\t", "\\\t").Replace(s)
}

// apacheQuote quotes s as one argument of a directive.
func apacheQuote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}
