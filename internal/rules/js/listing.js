// listing.js: the listing's contract (docs/contract.md §1, §5, §7) for the JavaScript
// targets, one source embedded by feedgen rules after the data it
// generates (F) and before each platform's adapter. It answers a request
// exactly as feedgen serve does: answer(method, path, rawQuery) returns
// {s: status, b: body, f: page file, l: listing headers, h: location}.
//
// Written for the oldest dialect it meets (njs 0.7.9, Debian bookworm's):
// var and function only; values are handled as arrays of UTF-8 bytes. So
// that the CloudFront target can make it small (compact and minify in
// js.go), comments are whole lines, every statement ends with ';' and
// there is no regular expression literal.
//
// F, from feedgen: x 1 for a build of layout: chunks (whose pages
// assemble.js puts together: then l, a and c are empty), b the
// JSON-escaped link prefix (base URL and /articles/?), d the default limit, m max_limit, l the limits, a aligned
// offsets, k the kinds of filtered collection pre-rendered, c the
// collections' counts by kind and values, the last filter's first (a
// leaf [count, dir] when the folder is not the plain encoding), n the zeros of
// the Unicode decimal digits (each the difference from the one before, in
// base 36), nf and op and mna the bodies, ct, allow and vary the headers,
// ft the Content-Type of each reader feed the build has by its path (none
// without feeds; 1 for CloudFront, whose origin sends it), ua and ra the
// 503 and its Retry-After.
// The value of FILTERS below is written by feedgen rules: the query
// parameters of the filters (listing.FilterKeys, from the table of filter
// kinds).
//
// nginx's njs runs this top level again for every request: it does only
// what each request needs (ZEROS is made when a digit past ASCII is met).
var ZEROS = null, HEX = "0123456789ABCDEF", chr = String.fromCharCode;
var FILTERS = FILTER_KEYS;

// own returns the property k of object o, null when o has none of its own.
function own(o, k) {
    return o != null && Object.prototype.hasOwnProperty.call(o, k) ? o[k] : null;
}

// utf8 returns the bytes of s: a character below 0x80 is a byte, any other
// is written in UTF-8 (a lone surrogate as U+FFFD).
function utf8(s) {
    var b = [];
    for (var i = 0; i < s.length; i++) {
        var c = s.charCodeAt(i);
        if (c < 0x80) {
            b.push(c);
            continue;
        }
        if (c >= 0xd800 && c < 0xdc00 && i + 1 < s.length) {
            var d = s.charCodeAt(i + 1);
            if (d >= 0xdc00 && d < 0xe000) {
                c = 0x10000 + (c - 0xd800) * 1024 + d - 0xdc00;
                i++;
            }
        }
        if (c >= 0xd800 && c < 0xe000) {
            c = 0xfffd;
        }
        if (c < 0x800) {
            b.push(0xc0 | c >> 6, 0x80 | c & 63);
        } else if (c < 0x10000) {
            b.push(0xe0 | c >> 12, 0x80 | c >> 6 & 63, 0x80 | c & 63);
        } else {
            b.push(0xf0 | c >> 18, 0x80 | c >> 12 & 63, 0x80 | c >> 6 & 63, 0x80 | c & 63);
        }
    }
    return b;
}

// seq returns the length of the well-formed UTF-8 sequence at b[i], or
// minus the length of the maximal subpart of the ill-formed one there: its
// lead byte and the continuation bytes a well-formed sequence could have
// after it (1 for a byte that starts none), as Go's listing.ValidUTF8.
function seq(b, i) {
    var c = b[i], n = 0, lo = 0x80, hi = 0xbf, j = 1;
    if (c < 0x80) {
        return 1;
    }
    if (c >= 0xc2 && c <= 0xdf) {
        n = 2;
    } else if (c >= 0xe0 && c <= 0xef) {
        n = 3;
        lo = c == 0xe0 ? 0xa0 : lo;
        hi = c == 0xed ? 0x9f : hi;
    } else if (c >= 0xf0 && c <= 0xf4) {
        n = 4;
        lo = c == 0xf0 ? 0x90 : lo;
        hi = c == 0xf4 ? 0x8f : hi;
    }
    for (; j < n && b[i + j] >= lo && b[i + j] <= hi; j++) {
        lo = 0x80;
        hi = 0xbf;
    }
    return j == n ? n : -j;
}

