package rules

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/listing"
)

// njsTarget is nginx with its JavaScript module: listing.js answers every
// request of the server, a page by an internal redirect to the file.
func njsTarget() Target {
	return Target{
		Name:      "nginx-njs",
		Files:     []string{"nginx.conf", "feedgen.js"},
		Run:       "include OUTDIR/nginx.conf; in http {}, load_module modules/ngx_http_js_module.so; in main (Debian: libnginx-mod-http-js)",
		Counts:    true,
		Assembles: true,
		Generate:  njsGenerate,
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
			"// does not make it stale. Write it again when config.yaml's base_url, pagination or filters change.\n"
	}
	js, err := script("// feedgen rules nginx-njs: the njs script nginx.conf imports (njs 0.7.9 or later).\n"+stale, d, nginxAdapterJS)
	if err != nil {
		return nil, err
	}
	for _, p := range []string{s.Root, s.OutDir} {
		if strings.ContainsAny(p, "\"\\$;{}\n") {
			return nil, fmt.Errorf("nginx-njs: the path %q has a character nginx.conf cannot hold", p)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, `# feedgen rules nginx-njs: the listing /articles/ of the build in %[1]s,
# answered as feedgen serve answers it by feedgen.js (ngx_http_js_module).
# In nginx's http {} context: include %[2]s;
# and in its main context: load_module modules/ngx_http_js_module.so;
# (Debian: apt-get install libnginx-mod-http-js). Written again after each
# build: it holds the build's counts.

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
}
`, s.Root, filepath.Join(s.OutDir, "nginx.conf"), filepath.Join(s.OutDir, "feedgen.js"), s.Listen,
		njsPages, listing.ContentType, listing.Allow, listing.Vary, listing.NotFoundBody)
	return &Output{Files: map[string][]byte{"nginx.conf": []byte(b.String()), "feedgen.js": js}}, nil
}
