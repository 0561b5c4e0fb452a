// The CloudFront Functions adapter (cloudfront-js-2.0, viewer request): a
// page is the request, its URI rewritten to the page's key in the bucket;
// any other answer is a response made here.
function handler(event) {
    var r = event.request, qs = r.querystring, raw = [];
    for (var k in qs) {
        var vs = qs[k].multiValue || [qs[k]];
        for (var i = 0; i < vs.length; i++) {
            raw.push(k + "=" + vs[i].value);
        }
    }
    var a = answer(r.method, decodePath(r.uri), raw.join("&"));
    if (a.f) {
        r.uri = "/" + a.f;
        r.querystring = {};
        return r;
    }
    if (a.s == 301) {
        return {statusCode: 301, statusDescription: "Moved Permanently", headers: {location: {value: a.h}}};
    }
    var h = {"content-type": {value: F.ct}};
    if (a.l) {
        h.allow = {value: F.allow};
        h.vary = {value: F.vary};
    }
    return {statusCode: a.s, headers: h, body: {encoding: "text", data: a.b}};
}