// valid returns b with each maximal subpart of an ill-formed sequence
// replaced by U+FFFD, as listing.ValidUTF8 (and the original's Python).
function valid(b) {
    var out = [];
    for (var i = 0; i < b.length;) {
        var n = seq(b, i);
        if (n < 0) {
            out.push(0xef, 0xbf, 0xbd);
            i -= n;
            continue;
        }
        for (var j = 0; j < n; j++) {
            out.push(b[i + j]);
        }
        i += n;
    }
    return out;
}

function hexValue(c) {
    if (c >= 48 && c <= 57) {
        return c - 48;
    }
    c |= 32;
    return c >= 97 && c <= 102 ? c - 87 : -1;
}

function hex2(c, digits) {
    return digits.charAt(c >> 4) + digits.charAt(c & 15);
}

// unquote percent-decodes s with '+' as a space, as a form is decoded;
// a malformed escape is kept as it is. It returns valid UTF-8 bytes.
function unquote(s) {
    var b = utf8(s), out = [];
    for (var i = 0; i < b.length; i++) {
        var c = b[i];
        if (c == 43) {
            out.push(32);
        } else if (c == 37 && i + 2 < b.length && hexValue(b[i + 1]) >= 0 && hexValue(b[i + 2]) >= 0) {
            out.push(hexValue(b[i + 1]) * 16 + hexValue(b[i + 2]));
            i += 2;
        } else {
            out.push(c);
        }
    }
    return valid(out);
}

// text returns the string of valid UTF-8 bytes b.
function text(b) {
    var s = "";
    for (var i = 0; i < b.length; i++) {
        s += "%" + hex2(b[i], HEX);
    }
    return decodeURIComponent(s);
}

function isSpace(c) {
    return c >= 9 && c <= 13 || c == 32 || c == 0x85 || c == 0xa0 || c == 0x1680 ||
        c >= 0x2000 && c <= 0x200a || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000;
}

function digitValue(c) {
    if (c >= 48 && c <= 57) {
        return c - 48;
    }
    if (!ZEROS && c >= 128) {
        ZEROS = F.n.split(",");
        for (var z = 0, i = 0; i < ZEROS.length; i++) {
            ZEROS[i] = z += parseInt(ZEROS[i], 36);
        }
    }
    for (i = 0; c >= 128 && i < ZEROS.length; i++) {
        if (c >= ZEROS[i] && c < ZEROS[i] + 10) {
            return c - ZEROS[i];
        }
    }
    return -1;
}

// toInt reads valid UTF-8 bytes b as Python's int() reads a string: white
// space around, a sign, decimal digits of any script with single '_'
// between digits. It returns the value as a canonical decimal ("-" before
// a negative one), or null.
function toInt(b) {
    var r = [];
    for (var i = 0; i < b.length;) {
        var n = seq(b, i), c = b[i] & (n == 1 ? 0x7f : n == 2 ? 0x1f : n == 3 ? 0x0f : 0x07);
        for (var j = 1; j < n; j++) {
            c = c * 64 + (b[i + j] & 63);
        }
        r.push(c);
        i += n;
    }
    var s = 0, e = r.length, neg = false, d = "", prev = false;
    while (s < e && isSpace(r[s])) {
        s++;
    }
    while (e > s && isSpace(r[e - 1])) {
        e--;
    }
    if (s < e && (r[s] == 43 || r[s] == 45)) {
        neg = r[s] == 45;
        s++;
    }
    for (; s < e; s++) {
        if (r[s] == 95) {
            if (!prev) {
                return null;
            }
            prev = false;
            continue;
        }
        var v = digitValue(r[s]);
        if (v < 0) {
            return null;
        }
        if (d != "" || v != 0) {
            d += v;
        }
        prev = true;
    }
    if (!prev) {
        return null;
    }
    return d == "" ? "0" : neg ? "-" + d : d;
}

