// The adapter for platforms of the Fetch API (Cloudflare Workers, Netlify
// Edge Functions): respond answers request, reading a page with
// getPage(request for the page's path) and adding the listing's headers.
async function respond(request, getPage) {
    var u = new URL(request.url), h = new Headers();
    var a = answer(request.method, decodePath(u.pathname), u.search.slice(1));
    if (a.l) {
        h.set("Allow", F.allow);
        h.set("Vary", F.vary);
    }
    if (a.s == 301) {
        h.set("Location", a.h);
        return new Response(null, {status: 301, headers: h});
    }
    h.set("Content-Type", F.ct);
    if (a.f) {
        var page = await getPage(new Request(new URL("/" + a.f, u), {method: request.method, headers: request.headers}));
        if (page.status == 200 || page.status == 304) {
            var names = ["Content-Length", "ETag", "Last-Modified"];
            for (var i = 0; i < names.length; i++) {
                if (page.headers.has(names[i])) {
                    h.set(names[i], page.headers.get(names[i]));
                }
            }
            return new Response(request.method == "HEAD" || page.status == 304 ? null : page.body, {status: page.status, headers: h});
        }
        a = {s: 404, b: F.nf};
    }
    return new Response(a.b, {status: a.s, headers: h});
}
