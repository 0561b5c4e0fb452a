package syndication

import (
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/syndication/djangotest"
)

// djangoCase is one feed given to Django: testdata/django_feeds.py's input.
type djangoCase struct {
	TZ      string       `json:"tz"`
	Channel djangoChan   `json:"channel"`
	Items   []djangoItem `json:"items"`
}

type djangoChan struct {
	Title       string `json:"title"`
	Link        string `json:"link"`
	Description string `json:"description"`
	Language    string `json:"language"`
	FeedURL     string `json:"feed_url"`
}

type djangoItem struct {
	Title       string   `json:"title"`
	Link        string   `json:"link"`
	Description string   `json:"description"`
	Published   string   `json:"published"` // naive, local
	AuthorName  string   `json:"author_name"`
	AuthorLink  string   `json:"author_link"`
	Categories  []string `json:"categories"`
}

type djangoAnswer struct {
	RSS          string `json:"rss"`
	Atom         string `json:"atom"`
	RSSType      string `json:"rss_type"`
	AtomType     string `json:"atom_type"`
	LastModified string `json:"last_modified"`
}

// feedCases are the feeds both sides write: every escape of text and
// attributes, links Django's iri_to_uri changes, control characters,
// time zones east and west of UTC, across a change of daylight saving
// time, and with an offset in seconds (a local mean time).
func feedCases() []struct {
	tz string
	ch Channel
	it []Item
} {
	at := func(tz, wall string) time.Time {
		loc, err := time.LoadLocation(tz)
		if err != nil {
			panic(err)
		}
		t, err := time.ParseInLocation("2006-01-02T15:04:05", wall, loc)
		if err != nil {
			panic(err)
		}
		return t
	}
	ch := Channel{
		Title:       "Example News",
		Link:        "https://www.example.com/",
		Description: "The latest articles",
		Language:    "en-us",
		FeedURL:     "https://api.example.com/articles/feed.rss",
	}
	moscow := []Item{
		{Title: "Первая статья", Link: "https://www.example.com/news/politics/first/", Description: "Анонс & <b>жирный</b> > \"кавычки\" 'и' апостроф",
			Published: at("Europe/Moscow", "2024-11-04T01:52:33"), AuthorName: "Иван Петров", AuthorLink: "https://www.example.com/authors/ivan-petrov/",
			Image:      "https://media.example.com/img/big one.jpg?v=2&size=big",
			Categories: []string{"API", "Go & Rust", `"quoted"`, "it's", `both " and '`}},
		{Title: "Second <script>alert(1)</script>", Link: "https://www.example.com/news/politics/second page/?v=2&size=big",
			Description: "", Published: at("Europe/Moscow", "2024-11-05T10:00:00"), AuthorName: "", AuthorLink: ""},
		{Title: "Control\x01 char\x0b\x0c\x1f s\ttab\nnewline\rreturn", Link: "https://www.example.com/a/b/%20already/Ёж/",
			Description: "bell\x07 here", Published: at("Europe/Moscow", "2010-03-28T03:30:00"), AuthorName: "A\x02uthor", AuthorLink: "/authors/x y/",
			Categories: []string{"tab\there", "ctl\x03"}},
	}
	return []struct {
		tz string
		ch Channel
		it []Item
	}{
		{"Europe/Moscow", ch, moscow},
		{"UTC", Channel{Title: "Feed: tag <&>", Link: "https://www.example.com/", Description: "d & d", Language: "ru", FeedURL: "https://api.example.com/articles/feed.atom?tag=Go+%26+Rust"},
			[]Item{{Title: "t", Link: "https://www.example.com/x/", Description: "x", Published: at("UTC", "2024-01-01T00:00:00"), AuthorName: "n", AuthorLink: "https://n/", Categories: []string{"Go & Rust"}}}},
		{"America/New_York", Channel{Title: "NY", Link: "https://www.example.com/news/", Description: "west", Language: "en-us", FeedURL: "https://api.example.com/articles/feed.rss?section=news"},
			[]Item{
				{Title: "summer", Link: "https://www.example.com/news/a/s/", Description: "s", Published: at("America/New_York", "2024-07-01T12:00:00"), AuthorName: "n", AuthorLink: "https://n/"},
				{Title: "winter", Link: "https://www.example.com/news/a/w/", Description: "w", Published: at("America/New_York", "2024-12-01T12:00:00"), AuthorName: "n", AuthorLink: "https://n/"},
				{Title: "old", Link: "https://www.example.com/news/a/o/", Description: "o", Published: at("America/New_York", "1999-12-31T23:59:59"), AuthorName: "n", AuthorLink: "https://n/"},
			}},
		{"Asia/Kolkata", Channel{Title: "IN", Link: "https://www.example.com/", Description: "half hour", Language: "hi", FeedURL: "https://api.example.com/articles/feed.rss"},
			[]Item{{Title: "x", Link: "https://www.example.com/x/", Description: "x", Published: at("Asia/Kolkata", "2024-03-01T09:15:00"), AuthorName: "n", AuthorLink: "https://n/"}}},
		// Before 1883, New York kept its local mean time, -04:56:02.
		{"America/New_York", Channel{Title: "LMT west", Link: "https://www.example.com/", Description: "seconds", Language: "en-us", FeedURL: "https://api.example.com/articles/feed.rss"},
			[]Item{{Title: "x", Link: "https://www.example.com/x/", Description: "x", Published: at("America/New_York", "1870-05-01T09:15:00"), AuthorName: "n", AuthorLink: "https://n/"}}},
		// Before 1880, Amsterdam kept its local mean time, +00:19:32.
		{"Europe/Amsterdam", Channel{Title: "LMT", Link: "https://www.example.com/", Description: "seconds", Language: "nl", FeedURL: "https://api.example.com/articles/feed.rss"},
			[]Item{{Title: "x", Link: "https://www.example.com/x/", Description: "x", Published: at("Europe/Amsterdam", "1870-05-01T09:15:00"), AuthorName: "n", AuthorLink: "https://n/"}}},
	}
}