// num reads raw value v (null: none) as toInt reads it; a canonical
// decimal of up to 15 digits, the usual case, as it is (njs would run
// every step of toInt per request).
function num(v) {
    var d = parseInt(v, 10);
    return v == null ? null : v.length < 16 && "" + d == v && d == d ? v : toInt(unquote(v));
}

// parse reads a raw query string as the original service did: pairs
// split on '&', the last value of a parameter wins, an empty filter value
// is no filter. It returns {l: limit, o: offset (a canonical decimal), p:
// the filters, [key, value bytes], sorted by key}.
function parse(raw) {
    var limit = null, offset = null, f = {}, pairs = raw.split("&");
    for (var i = 0; i < pairs.length; i++) {
        var p = pairs[i], j = p.indexOf("=");
        if (p == "") {
            continue;
        }
        var k = j < 0 ? p : p.slice(0, j), v = j < 0 ? "" : p.slice(j + 1);
        if (k.indexOf("%") >= 0 || k.indexOf("+") >= 0) {
            k = text(unquote(k));
        }
        if (k == "limit") {
            limit = v;
        } else if (k == "offset") {
            offset = v;
        } else if (FILTERS.indexOf(k) >= 0) {
            f[k] = v;
        }
    }
    var q = {l: F.d, o: "0", p: []}, n;
    for (i = 0; i < FILTERS.length; i++) {
        if (f[FILTERS[i]]) {
            q.p.push([FILTERS[i], unquote(f[FILTERS[i]])]);
        }
    }
    n = num(limit);
    if (n != null && n != "0" && n.charAt(0) != "-") {
        q.l = n.length > 15 || +n >= F.m ? F.m : +n;
    }
    n = num(offset);
    if (n != null && n.charAt(0) != "-") {
        q.o = n;
    }
    return q;
}

// formEscape writes bytes b as an HTML form encodes them, as Go's
// url.QueryEscape.
function formEscape(b) {
    var s = "";
    for (var i = 0; i < b.length; i++) {
        var c = b[i];
        if (c >= 97 && c <= 122 || c >= 65 && c <= 90 || c >= 48 && c <= 57 || c == 45 || c == 46 || c == 95 || c == 126) {
            s += chr(c);
        } else {
            s += c == 32 ? "+" : "%" + hex2(c, HEX);
        }
    }
    return s;
}

// link returns the JSON string of the link to the page (q.l, offset) of
// q's collection; offset "" is left out. A filter's escaped value is kept
// in its parameter for the next link (limit and offset are digits).
function link(q, offset) {
    var all = q.p.slice(), s = [];
    all.push(["limit", 0, "" + q.l]);
    if (offset != "") {
        all.push(["offset", 0, offset]);
    }
    all.sort(function (x, y) {
        return x[0] < y[0] ? -1 : 1;
    });
    for (var i = 0; i < all.length; i++) {
        s.push(all[i][0] + "=" + (all[i][2] = all[i][2] || formEscape(all[i][1])));
    }
    return "\"" + F.b + s.join("&") + "\"";
}

// subtract returns the decimal o - n, for a decimal o greater than n.
function subtract(o, n) {
    if (o.length <= 15) {
        return "" + (+o - n);
    }
    var d = o.split("");
    for (var i = d.length - 1; i >= 0 && n > 0; i--) {
        var v = +d[i] - n % 10;
        n = Math.floor(n / 10);
        if (v < 0) {
            v += 10;
            n++;
        }
        d[i] = "" + v;
    }
    o = d.join("");
    while (o.length > 1 && o.charAt(0) == "0") {
        o = o.slice(1);
    }
    return o;
}

// emptyPage returns the page past the end of a collection of count
// articles: no results, no next, previous by the rules of docs/contract.md §1.
function emptyPage(q, count) {
    var o = q.o, prev = "null";
    if (o != "0") {
        prev = o.length <= 15 && +o <= q.l ? link(q, "") : link(q, subtract(o, q.l));
    }
    return "{\"count\":" + count + ",\"next\":null,\"previous\":" + prev + ",\"results\":[]}";
}

