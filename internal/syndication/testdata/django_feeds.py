"""Writes the RSS and Atom feeds of the cases on stdin with Django's
syndication framework (the Feed of SPEC §13), for TestDjango.

stdin: a JSON list of cases {"tz", "channel": {...}, "items": [...]}, an
item's "published" a naive local time "YYYY-MM-DDTHH:MM:SS". stdout: a
JSON list, per case {"rss": ..., "atom": ..., "rss_type", "atom_type",
"last_modified"}: the bodies and headers of the two responses.
"""
import datetime
import json
import re
import sys

import django
from django.conf import settings

settings.configure(
    DEBUG=False,
    ALLOWED_HOSTS=["*"],
    USE_TZ=False,
    TIME_ZONE="UTC",
    INSTALLED_APPS=[],
    ROOT_URLCONF=__name__,
)
django.setup()
urlpatterns = []

from django.contrib.syndication.views import Feed  # noqa: E402
from django.test import RequestFactory  # noqa: E402
from django.utils import feedgenerator, timezone  # noqa: E402

CONTROL = re.compile(r"[\x00-\x08\x0B-\x0C\x0E-\x1F]")


def clean(s):
    # SPEC §13: the characters XML 1.0 cannot hold are left out (Django
    # refuses them).
    return CONTROL.sub("", s)


def make_feed(case, feed_type):
    ch = case["channel"]

    class F(Feed):
        title = clean(ch["title"])
        link = ch["link"]
        description = clean(ch["description"])
        language = ch["language"]
        feed_url = ch["feed_url"]

        def items(self):
            return case["items"]

        def item_title(self, item):
            return clean(item["title"])

        def item_link(self, item):
            return item["link"]

        def item_description(self, item):
            return clean(item["description"])

        def item_pubdate(self, item):
            return datetime.datetime.strptime(item["published"], "%Y-%m-%dT%H:%M:%S")

        def item_author_name(self, item):
            return clean(item["author_name"])

        def item_author_link(self, item):
            return item["author_link"]

        def item_categories(self, item):
            return [clean(c) for c in item["categories"]]

    F.feed_type = feed_type
    return F()


def main():
    cases = json.load(sys.stdin)
    factory = RequestFactory()
    out = []
    for case in cases:
        settings.TIME_ZONE = case["tz"]
        timezone.get_default_timezone.cache_clear()
        res = {}
        for name, feed_type in (("rss", feedgenerator.Rss201rev2Feed), ("atom", feedgenerator.Atom1Feed)):
            resp = make_feed(case, feed_type)(factory.get("/articles/feed"))
            res[name] = resp.content.decode("utf-8")
            res[name + "_type"] = resp["Content-Type"]
            res["last_modified"] = resp["Last-Modified"]
        out.append(res)
    json.dump(out, sys.stdout)


main()
