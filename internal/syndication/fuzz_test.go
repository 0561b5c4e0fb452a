package syndication

import (
	"bytes"
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// FuzzXML writes RSS and Atom feeds of any texts and checks that they are
// well-formed XML (encoding/xml, strict) whose texts are the ones given,
// less the control characters a feed leaves out, and whose links are
// ASCII.
func FuzzXML(f *testing.F) {
	f.Add("Example & <News>", "d\x01", `Go "&" 'Rust'`, "https://x/ё ?a=1&b=\"2\"", "tab\tand\nnewline\r")
	f.Add("", "", "", "", "")
	f.Fuzz(func(t *testing.T, title, desc, cat, link, author string) {
		for _, s := range []string{title, desc, cat, link, author} {
			// Django writes U+FFFE and U+FFFF as they are, which XML 1.0
			// cannot hold: feedgen writes what Django writes.
			if !utf8.ValidString(s) || strings.ContainsAny(s, "\uFFFE\uFFFF") {
				t.Skip()
			}
		}
		ch := Channel{Title: title, Link: link, Description: desc, Language: "en-us", FeedURL: link}
		items := []Item{{Title: title, Link: link, Description: desc, Published: time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC),
			AuthorName: author, AuthorLink: link, Categories: []string{cat}}}
		clean := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r < 0x20 && r != '\t' && r != '\n' && r != '\r' {
					return -1
				}
				return r
			}, s)
		}
		for _, b := range [][]byte{AppendRSS(nil, &ch, items), AppendAtom(nil, &ch, items)} {
			d := xml.NewDecoder(bytes.NewReader(b))
			var path []string
			for {
				tok, err := d.Token()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%v\n%s", err, b)
				}
				switch tok := tok.(type) {
				case xml.StartElement:
					path = append(path, tok.Name.Local)
					for _, a := range tok.Attr {
						want := ""
						switch a.Name.Local {
						case "term":
							want = clean(cat)
						case "href":
							for i := 0; i < len(a.Value); i++ {
								if a.Value[i] >= 0x80 || a.Value[i] <= ' ' {
									t.Fatalf("href %q: not a URI", a.Value)
								}
							}
							continue
						default:
							continue
						}
						// (quoteattr writes \r as &#13;: it stays.)
						if a.Value != want {
							t.Fatalf("attribute %s %q, want %q\n%s", a.Name.Local, a.Value, want, b)
						}
					}
				case xml.EndElement:
					path = path[:len(path)-1]
				case xml.CharData:
					got := string(tok)
					var want string
					switch strings.Join(path, "/") {
					case "rss/channel/title", "rss/channel/item/title", "feed/title", "feed/entry/title":
						want = clean(title)
					case "rss/channel/description", "rss/channel/item/description", "feed/entry/summary":
						want = clean(desc)
					default:
						continue
					}
					// Text holds a carriage return as it is (as Django writes
					// it), which a reader takes for a newline (XML's ends of
					// lines).
					want = strings.ReplaceAll(strings.ReplaceAll(want, "\r\n", "\n"), "\r", "\n")
					if got != want {
						t.Fatalf("%s: %q, want %q\n%s", strings.Join(path, "/"), got, want, b)
					}
				}
			}
		}
	})
}

// FuzzModified reads the date of any bytes as a feed of each format: an
// error or a time, never a panic; and of a feed Append wrote, the date
// Latest gave.
func FuzzModified(f *testing.F) {
	ch := Channel{Title: "t", Link: "https://x/", Description: "d", Language: "en-us", FeedURL: "https://x/feed"}
	items := []Item{{Title: "a", Link: "https://x/a", Published: time.Date(2024, 11, 4, 1, 52, 33, 0, time.FixedZone("", 3*3600))}}
	for _, fm := range Formats() {
		f.Add(fm.Append(nil, &ch, items), 0)
	}
	f.Add([]byte("<lastBuildDate>"), 0)
	f.Fuzz(func(t *testing.T, body []byte, unixHours int) {
		for _, fm := range Formats() {
			Modified(fm, body)
		}
		it := []Item{{Title: string(body), Link: "https://x/", Published: time.Unix(int64(unixHours%1000000)*3600, 0).In(time.FixedZone("", (unixHours%24)*900))}}
		for _, fm := range Formats() {
			got, err := Modified(fm, fm.Append(nil, &ch, it))
			if err != nil || !got.Equal(Latest(it)) {
				t.Fatalf("%s: %v, %v; want %v", fm.Name, got, err, Latest(it))
			}
		}
	})
}
