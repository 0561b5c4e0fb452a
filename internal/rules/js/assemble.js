// assemble.js: the pages of a build of layout: chunks (docs/contract.md
// §12), put together per request from the collection's index and byte
// ranges of its chunks, byte for byte as feedgen serve puts them
// together. It follows listing.js (answer gives {s: 200, c: folder, q:
// query}) and comes before each platform's adapter, which reads the
// index and the ranges its own way (a file, a fetch with Range, a bucket)
// and makes the entity tag from tagInput with its SHA-256.
//
// An index is a tree (chunk.AppendRoot, chunk.AppendLeaf): a root, the
// collection's count and one line a leaf, {"first":N,"path":...,
// "size":...,"count":...}, and leaves, each one line a chunk,
// {"first":N,"path":...,"size":...,"ends":[...]}, its positions counted
// from the leaf's first article; lines ascend by first in both. plan
// bisects the root for the leaves of the page's articles, parts each
// leaf for its chunks' lines, and both parse only the lines the page
// needs: nginx's njs cannot keep an index parsed between requests. Same
// dialect as listing.js.
var INDEX_NAME = "chunks.json", INDEX_FORMAT = 3, INDEX_HEAD = "{\"format\":" + INDEX_FORMAT + ",\"count\":";

// Any limit is answered (parse clamps it to max_limit): the check of
// answer for the limits pre-rendered passes for every one, at no cost
// (njs makes the top level again for each request: no list of them).
F.l = {indexOf: function () {
    return 0;
}};

// chunked returns the answer to query q (any limit, 1..max_limit) in a
// build of layout: chunks: a page, {s: 200, c: its collection's folder,
// q, l: 1}, whose count its index says; or, for the reader feed at path
// (t its Content-Type), {s: 200, f: the collection's feed file, t, l: 1},
// which the build has when the collection has articles.
function chunked(q, t, path) {
    var dir = "articles";
    for (var i = 0; i < q.p.length; i++) {
        dir += "/" + q.p[i][0] + "/" + valueFolder(q.p[i][1]);
    }
    return t != null ? {s: 200, f: dir + path.slice(9), t: t, l: 1} : {s: 200, c: dir, q: q, l: 1};
}

// valueFolder returns the folder of filter value b (valid UTF-8 bytes)
// as listing.EncodeValue names it: folder's bytes, a Windows device
// name's last byte escaped, and a name longer than 200 bytes as "_h" and
// the SHA-256 of the value.
function valueFolder(b) {
    var n = 0, s = folder(b), d;
    for (var i = 0; i < b.length; i++) {
        d = b[i];
        n += d >= 97 && d <= 122 || d >= 48 && d <= 57 || d == 45 ? 1 : 3;
    }
    if (n > 200) {
        return "_h" + sha256(b);
    }
    if (n == b.length && (s == "con" || s == "prn" || s == "aux" || s == "nul" ||
        s.length == 4 && (s.slice(0, 3) == "com" || s.slice(0, 3) == "lpt") && s.charCodeAt(3) >= 48 && s.charCodeAt(3) <= 57)) {
        return s.slice(0, s.length - 1) + "_" + hex2(s.charCodeAt(s.length - 1), HEX).toLowerCase();
    }
    return s;
}


