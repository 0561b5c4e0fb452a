"""The RSS and Atom feeds of a build's collections as SPEC §13 describes
them, written with Django's syndication framework, for TestFeedsDjango:
an implementation of the feeds apart from feedgen's, from the listing's
JSON.

stdin: {"site_url", "base_url", "tz", "feeds": {"title", "description",
"language", "items"}, "collections": [{"params": [[key, value], ...],
"articles": [the listing's article objects, newest first]}]}.
stdout: per collection, {"rss": ..., "atom": ...}.
"""
import datetime
import json
import re
import sys
from urllib.parse import urlencode

import django
from django.conf import settings

settings.configure(DEBUG=False, ALLOWED_HOSTS=["*"], USE_TZ=False, TIME_ZONE="UTC",
                   INSTALLED_APPS=[], ROOT_URLCONF=__name__)
django.setup()
urlpatterns = []

from django.contrib.syndication.views import Feed  # noqa: E402
from django.test import RequestFactory  # noqa: E402
from django.utils import feedgenerator, timezone  # noqa: E402

CONTROL = re.compile(r"[\x00-\x08\x0B-\x0C\x0E-\x1F]")


def clean(s):
    return CONTROL.sub("", s)


def distinct(tags):
    out = []
    for t in tags:
        if t not in out:
            out.append(t)
    return out


def feed_of(site, coll, feed_type, file):
    fc = site["feeds"]
    params = dict(coll["params"] or [])
    arts = coll["articles"][: fc["items"]]
    first = arts[0]
    title, link = fc["title"], site["site_url"] + "/"
    if "category" in params:
        title, link = title + ": " + first["category"], first["category_url"]
    elif "section" in params:
        title, link = title + ": " + params["section"], site["site_url"] + "/" + params["section"] + "/"
    elif "tag" in params:
        title = title + ": " + params["tag"]
    elif "author" in params:
        title, link = title + ": " + first["author_name"], first["author_url"]
    feed_url = site["base_url"] + "/articles/" + file
    if params:
        feed_url += "?" + urlencode(sorted(params.items()))

    class F(Feed):
        description = clean(fc["description"])
        language = fc["language"]

        def items(self):
            return arts

        def item_title(self, a):
            return clean(a["title"])

        def item_link(self, a):
            return a["url"]

        def item_description(self, a):
            return clean(a["announcement"])

        def item_pubdate(self, a):
            return datetime.datetime.strptime(a["published"], "%Y-%m-%dT%H:%M:%S")

        def item_author_name(self, a):
            return clean(a["author_name"])

        def item_author_link(self, a):
            return a["author_url"]

        def item_categories(self, a):
            # The listing joins an article's tags with ", ".
            return [clean(t) for t in distinct(a["tags"].split(", ") if a["tags"] else [])]

    F.title = clean(title)
    F.link = link
    F.feed_url = feed_url
    F.feed_type = feed_type
    return F()


def main():
    site = json.load(sys.stdin)
    settings.TIME_ZONE = site["tz"]
    timezone.get_default_timezone.cache_clear()
    factory = RequestFactory()
    out = []
    for coll in site["collections"]:
        res = {}
        for name, feed_type, file in (("rss", feedgenerator.Rss201rev2Feed, "feed.rss"),
                                      ("atom", feedgenerator.Atom1Feed, "feed.atom")):
            resp = feed_of(site, coll, feed_type, file)(factory.get("/articles/" + file))
            res[name] = resp.content.decode("utf-8")
        out.append(res)
    json.dump(out, sys.stdout)


main()