// folder returns the name of the folder of filter value b: a-z, 0-9 and
// '-' kept, any other byte '_' and two lowercase hex digits.
function folder(b) {
    var s = "";
    for (var i = 0; i < b.length; i++) {
        var c = b[i];
        s += c >= 97 && c <= 122 || c >= 48 && c <= 57 || c == 45 ? chr(c) : "_" + hex2(c, HEX).toLowerCase();
    }
    return s;
}

// decodePath returns the percent-decoded path as a string of bytes, or ""
// for a malformed escape.
function decodePath(p) {
    var b = utf8(p), s = "";
    for (var i = 0; i < b.length; i++) {
        if (b[i] == 37) {
            if (i + 2 >= b.length || hexValue(b[i + 1]) < 0 || hexValue(b[i + 2]) < 0) {
                return "";
            }
            b[i + 2] = hexValue(b[i + 1]) * 16 + hexValue(b[i + 2]);
            i += 2;
        }
        s += chr(b[i]);
    }
    return s;
}

// escapeQuery percent-encodes the bytes of a raw query that may not stay
// as they are in a Location, as feedgen serve does.
function escapeQuery(raw) {
    var b = utf8(raw), s = "";
    for (var i = 0; i < b.length; i++) {
        var c = b[i];
        if (c >= 97 && c <= 122 || c >= 65 && c <= 90 || c >= 48 && c <= 57 || "-._~/#%[]=:;$&()+,!?*@'".indexOf(chr(c)) >= 0) {
            s += chr(c);
        } else {
            s += "%" + hex2(c, HEX);
        }
    }
    return s;
}

// answer decides the answer to a request for path (decoded) with the raw
// query, as feedgen serve's decide does. In a build of layout: chunks, a
// page is {s: 200, c: the collection's folder, q: the query, l: 1}, which
// assemble.js's plan turns into the page with the collection's index. A
// reader feed is {s: 200, f: its file, t: its Content-Type, l: 1}: the
// feed file of the collection the filters select (limit and offset are
// not read), which the adapter answers with the JSON 404 when the build
// has none (a build of layout: chunks, whose collections F does not
// list).
function answer(method, path, raw) {
    var t = own(F.ft, path);
    if (path != "/articles/" && t == null) {
        if (path == "/articles") {
            return {s: 301, h: raw == "" ? "/articles/" : "/articles/?" + escapeQuery(raw)};
        }
        return {s: 404, b: F.nf};
    }
    if (method == "OPTIONS") {
        return {s: 200, b: F.op, l: 1};
    }
    if (method != "GET" && method != "HEAD") {
        return {s: 405, b: F.mna[0] + method + F.mna[1], l: 1};
    }
    var q = parse(raw), dir = "articles", kind = [], node, count = 0, off;
    for (var i = 0; i < q.p.length; i++) {
        kind.push(q.p[i][0]);
    }
    node = own(F.c, kind.join("&"));
    if (kind.length > 0 && !own(F.k, kind.join("&")) || t == null && F.l.indexOf(q.l) < 0) {
        return {s: 404, b: F.nf, l: 1};
    }
    if (F.x) {
        return chunked(q, t, path);
    }
    for (i = 0; i < q.p.length; i++) {
        dir += "/" + q.p[i][0] + "/" + folder(q.p[i][1]);
    }
    for (i = q.p.length - 1; i >= 0; i--) {
        node = own(node, text(q.p[i][1]));
    }
    if (node != null) {
        count = typeof node == "number" ? node : node[0];
        dir = typeof node == "number" ? dir : node[1];
    }
    if (t != null) {
        return count > 0 ? {s: 200, f: dir + path.slice(9), t: t, l: 1} : {s: 404, b: F.nf, l: 1};
    }
    off = q.o.length > 15 ? Infinity : +q.o;
    if (node != null && (off < count || off == 0)) {
        if (F.a && off % q.l != 0) {
            return {s: 404, b: F.nf, l: 1};
        }
        return {s: 200, f: dir + "/" + q.l + "/" + q.o + ".json", l: 1};
    }
    return {s: 200, b: emptyPage(q, count), l: 1};
}
