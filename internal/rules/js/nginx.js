// The nginx adapter (ngx_http_js_module): js_content feedgen.handle answers
// every request of the server; a page is served by an internal redirect
// to the location that maps PAGES onto the build's folder, which adds the
// headers, and a reader feed by one to FEEDS's, which adds its format's
// Content-Type too. A page of a build of layout: chunks is put together here
// (assemblePage).
var PAGES = "/.feedgen-pages/", FEEDS = "/.feedgen-feeds/";

function handle(r) {
    var u = requestURI(r), i = u.indexOf("?"), p = i < 0 ? u : u.slice(0, i);
    // A path without '%' is its own decoding (answer compares it with
    // the listing's, which is ASCII).
    var a = answer(r.method, p.indexOf("%") < 0 ? p : decodePath(p), i < 0 ? "" : u.slice(i + 1));
    // A feed of a build of layout: chunks is there when its collection
    // has articles, which F does not say: else the JSON 404.
    if (a.f && (!a.t || !F.x || isFile(r.variables.document_root + "/" + a.f))) {
        r.internalRedirect((a.t ? FEEDS : PAGES) + a.f);
        return;
    }
    if (a.f) {
        a = {s: 404, b: F.nf, l: 1};
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

// requestURI returns the request's target as the client sent it, each
// byte past ASCII percent-encoded: a byte sent raw and its escape decode
// to the same byte (then UTF-8, invalid bytes U+FFFD), as feedgen serve
// reads them. r.variables would give the raw bytes as characters (njs
// before 0.8: one a byte) or decoded (later), which answer takes for
// characters; r.rawVariables gives the bytes.
function requestURI(r) {
    var b = r.rawVariables.request_uri, s = "", from = 0;
    for (var i = 0; i < b.length; i++) {
        if (b[i] >= 128) {
            s += b.toString("utf8", from, i) + "%" + hex2(b[i], HEX);
            from = i + 1;
        }
    }
    return from == 0 ? b.toString("utf8") : s + b.toString("utf8", from, b.length);
}

// assemblePage answers the page of answer a from the build in the
// server's root: its collection's index, the root and then the leaves
// the page's articles are in (njs keeps nothing between requests: plan
// bisects the root, parts each leaf, and both parse only the lines the
// page needs), then each part's bytes read at their offset into the
// body. A leaf or chunk that is gone (a build replaced the folder's
// since the root was read) makes it read the root again, once; then the
// page is unavailable.
function assemblePage(r, a) {
    var fs = require("fs"), root = r.variables.document_root + "/", pl = null, body = null;
    try {
        for (var attempt = 0; attempt < 2 && body == null; attempt++) {
            pl = planFrom(fs, root, a);
            if (pl == null) {
                break;
            }
            body = pl.b != null ? Buffer.from(pl.b) : pl.p != null ? readParts(fs, root, pl) : null;
        }
    } catch (e) {
        // An index or chunk that cannot be read as it should: the build's
        // folder is damaged or being replaced. 503, as feedgen serve.
        r.error("feedgen: " + e);
        body = null;
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

// WINDOW is how much of a large root or leaf is read at once: about
// 450 articles' lines of a leaf, so that the first page's lines come
// with its head. One of up to WHOLE bytes is read whole, in one read, and
// plan calls the Buffer's own methods: that costs less in njs than
// windows, whose methods are JavaScript. A root is about 30 kB at a
// million articles (a line a leaf of about 4,000), a leaf about 40 kB:
// read whole; a root over 256 kB (some 8 million articles) or a leaf of
// many more chunks than most is read by windows, so that what a page
// costs does not grow with the collection.
var WINDOW = 4096, WHOLE = 256 << 10;

// openIndex returns the root or leaf at path as plan and parts read it:
// its bytes (a Buffer), or for a large one an object with what they call
// (indexOf, lastIndexOf, length, toString of a range) that reads windows
// of the file at their offsets: a page needs the head and the lines
// bisected to, not the whole file. Null when there is none. expect is
// the size a leaf's root says it has (undefined for a root): one of up
// to WHOLE bytes is read with no fstat.
function openIndex(fs, path, expect) {
    var fd, t = null, size, b, n;
    try {
        fd = openRegular(fs, path);
    } catch (e) {
        if (e.code == "ENOENT" || e.code == "ENOTDIR") {
            return null;
        }
        throw e;
    }
    try {
        if (expect <= WHOLE) {
            // A leaf, whose size its root says: a byte more is read, so
            // that a file of another size is read shorter or longer than
            // that (parts refuses it).
            b = Buffer.allocUnsafe(expect + 1);
            n = fs.readSync(fd, b, 0, expect + 1, 0);
            return b.slice(0, n);
        }
        size = fs.fstatSync(fd).size;
        if (size <= WHOLE) {
            b = Buffer.allocUnsafe(size);
            if (fs.readSync(fd, b, 0, size, 0) != size) {
                throw new Error(path + ": shorter than it was");
            }
            return b;
        }
        b = {fs: fs, fd: fd, path: path, length: size, at: 0, buf: null,
            mem: Buffer.allocUnsafe(WINDOW), indexOf: windowIndexOf, lastIndexOf: windowLastIndexOf, toString: windowString};
        loadWindow(b, 0, WINDOW);
        t = b;
    } finally {
        if (t == null) {
            fs.closeSync(fd);
        }
    }
    return t;
}

// closeIndex closes what openIndex opened: a file read by windows.
function closeIndex(fs, t) {
    if (t != null && t.fd != null && t.length > WHOLE) {
        fs.closeSync(t.fd);
        t.fd = null;
    }
}

// loadWindow reads n bytes of index t (fewer at its end) from pos.
function loadWindow(t, pos, n) {
    n = Math.max(0, Math.min(n, t.length - pos));
    t.buf = n <= t.mem.length ? t.mem.slice(0, n) : Buffer.allocUnsafe(n);
    t.at = pos;
    if (t.fs.readSync(t.fd, t.buf, 0, n, pos) != n) {
        throw new Error(t.path + ": shorter than it was");
    }
}

// windowIndexOf is String's indexOf over an index read by windows.
function windowIndexOf(s, from) {
    var t = this, i;
    from = from || 0;
    for (;;) {
        if (from < t.at || from + s.length > t.at + t.buf.length) {
            if (from >= t.length) {
                return -1;
            }
            loadWindow(t, from, WINDOW);
        }
        i = t.buf.indexOf(s, from - t.at);
        if (i >= 0) {
            return t.at + i;
        }
        if (t.at + t.buf.length >= t.length) {
            return -1;
        }
        from = Math.max(from + 1, t.at + t.buf.length - s.length + 1);
    }
}

// windowLastIndexOf is String's lastIndexOf over an index read by
// windows.
function windowLastIndexOf(s, from) {
    var t = this, i;
    for (;;) {
        if (from < t.at || from + s.length > t.at + t.buf.length) {
            loadWindow(t, Math.max(0, from + s.length - WINDOW), WINDOW);
        }
        i = t.buf.lastIndexOf(s, from - t.at);
        if (i >= 0) {
            return t.at + i;
        }
        if (t.at == 0) {
            return -1;
        }
        from = t.at - 1;
    }
}

// windowString returns bytes s..e of an index read by windows.
function windowString(enc, s, e) {
    var t = this;
    e = Math.min(e, t.length);
    if (s < t.at || e > t.at + t.buf.length) {
        loadWindow(t, s, Math.max(WINDOW, e - s));
    }
    return t.buf.toString(enc, s - t.at, e - t.at);
}

// planFrom returns the plan of answer a from its collection's index in
// the build at root: its root, then the leaves plan names, read whole
// (or by windows: openIndex) and each checked by parts. Null when the
// main listing has no index; the plan without parts (p) when a leaf is
// gone (a build replaced the folder's since the root was read); it
// throws for an index it cannot read as one. A leaf may be a symbolic
// link, as the root may (refusing one would cost an lstat a folder and
// file): it only names chunks, each refused when it is a link, of
// another size, or cut elsewhere than between articles (readParts).
function planFrom(fs, root, a) {
    var t = openIndex(fs, root + indexPath(a)), pl, ts = [], zs = [], i;
    if (t == null && a.q.p.length == 0) {
        return null;
    }
    try {
        pl = plan(a, t);
    } finally {
        closeIndex(fs, t);
    }
    if (pl.b != null) {
        return pl;
    }
    try {
        for (i = 0; i < pl.f.length; i++) {
            t = openIndex(fs, root + pl.f[i][0], pl.f[i][2]);
            if (t == null) {
                return pl;
            }
            ts.push(t);
            zs.push(t.length);
        }
        return parts(pl, ts, zs);
    } finally {
        for (i = 0; i < ts.length; i++) {
            closeIndex(fs, ts[i]);
        }
    }
}

// readParts returns the body of plan pl: its head, then each part read
// from its chunk at its offset, a comma between two, and the tail; null
// when a chunk is gone (a build deleted it since the index was read). A
// chunk that is not the file its index names is refused (it throws): a
// symbolic link or in a folder that is one, not a regular file, a file
// of other names too (a hard link: to a file outside the build, whose
// path tells nothing), another size than the index says, or bytes at a
// part's ends that are not an article's (partOK). Nothing of it is
// answered.
function readParts(fs, root, pl) {
    var head = Buffer.from(pl.h), buf = Buffer.allocUnsafe(head.length + pl.n), at = head.copy(buf, 0), dirs = {}, fd, pt, st, n;
    for (var i = 0; i < pl.p.length; i++) {
        pt = pl.p[i];
        if (i > 0) {
            buf[at++] = 44;
        }
        try {
            st = chunkStat(fs, root, pt[0], dirs);
            if (st.size != pt[3]) {
                throw new Error(pt[0] + ": " + st.size + " bytes, the index says " + pt[3] + DAMAGED);
            }
            fd = fs.openSync(root + pt[0], "r");
        } catch (e) {
            if (e.code == "ENOENT" || e.code == "ENOTDIR") {
                return null;
            }
            throw e;
        }
        try {
            // The part and a byte on each side, which partOK checks, read
            // over the byte before (the head's '[' or a comma, put back)
            // and the one after (a comma or the tail, written after).
            n = fs.readSync(fd, buf, at - 1, pt[2] - pt[1] + 2, pt[1] - 1);
        } finally {
            fs.closeSync(fd);
        }
        if (n != pt[2] - pt[1] + 2 || !partOK(buf.slice(at - 1, at + n - 1), pt[1], pt[2], pt[3])) {
            throw new Error(pt[0] + ": its articles are not where the index says" + DAMAGED);
        }
        buf[at - 1] = i > 0 ? 44 : 91;
        at += n - 2;
    }
    buf[at++] = 93;
    buf[at] = 125;
    return buf;
}

// LINKED ends the message of a chunk refused for a link.
var LINKED = ": refused: a chunk is the file feedgen build wrote, not a symbolic link (copy the build's folder, do not link to it)";

// chunkStat returns the lstat of the chunk at path p of the build at
// root (articles/chunks/<2 hex>/<64 hex>.json), having checked that it
// and its folders are no symbolic links (the two folders once a request,
// in dirs) and that it is a regular file. A hard link is not refused: it
// is the file it names (a deploy made with cp -al or rsync --link-dest
// has them), and one to another file is caught by its size and its cuts.
function chunkStat(fs, root, p, dirs) {
    var d = [p.slice(0, 15), p.slice(0, 18)], st;
    for (var i = 0; i < d.length; i++) {
        if (!dirs[d[i]]) {
            if (!fs.lstatSync(root + d[i]).isDirectory()) {
                throw new Error(d[i] + ": not a folder (a symbolic link?)" + LINKED);
            }
            dirs[d[i]] = 1;
        }
    }
    st = fs.lstatSync(root + p);
    if (!st.isFile()) {
        throw new Error(p + ": " + (st.isSymbolicLink() ? "a symbolic link" : "not a regular file") + LINKED);
    }
    return st;
}

// isFile reports whether there is a regular file at path.
function isFile(path) {
    try {
        return require("fs").statSync(path).isFile();
    } catch (e) {
        return false;
    }
}

// openRegular opens the file at path for reading, refusing one that is
// not a regular file (thrown: the page is unavailable), as feedgen serve
// does. njs opens files blocking, in the worker that serves every other
// request, and cannot ask for O_NONBLOCK: a named pipe put in place of a
// root or leaf would hold the worker until a writer came (a chunk is
// refused by chunkStat). The type is read just before the open: a pipe
// put there between the two is not seen.
function openRegular(fs, path) {
    if (!fs.statSync(path).isFile()) {
        throw new Error(path + " is not a regular file: remove it and run feedgen build");
    }
    return fs.openSync(path, "r");
}

export default {handle: handle};
