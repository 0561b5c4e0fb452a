// The nginx adapter (ngx_http_js_module): js_content feedgen.handle answers
// every request of the server; a page is served by an internal redirect
// to the location that maps PAGES onto the build's folder, which adds the
// headers. A page of a build of layout: chunks is put together here
// (assemblePage).
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
    if (a.c) {
        assemblePage(r, a);
        return;
    }
    r.return(a.s, a.b);
}

// assemblePage answers the page of answer a from the build in the
// server's root: its collection's index, read whole (njs keeps nothing
// between requests: plan parses only the lines the page needs), then
// each part's bytes read at their offset into the body. A chunk that is
// gone (a build replaced the folder's since the index was read) makes it
// read the index again, once; then the page is unavailable.
function assemblePage(r, a) {
    var fs = require("fs"), root = r.variables.document_root + "/", pl = null, body = null, t;
    for (var attempt = 0; attempt < 2 && body == null; attempt++) {
        t = readFile(fs, root + indexPath(a));
        if (t == null && a.q.p.length == 0) {
            break;
        }
        pl = plan(a, t);
        if (pl == null) {
            break;
        }
        body = pl.b != null ? Buffer.from(pl.b) : readParts(fs, root, pl);
    }
    if (body == null) {
        r.headersOut["Retry-After"] = F.ra;
        r.return(503, F.ua);
        return;
    }
    var hash = require("crypto").createHash("sha256");
    if (pl.b != null) {
        hash.update(body);
    } else {
        hash.update(body.slice(0, body.length - pl.n)).update(Buffer.from(pl.t, "hex"));
    }
    var tag = "\"" + hash.digest("hex") + "\"", inm = r.headersIn["If-None-Match"];
    r.headersOut["ETag"] = tag;
    if (inm != null && tagMatches(inm, tag)) {
        r.return(304);
        return;
    }
    r.return(200, body);
}

// readFile returns the bytes of the file at path (a Buffer: the index is
// bisected as it is, never decoded whole), or null when there is none.
function readFile(fs, path) {
    try {
        return fs.readFileSync(path);
    } catch (e) {
        if (e.code == "ENOENT" || e.code == "ENOTDIR") {
            return null;
        }
        throw e;
    }
}

// readParts returns the body of plan pl: its head, then each part read
// from its chunk at its offset, a comma between two, and the tail; null
// when a chunk is gone or shorter.
function readParts(fs, root, pl) {
    var head = Buffer.from(pl.h), buf = Buffer.allocUnsafe(head.length + pl.n), at = head.copy(buf, 0), fd, pt, n;
    for (var i = 0; i < pl.p.length; i++) {
        pt = pl.p[i];
        if (i > 0) {
            buf[at++] = 44;
        }
        try {
            fd = fs.openSync(root + pt[0], "r");
        } catch (e) {
            return null;
        }
        try {
            n = fs.readSync(fd, buf, at, pt[2] - pt[1], pt[1]);
        } finally {
            fs.closeSync(fd);
        }
        if (n != pt[2] - pt[1]) {
            return null;
        }
        at += n;
    }
    buf[at++] = 93;
    buf[at] = 125;
    return buf;
}

export default {handle: handle};
