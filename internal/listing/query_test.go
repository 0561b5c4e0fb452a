package listing

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

var testPaging = Pagination{DefaultLimit: 20, MaxLimit: 100, Limits: []int{20, 50, 100}, Offsets: OffsetsAll}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query      string
		wantLimit  int
		wantOffset string
	}{
		{"", 20, "0"},
		{"limit=50", 50, "0"},
		{"limit=%2020", 20, "0"},
		{"limit=%2050", 50, "0"},
		{"limit=+50", 50, "0"},
		{"limit=%2B50", 50, "0"},
		{"limit=050", 50, "0"},
		{"limit=5_0", 50, "0"},
		{"limit=5__0", 20, "0"},
		{"limit=_50", 20, "0"},
		{"limit=50_", 20, "0"},
		{"limit=%D9%A5%D9%A0", 50, "0"},         // Arabic-Indic ٥٠
		{"limit=%EF%BC%95%EF%BC%90", 50, "0"},   // fullwidth ５０
		{"limit=%D9%A5%EF%BC%90", 50, "0"},      // scripts may mix
		{"limit=%E2%80%8350%E3%80%80", 50, "0"}, // U+2003 and U+3000 around
		{"limit=%205%20", 5, "0"},
		{"limit=%09%0A%0B%0C%0D5", 5, "0"},
		{"limit=%C2%855%C2%A0", 5, "0"},       // U+0085 and U+00A0
		{"limit=%E1%9A%805%E2%80%8A", 5, "0"}, // U+1680 and U+200A
		{"limit=%E2%80%A85%E2%80%A9", 5, "0"}, // U+2028 and U+2029
		{"limit=%E2%80%AF5%E2%81%9F", 5, "0"}, // U+202F and U+205F
		{"limit=%1C5", 20, "0"},               // str.isspace accepts U+001C, int() does not
		{"limit=%1D5", 20, "0"},               // U+001D
		{"limit=%1E5", 20, "0"},               // U+001E
		{"limit=5%1F", 20, "0"},               // U+001F after
		{"limit=%E2%80%8B5", 20, "0"},         // U+200B is not white space
		{"limit=%EF%BB%BF5", 20, "0"},         // nor U+FEFF
		{"limit=%E1%A0%8E5", 20, "0"},         // nor U+180E
		{"offset=%1C14", 20, "0"},
		{"offset=%C2%A014%E3%80%80", 20, "14"},
		{"limit=0", 20, "0"},
		{"limit=-0", 20, "0"},
		{"limit=-1", 20, "0"},
		{"limit=abc", 20, "0"},
		{"limit=1.5", 20, "0"},
		{"limit=", 20, "0"},
		{"limit", 20, "0"},
		{"limit=%20", 20, "0"},
		{"limit=1000000000000000000000000000000", 100, "0"},
		{"limit=101", 100, "0"},
		{"limit=7", 7, "0"},
		{"limit=7&limit=abc", 20, "0"},
		{"limit=abc&limit=50", 50, "0"},
		{"limit=7;offset=14", 20, "0"},
		{"offset=14", 20, "14"},
		{"offset=%2B14", 20, "14"},
		{"offset=-1", 20, "0"},
		{"offset=-0", 20, "0"},
		{"offset=0014", 20, "14"},
		{"offset=1_4", 20, "14"},
		{"offset=abc", 20, "0"},
		{"offset=1000000000000000000000000000000", 20, "1000000000000000000000000000000"},
		{"foo=bar&limit=50&&offset=100&x", 50, "100"},
		{"%6Cimit=50", 50, "0"},
		{"limit=5%30", 50, "0"},
		{"limit=50%", 20, "0"},
		{"limit=%zz", 20, "0"},
		{"limit=%FF50", 20, "0"},
	}
	for _, tt := range tests {
		t.Run(tt.query, func(t *testing.T) {
			q := ParseQuery(tt.query, testPaging, nil)
			if q.Limit != tt.wantLimit || q.Offset != tt.wantOffset {
				t.Errorf("ParseQuery(%q) = limit %d offset %s, want limit %d offset %s", tt.query, q.Limit, q.Offset, tt.wantLimit, tt.wantOffset)
			}
		})
	}
}

// TestIsSpace checks isSpace against the characters int() strips around a
// number, every one of them up to U+3000 and past it.
func TestIsSpace(t *testing.T) {
	want := []rune{0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x20, 0x85, 0xa0, 0x1680,
		0x2000, 0x2001, 0x2002, 0x2003, 0x2004, 0x2005, 0x2006, 0x2007, 0x2008, 0x2009, 0x200a,
		0x2028, 0x2029, 0x202f, 0x205f, 0x3000}
	for r := rune(0); r <= 0x10000; r++ {
		if got := isSpace(r); got != slices.Contains(want, r) {
			t.Errorf("isSpace(%U) = %v, want %v", r, got, !got)
		}
	}
}

