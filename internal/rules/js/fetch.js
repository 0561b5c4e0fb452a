// The adapter for platforms of the Fetch API (Cloudflare Workers, Netlify
// Edge Functions): respond answers request, reading a page with
// getPage(request for the page's path) and adding the listing's headers.
// In a build of layout: chunks, it puts the page together (assembled)
// from what store reads: an index's root and leaves whole, a chunk's
// range.
async function respond(request, getPage, store) {
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
    if (a.t) {
        return feed(request, a, h, store);
    }
    if (a.c) {
        return assembled(request, a, h, store);
    }
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

// feed answers the reader feed of answer a, its file read whole from
// store (the published build: the assets, or the R2 bucket) with the
// request's If-None-Match: its format's Content-Type, the file's entity
// tag and Last-Modified, or a 304. A feed the build does not have is the
// JSON 404; a store that fails, 503.
async function feed(request, a, h, store) {
    var o = null;
    try {
        o = await store(a.f, null, request.headers.get("If-None-Match"));
    } catch (e) {
        console.error("feedgen: " + e);
    }
    if (o != null && o.s == 404) {
        return new Response(F.nf, {status: 404, headers: h});
    }
    if (o == null || o.s != 200 && o.s != 304) {
        h.set("Retry-After", F.ra);
        return new Response(F.ua, {status: 503, headers: h});
    }
    h.set("Content-Type", a.t);
    if (o.e != null) {
        h.set("ETag", o.e);
    }
    if (o.l != null) {
        h.set("Last-Modified", o.l);
    }
    if (o.s == 304) {
        return new Response(null, {status: 304, headers: h});
    }
    h.set("Content-Length", "" + o.b.length);
    return new Response(request.method == "HEAD" ? null : o.b, {status: 200, headers: h});
}

// assembled answers the page of answer a: the collection's index, its
// root (kept between requests while its Cache-Control allows, then asked
// again with If-None-Match) and the leaves the page's articles are in
// (at once; kept, as they never change), then the parts' ranges, read at
// once. A leaf or chunk that is gone (the root was replaced and the
// previous build's files deleted since) makes it read the root again,
// once; then the page is unavailable. The entity tag is feedgen serve's.
async function assembled(request, a, h, store) {
    var pl = null, body = null, t, ls;
    try {
        for (var attempt = 0; attempt < 2 && body == null; attempt++) {
            t = await readIndex(store, indexPath(a), attempt > 0);
            if (t == null && a.q.p.length == 0) {
                break;
            }
            pl = plan(a, t);
            if (pl.b != null) {
                body = new TextEncoder().encode(pl.b);
                break;
            }
            ls = await Promise.all(pl.f.map(function (f) {
                return readLeaf(store, f[0]);
            }));
            if (ls.indexOf(null) >= 0) {
                continue;
            }
            parts(pl, ls.map(function (l) {
                return l.t;
            }), ls.map(function (l) {
                return l.z;
            }));
            body = await readParts(store, pl);
        }
    } catch (e) {
        // A store that failed, or an index that cannot be read as one:
        // 503, as feedgen serve, not the platform's error page.
        console.error("feedgen: " + e);
        body = null;
    }
    if (body == null) {
        h.set("Retry-After", F.ra);
        return new Response(F.ua, {status: 503, headers: h});
    }
    var hex = pl.t != null ? pl.t : "", head = pl.b != null ? body : body.subarray(0, body.length - pl.n);
    var in8 = new Uint8Array(head.length + hex.length / 2);
    in8.set(head, 0);
    for (var i = 0; i < hex.length / 2; i++) {
        in8[head.length + i] = parseInt(hex.substr(2 * i, 2), 16);
    }
    var sum = new Uint8Array(await crypto.subtle.digest("SHA-256", in8)), tag = "\"";
    for (i = 0; i < sum.length; i++) {
        tag += hex2(sum[i], HEX).toLowerCase();
    }
    h.set("ETag", tag + "\"");
    var inm = request.headers.get("If-None-Match");
    if (inm != null && tagMatches(inm, tag + "\"")) {
        return new Response(null, {status: 304, headers: h});
    }
    h.set("Content-Length", "" + body.length);
    return new Response(request.method == "HEAD" ? null : body, {status: 200, headers: h});
}

// kept holds the roots and leaves read, by path: {t: text, e: entity
// tag, x: the time until which it is used without asking (ms), z: a
// leaf's size}; keptBytes their size. Past KEPT_MAX bytes, all are
// forgotten.
var kept = new Map(), keptBytes = 0, KEPT_MAX = 32 << 20;

// keep keeps k, read at path, in place of what was kept there.
function keep(path, k) {
    forget(path);
    if (keptBytes + k.t.length > KEPT_MAX) {
        kept.clear();
        keptBytes = 0;
    }
    kept.set(path, k);
    keptBytes += k.t.length;
}

// forget forgets what is kept of path.
function forget(path) {
    var k = kept.get(path);
    if (k != null) {
        kept.delete(path);
        keptBytes -= k.t.length;
    }
}

// readIndex returns the text of the root at path, null when there is
// none; fresh asks the store even if the root kept is still fresh.
async function readIndex(store, path, fresh) {
    var k = kept.get(path), now = Date.now();
    if (k != null && !fresh && now < k.x) {
        return k.t;
    }
    var o = await store(path, null, k != null ? k.e : null);
    if (o.s == 304 && k != null) {
        k.x = now + o.m * 1000;
        return k.t;
    }
    if (o.s == 404) {
        forget(path);
        return null;
    }
    if (o.s != 200) {
        throw new Error("reading " + path + ": status " + o.s);
    }
    var t = new TextDecoder().decode(o.b);
    forget(path);
    if (o.e != null) {
        keep(path, {t: t, e: o.e, x: now + o.m * 1000});
    }
    return t;
}

// readLeaf returns the leaf at path (a leaf's path: plan checked it), {t:
// its text, z: its size in bytes}; null when there is none. A leaf is
// named by the SHA-256 of its bytes and never changes: one whose bytes
// are those it is named by is kept, and not asked for again; any other
// is refused (it throws).
async function readLeaf(store, path) {
    var k = kept.get(path);
    if (k != null) {
        return k;
    }
    var o = await store(path, null, null);
    if (o.s == 404) {
        return null;
    }
    if (o.s != 200) {
        throw new Error("reading " + path + ": status " + o.s);
    }
    var sum = new Uint8Array(await crypto.subtle.digest("SHA-256", o.b)), hex = "";
    for (var i = 0; i < sum.length; i++) {
        hex += hex2(sum[i], HEX);
    }
    if (hex.toLowerCase() != path.slice(-74, -10)) {
        throw new Error(path + ": its bytes are not those it is named by (their SHA-256)" + DAMAGED_LEAF);
    }
    k = {t: new TextDecoder().decode(o.b), z: o.b.length};
    keep(path, k);
    return k;
}

// readParts returns the body of plan pl: its head, each part's range
// (all asked for at once, with a byte on each side), a comma between two,
// and the tail; null when a chunk is gone or its range is not the length
// asked for. A chunk that is not the file its index names is refused (it
// throws): another size than the index says (a link to a file outside
// the build), or bytes at a part's ends that are not an article's
// (partOK). Nothing of it is answered. A store that does not say a
// chunk's size (an origin's Content-Range of bytes START-END/*, or none
// kept by a proxy) leaves the cuts alone to check it (sizeUnknown).
async function readParts(store, pl) {
    var got = await Promise.all(pl.p.map(function (pt) {
        return store(pt[0], [pt[1] - 1, pt[2] + 1], null);
    }));
    var head = new TextEncoder().encode(pl.h), out = new Uint8Array(head.length + pl.n), at = head.length, pt, b;
    out.set(head, 0);
    for (var i = 0; i < got.length; i++) {
        pt = pl.p[i];
        b = got[i].b;
        if (got[i].s != 200 || b.length != pt[2] - pt[1] + 2) {
            return null;
        }
        if (got[i].z == null) {
            sizeUnknown(pt[0]);
        } else if (got[i].z !== pt[3]) {
            throw new Error(pt[0] + ": " + got[i].z + " bytes, the index says " + pt[3] + DAMAGED);
        }
        if (!partOK(b, pt[1], pt[2], pt[3])) {
            throw new Error(pt[0] + ": its articles are not where the index says" + DAMAGED);
        }
        if (i > 0) {
            out[at++] = 44;
        }
        out.set(b.subarray(1, b.length - 1), at);
        at += b.length - 2;
    }
    out[at++] = 93;
    out[at] = 125;
    return out;
}

// unsized says whether sizeUnknown has said it.
var unsized = false;

// sizeUnknown says, once, that the store did not say the size of the
// chunk at path: its pages are then checked by their cuts alone.
function sizeUnknown(path) {
    if (!unsized) {
        unsized = true;
        console.warn("feedgen: the size of " + path + " is not known (its Content-Range is bytes START-END/* or missing): chunks are checked by where their articles end, not by their size; said once");
    }
}

// maxAge returns the seconds a response may be used for, by its
// Cache-Control: 0 without one, or with no-cache or no-store.
function maxAge(cc) {
    if (cc == null || cc.indexOf("no-cache") >= 0 || cc.indexOf("no-store") >= 0) {
        return 0;
    }
    var i = cc.indexOf("max-age=");
    return i < 0 ? 0 : parseInt(cc.slice(i + 8), 10) || 0;
}

// totalOf returns the size of the whole file of a Content-Range value
// (bytes START-END/SIZE); null when it does not say (bytes START-END/*,
// no value).
function totalOf(cr) {
    var i = cr == null ? -1 : cr.lastIndexOf("/"), s = i < 0 ? "" : cr.slice(i + 1).trim(), z = s == "" ? NaN : +s;
    return z >= 0 ? z : null;
}

// A store reads a file of the build: store(path, range [start, end) or
// null for all of it, entity tag for If-None-Match or null) gives {s:
// status (200, 304, 404), b: the bytes, z: the size of the whole file, e:
// its entity tag, l: its Last-Modified (null when unknown), m: the
// seconds it may be kept}.

// fetchStore returns a store that reads through get(request), a fetch of
// the build's files relative to base: a range with Range (a whole file
// answered instead is cut here), an index with If-None-Match.
function fetchStore(base, get) {
    return async function (path, range, etag) {
        var h = new Headers();
        if (range != null) {
            h.set("Range", "bytes=" + range[0] + "-" + (range[1] - 1));
        }
        if (etag != null) {
            h.set("If-None-Match", etag);
        }
        var res = await get(new Request(new URL("/" + path, base), {headers: h}));
        var o = {s: res.status, e: res.headers.get("ETag"), l: res.headers.get("Last-Modified"), m: maxAge(res.headers.get("Cache-Control"))};
        if (res.status == 200 || res.status == 206) {
            o.b = new Uint8Array(await res.arrayBuffer());
            o.z = res.status == 200 ? o.b.length : totalOf(res.headers.get("Content-Range"));
            if (range != null && res.status == 200) {
                o.b = o.b.subarray(range[0], range[1]);
            }
            o.s = 200;
        } else if (res.body != null) {
            await res.body.cancel();
        }
        return o;
    };
}

// bucketStore returns a store that reads an R2 bucket's objects (a build
// published there with feedgen publish): ranges and conditions as R2's
// get takes them.
function bucketStore(bucket) {
    return async function (path, range, etag) {
        var opt = {};
        if (range != null) {
            opt.range = {offset: range[0], length: range[1] - range[0]};
        }
        if (etag != null) {
            opt.onlyIf = new Headers({"If-None-Match": etag});
        }
        var obj = await bucket.get(path, opt);
        if (obj == null) {
            return {s: 404};
        }
        var o = {s: 304, e: obj.httpEtag, l: obj.uploaded != null ? obj.uploaded.toUTCString() : null,
            m: maxAge(obj.httpMetadata != null ? obj.httpMetadata.cacheControl : null), z: obj.size};
        if (obj.body != null) {
            o.b = new Uint8Array(await obj.arrayBuffer());
            o.s = 200;
        }
        return o;
    };
}