// sha256 returns the SHA-256 of bytes b in lowercase hex: for the folder
// of a long filter value, where no platform's hash can be called
// synchronously (the entity tag's is the adapter's own).
function sha256(b) {
    var K256 = [0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
        0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
        0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
        0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
        0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
        0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
        0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
        0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2];
    var h = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
    var m = b.slice(), bits = b.length * 8, w = [], i, j, x, y, s = "";
    m.push(0x80);
    while (m.length % 64 != 56) {
        m.push(0);
    }
    m.push(0, 0, 0, 0, bits >>> 24 & 255, bits >>> 16 & 255, bits >>> 8 & 255, bits & 255);
    for (i = 0; i < m.length; i += 64) {
        for (j = 0; j < 64; j++) {
            if (j < 16) {
                w[j] = m[i + 4 * j] << 24 | m[i + 4 * j + 1] << 16 | m[i + 4 * j + 2] << 8 | m[i + 4 * j + 3];
            } else {
                x = w[j - 15];
                y = w[j - 2];
                w[j] = ((x >>> 7 | x << 25) ^ (x >>> 18 | x << 14) ^ x >>> 3) +
                    ((y >>> 17 | y << 15) ^ (y >>> 19 | y << 13) ^ y >>> 10) + w[j - 7] + w[j - 16] | 0;
            }
        }
        var a = h[0], c1 = h[1], c2 = h[2], c3 = h[3], e = h[4], f = h[5], g = h[6], k = h[7];
        for (j = 0; j < 64; j++) {
            x = k + ((e >>> 6 | e << 26) ^ (e >>> 11 | e << 21) ^ (e >>> 25 | e << 7)) + (e & f ^ ~e & g) + K256[j] + w[j] | 0;
            y = ((a >>> 2 | a << 30) ^ (a >>> 13 | a << 19) ^ (a >>> 22 | a << 10)) + (a & c1 ^ a & c2 ^ c1 & c2) | 0;
            k = g;
            g = f;
            f = e;
            e = c3 + x | 0;
            c3 = c2;
            c2 = c1;
            c1 = a;
            a = x + y | 0;
        }
        var v = [a, c1, c2, c3, e, f, g, k];
        for (j = 0; j < 8; j++) {
            h[j] = h[j] + v[j] | 0;
        }
    }
    for (j = 0; j < 8; j++) {
        s += ("0000000" + (h[j] >>> 0).toString(16)).slice(-8);
    }
    return s;
}

// indexPath returns the path of the index of answer a's collection,
// relative to the build's folder.
function indexPath(a) {
    return a.c + "/" + INDEX_NAME;
}

// cut returns bytes s..e of index t as a string: t is the index's text,
// or its bytes (an njs Buffer, which need not be decoded whole).
function cut(t, s, e) {
    return typeof t == "string" ? t.slice(s, e) : t.toString("utf8", s, e);
}

// countOf returns the count the head of root t says,
// {"format":3,"count":N,"leaves":[ as chunk.AppendRoot writes it; -1
// when t is not a root of this format (an older or newer feedgen's
// build, or another file). No regular expression: njs would make it
// again for every request.
function countOf(t) {
    var h = cut(t, 0, 48), p = INDEX_HEAD.length, n = parseInt(h.slice(p, p + 16), 10), d = "" + n;
    return h.slice(0, p) == INDEX_HEAD && n >= 0 && h.slice(p + d.length, p + d.length + 11) == ",\"leaves\":[" ? n : -1;
}

// firstAt returns the first article of the index line that starts at p.
function firstAt(t, p) {
    return parseInt(cut(t, p + 9, p + 29), 10);
}

// lineOf returns where the line of root or leaf t that holds article off
// (0 <= off < count, counted as t counts them) starts: the last line
// whose first is at most off. It guesses where by interpolation (lines
// hold about as many articles), every other step by halves, and looks
// back from the guess for a line's start: a few steps, and at worst
// about twice as many as bisection alone takes.
function lineOf(t, off, count) {
    var lo = t.indexOf("\n{") + 1, loF = 0, hi = t.length, hiF = count, next, mid, p, f, step = 0;
    for (;;) {
        next = t.indexOf("\n{", lo);
        if (next < 0 || next >= hi || (f = firstAt(t, next + 1)) > off) {
            return lo;
        }
        lo = next + 1;
        loF = f;
        mid = step++ % 2 == 0 ? lo + Math.floor((off - loF) * (hi - lo) / (hiF - loF)) : lo + Math.floor((hi - lo) / 2);
        p = t.lastIndexOf("\n{", Math.min(mid, hi - 1));
        if (mid <= lo || p < lo) {
            continue;
        }
        if ((f = firstAt(t, p + 1)) <= off) {
            lo = p + 1;
            loF = f;
        } else {
            hi = p;
            hiF = f;
        }
    }
}

