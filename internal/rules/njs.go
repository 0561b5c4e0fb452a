package rules

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// njsTarget is nginx with its JavaScript module: listing.js answers every
// request of the server, a page by an internal redirect to the file.
func njsTarget() Target {
	return Target{
		Name:       "nginx-njs",
		Files:      []string{"nginx.conf", "feedgen.js"},
		Run:        "include OUTDIR/nginx.conf; in http {}, load_module modules/ngx_http_js_module.so; in main (Debian: libnginx-mod-http-js)",
		Counts:     true,
		Layouts:    []string{layout.PagesName, layout.ChunksName},
		ModulesDir: nginxModules,
		Modules:    []string{"ngx_http_js_module.so"},
		Cache:      "a folder where nginx keeps the pages njs puts together",
		Standalone: true,
		Generate:   njsGenerate,
		Commands:   nginxCommands,
	}
}

// njsPages is the prefix of the internal location of the pages; it is
// nginx.js's PAGES.
const njsPages = "/.feedgen-pages/"

func njsGenerate(s *Site) (*Output, error) {
	d, err := newSiteData(s, true)
	if err != nil {
		return nil, err
	}
	stale := "// It holds the build's counts: write it again after each build, then nginx -s reload.\n"
	if d.Chunked == 1 {
		stale = "// It puts pages together from each collection's index and chunks, read per request: a build\n" +
			"// does not make it stale. Write it again when config.yaml's base_url, pagination, filters or feeds change.\n"
	}
	js, err := script("// feedgen rules nginx-njs: the njs script nginx.conf imports (njs 0.7.9 or later).\n"+stale, d, nginxAdapterJS)
	if err != nil {
		return nil, err
	}
	for _, p := range []struct{ label, path string }{{rootLabel, s.Root}, {outLabel, s.OutDir}, {cacheLabel, s.Cache}} {
		if err := unholdable("nginx.conf", p.label, p.path, nginxUnquotable); err != nil {
			return nil, err
		}
	}
	if s.Cache != "" && !s.layout().Assembled {
		return nil, errors.New("--cache is for a build of layout: chunks, whose pages njs puts together; nginx serves a pages build's files itself")
	}
	listen := s.Listen
	if s.Cache != "" {
		if len(njsSocket(s)) > 100 {
			return nil, fmt.Errorf("the socket %s is too long a path for a Unix socket: use a shorter --cache", njsSocket(s))
		}
		listen = nginxQuote("unix:" + njsSocket(s))
	}
	var b strings.Builder
	if s.Cache != "" {
		fmt.Fprintf(&b, njsCacheConf, s.Listen, s.Cache, njsSocket(s), njsCacheTime)
	}
	fmt.Fprintf(&b, `# feedgen rules nginx-njs: the listing /articles/ of the build in %[1]s,
# answered as feedgen serve answers it by feedgen.js (ngx_http_js_module).
%[2]s

js_import feedgen from "%[3]s";

server {
    listen %[4]s;
    root "%[1]s";
    absolute_redirect off;
    merge_slashes off;
    server_tokens off;

    location / {
        js_content feedgen.handle;
    }

    # TRACE, which nginx refuses before any location runs: its 405 goes to
    # feedgen.js too, which answers it as feedgen serve does.
    error_page 405 = @feedgen_method;
    location @feedgen_method {
        js_content feedgen.handle;
    }

    # The pages, reached only by feedgen.js's internal redirects.
    location ^~ %[5]s {
        internal;
        alias "%[1]s/";
        # A page is a file of the build: none through a symbolic link
        # (its 403 is the JSON 404).
        disable_symlinks on from=$document_root;
        types { }
        default_type %[6]s;
        charset off;
        add_header Allow "%[7]s";
        add_header Vary %[8]s;
        error_page 403 404 = @feedgen_not_found;
    }

    location @feedgen_not_found {
        default_type %[6]s;
        return 404 '%[9]s';
    }
%[10]s}
`, nginxPath(s, s.Root), njsUse(s), njsImport(s), listen,
		njsPages, listing.ContentType, listing.Allow, listing.Vary, listing.NotFoundBody, nginxFeedFiles(s))
	conf := []byte(b.String())
	if s.Standalone {
		if conf, err = nginxStandalone(s, conf, StandaloneModules(njsTarget(), s)[0]); err != nil {
			return nil, err
		}
	}
	return &Output{Files: map[string][]byte{"nginx.conf": conf, "feedgen.js": js}}, nil
}

// njsImport is the path of feedgen.js that nginx.conf imports: in a
// standalone config, relative to nginx's prefix, the output folder (nginx
// -p OUTDIR), so that the folder names no folder of this machine; in a
// file the system's nginx includes, whose prefix is its own, absolute.
func njsImport(s *Site) string {
	if s.Standalone {
		return "feedgen.js"
	}
	return filepath.Join(s.OutDir, "feedgen.js")
}

// njsCacheTime is how long nginx keeps an assembled page with --cache:
// a build is answered within about that long.
const njsCacheTime = "1s"

// njsSocket is the Unix socket of the server that assembles pages, behind
// the caching one, with --cache.
func njsSocket(s *Site) string { return filepath.Join(s.Cache, "assemble.sock") }

// njsCacheConf is, with --cache, the server in front of the one that
// assembles pages: it keeps each page answered for njsCacheTime
// (microcaching: njs makes every page anew, at a quarter of what nginx
// serves from files), then asks again with If-None-Match, in the
// background, answering the page it has meanwhile. A page comes whole
// from one build; a new build is answered within about njsCacheTime.
// The requests that are not GET or HEAD go through, uncached.
const njsCacheConf = `# With --cache: nginx keeps each page njs puts together for %[4]s, in %[2]s.
proxy_cache_path "%[2]s/pages" levels=1:2 keys_zone=feedgen_pages:8m max_size=512m inactive=10m use_temp_path=off;

server {
    listen %[1]s;
    absolute_redirect off;
    merge_slashes off;
    server_tokens off;

    location / {
        proxy_pass "http://unix:%[3]s:";
        proxy_cache feedgen_pages;
        proxy_cache_key $request_uri;
        proxy_cache_valid 200 %[4]s;
        proxy_cache_revalidate on;
        proxy_cache_use_stale updating;
        proxy_cache_background_update on;
        proxy_cache_lock on;
        proxy_buffering on;
    }

    # TRACE, which nginx refuses before any location runs: to feedgen.js
    # too, through the server behind.
    error_page 405 = @feedgen_method;
    location @feedgen_method {
        proxy_pass "http://unix:%[3]s:";
    }
}

`

// njsUse says, in the header of nginx-njs's nginx.conf, how nginx takes
// it (in its http {}, with the module loaded; or as it is, with
// --standalone, which loads it) and when to write it again.
func njsUse(s *Site) string {
	use := `# In the http {} of this complete config, which loads ngx_http_js_module
# above (Debian: apt-get install libnginx-mod-http-js).`
	if !s.Standalone {
		use = `# In nginx's http {} context: include ` + filepath.Join(s.OutDir, "nginx.conf") + `;
# and in its main context: load_module modules/ngx_http_js_module.so;
# (Debian: apt-get install libnginx-mod-http-js).`
	}
	if !njsTarget().HoldsCounts(s.layout()) {
		return use + `
# It reads each collection's index per request: a build does not make it
# stale.`
	}
	return use + `
# It holds the build's counts: write it again when feedgen build says a
# build made it stale.`
}
