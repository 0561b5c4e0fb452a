// The nginx adapter (ngx_http_js_module): js_content feedgen.handle answers
// every request of the server; a page is served by an internal redirect
// to the location that maps PAGES onto the build's folder, which adds the
// headers.
var PAGES = "/.feedgen-pages/";

function handle(r) {
    var u = r.variables.request_uri, i = u.indexOf("?");
    var a = answer(r.method, decodePath(i < 0 ? u : u.slice(0, i)), i < 0 ? "" : u.slice(i + 1));
    if (a.f) {
        r.internalRedirect(PAGES + a.f);
        return;
    }
    if (a.l) {
        r.headersOut["Allow"] = F.allow;
        r.headersOut["Vary"] = F.vary;
    }
    if (a.s == 301) {
        r.return(301, a.h);
        return;
    }
    r.headersOut["Content-Type"] = F.ct;
    r.return(a.s, a.b);
}

export default {handle: handle};