func TestParseInt(t *testing.T) {
	tests := []struct {
		in     string
		neg    bool
		digits string
		ok     bool
	}{
		{"0", false, "0", true}, {"-0", false, "0", true}, {"+0", false, "0", true},
		{"-12", true, "12", true}, {" \t12\n", false, "12", true}, {"1_2_3", false, "123", true},
		{"", false, "", false}, {"+", false, "", false}, {"-", false, "", false}, {"+-1", false, "", false},
		{"1 2", false, "", false}, {"0x10", false, "", false}, {"1e3", false, "", false}, {"²", false, "", false},
		{"\u00a012\u202f", false, "12", true}, {"٠٠٧", false, "7", true},
		{"\x1c12", false, "", false}, {"12\x1f", false, "", false}, {"\x1c", false, "", false},
	}
	for _, tt := range tests {
		neg, digits, ok := ParseInt(tt.in)
		if neg != tt.neg || digits != tt.digits || ok != tt.ok {
			t.Errorf("ParseInt(%q) = %v, %q, %v; want %v, %q, %v", tt.in, neg, digits, ok, tt.neg, tt.digits, tt.ok)
		}
	}
}

// FuzzParseQuery: any query gives a limit that is pre-rendered or clamped
// into range, and an offset that is a canonical decimal.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{"", "limit=20&offset=40", "limit=%2020", "limit=٢٠", "offset=1_000", "limit=7;offset=14", "a=%zz&limit=+5", "limit=%1C5", "limit=%C2%A05"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		q := ParseQuery(raw, testPaging, nil)
		if q.Limit < 1 || q.Limit > testPaging.MaxLimit {
			t.Fatalf("limit %d out of range", q.Limit)
		}
		if q.Offset == "" || (len(q.Offset) > 1 && q.Offset[0] == '0') || strings.Trim(q.Offset, "0123456789") != "" {
			t.Fatalf("offset %q is not a canonical decimal", q.Offset)
		}
		if !utf8.ValidString(unescape(raw)) {
			t.Fatalf("unescape gave invalid UTF-8")
		}
		page := AppendEmptyPage(nil, base, q.Params, 3, q.Limit, q.Offset)
		if !json.Valid(page) {
			t.Fatalf("page past the end is not JSON: %s", page)
		}
	})
}

func TestParseQueryFilters(t *testing.T) {
	filters := []string{"category", "section", "tag"}
	tests := []struct {
		query string
		want  []Param
	}{
		{"", nil},
		{"tag=Go", []Param{{"tag", "Go"}}},
		{"tag=", nil},
		{"tag=Go&tag=", nil},
		{"tag=&tag=Go", []Param{{"tag", "Go"}}},
		{"tag=a&tag=b", []Param{{"tag", "b"}}},
		{"tag=C%2B%2B+x", []Param{{"tag", "C++ x"}}},
		{"section=news&category=politics&limit=50", []Param{{"category", "politics"}, {"section", "news"}}},
		{"author=ivan&tag=Go", []Param{{"tag", "Go"}}},
		{"t%61g=%D0%81%D0%B6", []Param{{"tag", "Ёж"}}},
		{"tag=%ff", []Param{{"tag", "\ufffd"}}},
	}
	for _, tt := range tests {
		q := ParseQuery(tt.query, testPaging, filters)
		if !slices.Equal(q.Params, tt.want) {
			t.Errorf("ParseQuery(%q).Params = %q, want %q", tt.query, q.Params, tt.want)
		}
	}
	if q := ParseQuery("tag=Go", testPaging, nil); q.Params != nil {
		t.Errorf("without filters: Params = %q, want none", q.Params)
	}
}

// FuzzParseQueryFilters: the filters of any query are sorted by key, each
// once, with a non-empty value in valid UTF-8; and the link of a page of
// that collection, parsed back, selects the same collection, limit and
// offset: a client following next and previous stays where it is.
func FuzzParseQueryFilters(f *testing.F) {
	for _, s := range []string{"tag=Go", "section=news&category=politics&offset=3", "tag=a&tag=&tag=b", "tag=%ff%fe",
		"author=x&tag=+&limit=5", "tag=a%26b%3Dc&tag=C%2B%2B", "category=%E2%80%A8&section=%00"} {
		f.Add(s)
	}
	keys := FilterKeys()
	f.Fuzz(func(t *testing.T, raw string) {
		q := ParseQuery(raw, testPaging, keys)
		for i, p := range q.Params {
			if p.Value == "" || !utf8.ValidString(p.Value) || !slices.Contains(keys, p.Key) {
				t.Fatalf("param %q", p)
			}
			if i > 0 && q.Params[i-1].Key >= p.Key {
				t.Fatalf("params %q not sorted by key, each once", q.Params)
			}
		}
		link := string(AppendLink(nil, base, q.Params, q.Limit, q.Offset))
		query, ok := strings.CutPrefix(strings.Trim(link, `"`), base+Path+"?")
		if !ok {
			t.Fatalf("link %s", link)
		}
		back := ParseQuery(query, testPaging, keys)
		if !slices.Equal(back.Params, q.Params) || back.Limit != q.Limit || (back.Offset != q.Offset && !(back.Offset == "0" && q.Offset == "")) {
			t.Fatalf("query %q gives %+v; its link %s gives %+v", raw, q, link, back)
		}
	})
}