// UNREADABLE ends the message of an index that is not one of this
// format, or not as feedgen build writes one (the adapters log it, and
// answer 503).
var UNREADABLE = ": refused: not a chunk index of format " + INDEX_FORMAT + " as feedgen build writes one (written by another version of feedgen, or changed after the build): rebuild the output (feedgen build); 503 for its pages until then";

// plan returns what the page of answer a is made of, from its
// collection's root t (see cut; null when the collection has none: no
// article has its filter value): {b: the body} past the end, else {h:
// the head, o: the page's first article, e: its last, f: the leaves
// that hold them [leaf path, first, size, count]}, which parts completes
// from those leaves' text. It throws for a root it cannot read: another
// format (the build is newer or older than this script), a path that is
// not a leaf's, lines that do not follow each other.
function plan(a, t) {
    var q = a.q, count = 0, off = q.o.length > 15 ? Infinity : +q.o, p;
    if (t != null && (count = countOf(t)) < 0) {
        throw new Error(indexPath(a) + UNREADABLE);
    }
    if (!(off < count)) {
        return {b: emptyPage(q, count)};
    }
    var head = "{\"count\":" + count + ",\"next\":" + (off + q.l < count ? link(q, "" + (off + q.l)) : "null") +
        ",\"previous\":" + (off == 0 ? "null" : off <= q.l ? link(q, "") : link(q, "" + (off - q.l))) + ",\"results\":[";
    var last = Math.min(off + q.l, count) - 1, leaves = [];
    p = lineOf(t, off, count);
    for (var i = off; i <= last;) {
        var e = t.indexOf("}", p) + 1, r = JSON.parse(cut(t, p, e));
        if ((leaves.length == 0 ? !(r.first <= i) : r.first !== i) || !leafPath(r.path) || !(r.count >= 1) || !(r.size >= 1)) {
            throw new Error(indexPath(a) + ": line " + JSON.stringify(cut(t, p, e)) + UNREADABLE);
        }
        leaves.push([r.path, r.first, r.size, r.count]);
        i = r.first + r.count;
        p = t.indexOf("\n{", e) + 1;
        if (p == 0 && i <= last) {
            throw new Error(indexPath(a) + ": its leaves hold fewer articles than its count" + UNREADABLE);
        }
    }
    return {h: head, o: off, e: last, f: leaves};
}

// parts completes plan pl from the text of its leaves (ts[k] is that of
// pl.f[k], see cut; zs[k] its size in bytes, or the bytes read of it):
// {p: the parts [chunk path, start, end, the chunk's size], n: the
// length in bytes of all but the head, t: the tail of the entity tag's
// input}. Positions in a leaf count from its first article: the root's
// first is added. A leaf that is not the one its root names (another
// size or count, another format) is refused, and so is a line that
// names no chunk: it throws, and nothing of the page is answered.
function parts(pl, ts, zs) {
    var ps = [], n = 2, tag = "", i = pl.o, f, t, head, o, last, p, e, r, j, start, end;
    for (var k = 0; k < pl.f.length; k++) {
        f = pl.f[k];
        t = ts[k];
        head = INDEX_HEAD + f[3] + ",\"chunks\":[";
        if (zs[k] !== f[2] || cut(t, 0, head.length) != head) {
            throw new Error(f[0] + ": " + (zs[k] !== f[2] ? "not the " + f[2] + " bytes the index says" : "not a leaf of " + f[3] + " articles of this format") + DAMAGED_LEAF);
        }
        o = i - f[1];
        last = Math.min(pl.e - f[1], f[3] - 1);
        p = lineOf(t, o, f[3]);
        while (o <= last) {
            e = t.indexOf("]}", p) + 2;
            r = JSON.parse(cut(t, p, e));
            j = Math.min(last, r.first + r.ends.length - 1);
            start = o == r.first ? 1 : r.ends[o - r.first - 1] + 1;
            end = r.ends[j - r.first];
            if (o < r.first || !(end > start) || !chunkPath(r.path) || !(r.size > end)) {
                throw new Error(f[0] + ": line " + JSON.stringify(cut(t, p, e)) + DAMAGED_LEAF);
            }
            ps.push([r.path, start, end, r.size]);
            n += end - start + (ps.length > 1 ? 1 : 0);
            tag += r.path.slice(-69, -5) + hex8(start) + hex8(end);
            o = j + 1;
            p = t.indexOf("\n{", e) + 1;
            if (p == 0 && o <= last) {
                throw new Error(f[0] + ": it holds fewer articles than its count" + DAMAGED_LEAF);
            }
        }
        i = f[1] + o;
    }
    pl.p = ps;
    pl.n = n;
    pl.t = tag;
    return pl;
}

