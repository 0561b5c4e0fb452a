package listing

import (
	"bytes"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const base = "https://api.example.com"

func TestAppendHead(t *testing.T) {
	tests := []struct {
		name                 string
		count, limit, offset int
		want                 string
	}{
		{"offset 0", 45, 20, 0, `{"count":45,"next":"` + base + `/articles/?limit=20&offset=20","previous":null,"results":[`},
		{"offset below limit drops offset in previous", 45, 20, 7, `{"count":45,"next":"` + base + `/articles/?limit=20&offset=27","previous":"` + base + `/articles/?limit=20","results":[`},
		{"offset equal to limit", 45, 20, 20, `{"count":45,"next":"` + base + `/articles/?limit=20&offset=40","previous":"` + base + `/articles/?limit=20","results":[`},
		{"middle", 100, 20, 40, `{"count":100,"next":"` + base + `/articles/?limit=20&offset=60","previous":"` + base + `/articles/?limit=20&offset=20","results":[`},
		{"last page", 45, 20, 40, `{"count":45,"next":null,"previous":"` + base + `/articles/?limit=20&offset=20","results":[`},
		{"count exact multiple of limit", 40, 20, 20, `{"count":40,"next":null,"previous":"` + base + `/articles/?limit=20","results":[`},
		{"single page", 5, 20, 0, `{"count":5,"next":null,"previous":null,"results":[`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendHead(nil, base, nil, tt.count, tt.limit, strconv.Itoa(tt.offset)))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestEmptyPage(t *testing.T) {
	tests := []struct {
		name   string
		count  int
		offset string
		want   string
	}{
		{"at the end", 45, "45", `{"count":45,"next":null,"previous":"` + base + `/articles/?limit=20&offset=25","results":[]}`},
		{"past the end", 45, "100", `{"count":45,"next":null,"previous":"` + base + `/articles/?limit=20&offset=80","results":[]}`},
		{"past the end, aligned", 45, "60", `{"count":45,"next":null,"previous":"` + base + `/articles/?limit=20&offset=40","results":[]}`},
		{"empty collection", 0, "0", `{"count":0,"next":null,"previous":null,"results":[]}`},
		{"empty collection, offset below limit", 0, "5", `{"count":0,"next":null,"previous":"` + base + `/articles/?limit=20","results":[]}`},
		{"huge offset", 3, "1000000000000000000000000000000", `{"count":3,"next":null,"previous":"` + base + `/articles/?limit=20&offset=999999999999999999999999999980","results":[]}`},
		{"huge offset borrow", 3, "100000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000015", `{"count":3,"next":null,"previous":"` + base + `/articles/?limit=20&offset=99999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999999995","results":[]}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendEmptyPage(nil, base, nil, tt.count, 20, tt.offset))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

func TestLinkParams(t *testing.T) {
	tests := []struct {
		params []Param
		offset string
		want   string
	}{
		{[]Param{{"tag", "zzz"}}, "20", `"` + base + `/articles/?limit=20&offset=20&tag=zzz"`},
		{[]Param{{"category", "politics"}, {"section", "news"}}, "40", `"` + base + `/articles/?category=politics&limit=20&offset=40&section=news"`},
		{[]Param{{"tag", "C++ & <b>/ё"}}, "", `"` + base + `/articles/?limit=20&tag=C%2B%2B+%26+%3Cb%3E%2F%D1%91"`},
		{[]Param{{"tag", "a, b"}}, "", `"` + base + `/articles/?limit=20&tag=a%2C+b"`},
		{[]Param{{"tag", "tag/with/slash"}}, "", `"` + base + `/articles/?limit=20&tag=tag%2Fwith%2Fslash"`},
		{[]Param{{"tag", `back\slash`}}, "", `"` + base + `/articles/?limit=20&tag=back%5Cslash"`},
		{[]Param{{"tag", "tab\there"}}, "", `"` + base + `/articles/?limit=20&tag=tab%09here"`},
		{[]Param{{"tag", " padded "}}, "", `"` + base + `/articles/?limit=20&tag=+padded+"`},
		{[]Param{{"tag", "&amp;"}}, "", `"` + base + `/articles/?limit=20&tag=%26amp%3B"`},
		{[]Param{{"tag", "<script>"}}, "", `"` + base + `/articles/?limit=20&tag=%3Cscript%3E"`},
		{[]Param{{"tag", "C++"}}, "", `"` + base + `/articles/?limit=20&tag=C%2B%2B"`},
		{[]Param{{"tag", "🚀"}}, "", `"` + base + `/articles/?limit=20&tag=%F0%9F%9A%80"`},
		{[]Param{{"tag", "Ёжик"}}, "", `"` + base + `/articles/?limit=20&tag=%D0%81%D0%B6%D0%B8%D0%BA"`},
		{[]Param{{"tag", "東京"}}, "", `"` + base + `/articles/?limit=20&tag=%E6%9D%B1%E4%BA%AC"`},
		{[]Param{{"tag", "a-b_c.d~e"}}, "", `"` + base + `/articles/?limit=20&tag=a-b_c.d~e"`},
		{[]Param{{"tag", "\"quoted\""}}, "", `"` + base + `/articles/?limit=20&tag=%22quoted%22"`},
	}
	for _, tt := range tests {
		if got := string(AppendLink(nil, base, tt.params, 20, tt.offset)); got != tt.want {
			t.Errorf("AppendLink(%q, %q) = %s, want %s", tt.params, tt.offset, got, tt.want)
		}
	}
}

func TestMethodNotAllowed(t *testing.T) {
	if got, want := string(AppendMethodNotAllowed(nil, "POST")), `{"detail":"Method \"POST\" not allowed."}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
}

// linkReference is AppendLink as it was written first, on net/url: the
// reference the fast one is checked against.
func linkReference(dst []byte, baseURL string, params []Param, limit int, offset string) []byte {
	all := append(slices.Clone(params), Param{"limit", strconv.Itoa(limit)})
	if offset != "" {
		all = append(all, Param{"offset", offset})
	}
	slices.SortStableFunc(all, func(a, b Param) int { return strings.Compare(a.Key, b.Key) })
	u := baseURL + Path + "?"
	for i, p := range all {
		if i > 0 {
			u += "&"
		}
		u += url.QueryEscape(p.Key) + "=" + url.QueryEscape(p.Value)
	}
	return AppendString(dst, u)
}

// FuzzAppendLink checks AppendLink against linkReference, for any base
// URL, filter values, limit and offset.
func FuzzAppendLink(f *testing.F) {
	f.Add("https://api.example.com", "news", "politics", "Go lang/€", "ivan", 20, "40", uint8(15))
	f.Add("http://x/\"q\"", "", "", "a&b=c+d%", "", 1, "", uint8(4))
	f.Fuzz(func(t *testing.T, base, section, category, tag, author string, limit int, offset string, mask uint8) {
		var params []Param
		for i, p := range []Param{{"author", author}, {"category", category}, {"section", section}, {"tag", tag}} {
			if mask&(1<<i) != 0 {
				params = append(params, p)
			}
		}
		if _, err := strconv.ParseUint(offset, 10, 64); err != nil {
			offset = ""
		}
		got := AppendLink([]byte("x"), base, params, limit, offset)
		want := linkReference([]byte("x"), base, params, limit, offset)
		if !bytes.Equal(got, want) {
			t.Fatalf("got  %s\nwant %s", got, want)
		}
	})
}