// TestDjango writes the feeds of feedCases with AppendRSS and AppendAtom
// and with Django's syndication framework, and compares them byte for
// byte, with the Content-Type and Last-Modified of Django's answers.
func TestDjango(t *testing.T) {
	cases := feedCases()
	var in []djangoCase
	for _, c := range cases {
		dc := djangoCase{TZ: c.tz, Channel: djangoChan{c.ch.Title, c.ch.Link, c.ch.Description, c.ch.Language, c.ch.FeedURL}}
		for _, it := range c.it {
			cats := it.Categories
			if cats == nil {
				cats = []string{}
			}
			dc.Items = append(dc.Items, djangoItem{it.Title, it.Link, it.Description, it.Published.Format("2006-01-02T15:04:05"), it.AuthorName, it.AuthorLink, cats})
		}
		in = append(in, dc)
	}
	var answers []djangoAnswer
	djangotest.Run(t, "testdata/django_feeds.py", in, &answers)
	rss, _ := FormatNamed("rss")
	atom, _ := FormatNamed("atom")
	for i, c := range cases {
		want := answers[i]
		if got := string(AppendRSS(nil, &c.ch, c.it)); got != want.RSS {
			t.Errorf("%s: RSS\n got %s\nwant %s", c.tz, got, want.RSS)
		}
		if got := string(AppendAtom(nil, &c.ch, c.it)); got != want.Atom {
			t.Errorf("%s: Atom\n got %s\nwant %s", c.tz, got, want.Atom)
		}
		if rss.ContentType != want.RSSType || atom.ContentType != want.AtomType {
			t.Errorf("Content-Type %q and %q, Django's %q and %q", rss.ContentType, atom.ContentType, want.RSSType, want.AtomType)
		}
		if got := LastModified(c.it); got != want.LastModified {
			t.Errorf("%s: Last-Modified %q, Django's %q", c.tz, got, want.LastModified)
		}
	}
}