// chunkPath reports whether p is a chunk's path as chunk.ChunkPath
// writes it: articles/chunks/<2 hex>/<64 lowercase hex, the same 2
// first>.json; leafPath whether it is a leaf's (chunk.LeafPath), the
// same but for .leaf.json. An index that names any other file, inside
// the build's folder or out of it, is not read. CHUNK is made at the
// first call (njs runs the top level again for every request).
var CHUNK = null;

function chunkPath(p) {
    CHUNK = CHUNK || new RegExp("^articles/chunks/[0-9a-f]{2}/[0-9a-f]{64}[.]json$");
    return typeof p == "string" && CHUNK.test(p) && p.slice(16, 18) == p.slice(19, 21);
}

function leafPath(p) {
    return typeof p == "string" && p.slice(-10) == ".leaf.json" && chunkPath(p.slice(0, -10) + ".json");
}

// DAMAGED ends the message of a chunk that is not the one its index
// names, DAMAGED_LEAF of a leaf (the adapters log it, and answer 503).
var DAMAGED = ": refused: not the chunk the build wrote (a build died, or the folder was changed after it): 503 for its pages until the next build";
var DAMAGED_LEAF = ": refused: not the leaf the build wrote (a build died, or the folder was changed after it): 503 for its pages until the next build";

// partOK reports whether bytes b, read from a chunk of size bytes at
// start-1 to end+1, hold articles from start to end as the chunk's are
// cut (chunk.CheckChunk): '[' (at 0) or ',' before the first's '{', and
// '}' then ',' or ']' (the chunk's last byte) after the last. A file that
// is not the chunk its index names (another size, or another's bytes)
// fails it: its bytes are never answered.
function partOK(b, start, end, size) {
    var n = end - start;
    return b.length == n + 2 && b[0] == (start == 1 ? 91 : 44) && b[1] == 123 && b[n] == 125 && b[n + 1] == (end + 1 == size ? 93 : 44);
}

// hex8 returns v as 8 hex digits: 4 bytes, big-endian.
function hex8(v) {
    return ("0000000" + v.toString(16)).slice(-8);
}

// The entity tag of a page is feedgen serve's: the SHA-256 of its head's
// bytes, then, for each part, its chunk's SHA-256 and its start and end
// as 4 bytes each (plan's t, in hex); past the end, of the body's bytes.

// tagMatches reports whether If-None-Match value list names tag (weakly
// compared) or is "*", as feedgen serve reads it: reading stops at the
// first element that is not an entity tag.
function tagMatches(list, tag) {
    for (var i = 0; ;) {
        while (i < list.length && (list.charAt(i) == " " || list.charAt(i) == "\t" || list.charAt(i) == ",")) {
            i++;
        }
        if (i == list.length) {
            return false;
        }
        if (list.charAt(i) == "*") {
            return true;
        }
        if (list.slice(i, i + 2) == "W/") {
            i += 2;
        }
        var end = list.indexOf("\"", i + 1);
        if (list.charAt(i) != "\"" || end < 0) {
            return false;
        }
        if (list.slice(i, end + 1) == tag) {
            return true;
        }
        i = end + 1;
    }
}
