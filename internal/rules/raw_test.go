package rules

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

// askRaw sends the request line method target as these bytes, unescaped
// (Go's client would escape them), to the server at base, and reads its
// answer as ask does.
func askRaw(t *testing.T, base, method, target string) answer {
	t.Helper()
	conn, err := net.DialTimeout("tcp", strings.TrimPrefix(base, "http://"), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(conn, method+" "+target+" HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n"); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), &http.Request{Method: method})
	if err != nil {
		t.Fatalf("%s %q: %v", method, target, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %q: reading the body: %v", method, target, err)
	}
	return answerOf(resp, method, body)
}

// rawNotUTF8 returns byte strings that are not valid UTF-8, of every
// kind: each byte past ASCII alone, each lead byte with continuations of
// each range and cut short, overlong forms, surrogates, values past
// U+10FFFF, and the first two between other bytes.
func rawNotUTF8() []string {
	var vs []string
	seen := map[string]bool{}
	add := func(b ...byte) {
		if s := string(b); !utf8.ValidString(s) && !seen[s] {
			seen[s] = true
			vs = append(vs, s)
		}
	}
	for c := 0x80; c <= 0xff; c++ {
		add(byte(c))
	}
	for c := 0xc0; c <= 0xff; c++ {
		for _, c2 := range []byte{0x80, 0xbf, 'A', 0xc3} {
			add(byte(c), c2)
		}
	}
	for c := 0xe0; c <= 0xef; c++ {
		for _, c2 := range []byte{0x80, 0x9f, 0xa0, 0xbf} {
			for _, c3 := range []byte{0x80, 'A'} {
				add(byte(c), c2, c3)
			}
		}
	}
	for c := 0xf0; c <= 0xf7; c++ {
		for _, c2 := range []byte{0x80, 0x8f, 0x90, 0xbf} {
			for _, c4 := range []byte{0x80, 'A'} {
				add(byte(c), c2, 0x80, c4)
				add(byte(c), c2, 0x80)
			}
		}
	}
	for _, b := range [][]byte{
		{0xc0, 0xaf}, {0xe0, 0x80, 0xaf}, {0xf0, 0x80, 0x80, 0xaf}, {0xf8, 0x80, 0x80, 0x80, 0xaf}, {0xfc, 0x80, 0x80, 0x80, 0x80, 0xaf}, // overlong '/'
		{0xed, 0xa0, 0x80}, {0xed, 0xad, 0xbf}, {0xed, 0xae, 0x80}, {0xed, 0xaf, 0xbf}, {0xed, 0xb0, 0x80}, {0xed, 0xbe, 0x80}, {0xed, 0xbf, 0xbf}, // surrogates
		{0xed, 0xa0, 0xbd, 0xed, 0xb8, 0x80},               // a surrogate pair, as CESU-8 writes U+1F600
		{0xf4, 0x90, 0x80, 0x80}, {0xf7, 0xbf, 0xbf, 0xbf}, // past U+10FFFF
		{'x', 0x80, 'y'}, {'x', 0xe2, 0x82, 'y'}, {0xe2, 0x82, 0xe2, 0x82, 0xac}, {0xef, 0xbb, 0xbf, 0xff}, // among other bytes
	} {
		add(b...)
	}
	return vs
}

// rawUTF8 are requests whose query has valid UTF-8 past ASCII, sent raw:
// filter values, digits of other scripts, a parameter's name.
var rawUTF8 = []request{
	{classFilters, "GET", "/articles/?tag=о+редакции"},
	{classFilters, "GET", "/articles/?limit=50&tag=о+редакции&offset=1"},
	{classUnknown, "GET", "/articles/?tag=café"},
	{classUnknown, "GET", "/articles/?tag=😀&limit=20&offset=20"},
	{classLenient, "GET", "/articles/?offset=٥"},
	{classLenient, "GET", "/articles/?limit=٢٠"},
	{classLenient, "GET", "/articles/?limit=٢٠&offset=١٠"},
	{classLenient, "GET", "/articles/?t\u0430g=API"},
	{classRedirect, "GET", "/articles?tag=café"},
}

// rawRequests are the requests of rawUTF8, and every value of rawNotUTF8
// sent raw as a filter value; each byte past ASCII, alone, in an offset,
// a limit and a parameter's name.
func rawRequests() []request {
	rs := slices.Clone(rawUTF8)
	for _, v := range rawNotUTF8() {
		rs = append(rs, request{classLenient, "GET", "/articles/?offset=20&tag=" + v})
	}
	for c := 0x80; c <= 0xff; c++ {
		b := string([]byte{byte(c)})
		rs = append(rs,
			request{classLenient, "GET", "/articles/?offset=2" + b},
			request{classLenient, "GET", "/articles/?limit=" + b + "50"},
			request{classLenient, "GET", "/articles/?tag" + b + "=API"})
	}
	rs = append(rs, request{classRedirect, "GET", "/articles?tag=\xc0\xaf&limit=50"})
	return rs
}

// checkRaw asks the target at base the requests rs, sent raw, and compares each
// answer with feedgen serve's at ref. With platform400, an answer 400 to
// a request that is not valid UTF-8 is the platform's (it refuses it
// before the script runs); every other answer must be feedgen serve's.
func checkRaw(t *testing.T, base, ref string, rs []request, platform400 bool) {
	t.Helper()
	failed, refused := 0, 0
	for _, r := range rs {
		want, got := askRaw(t, ref, r.method, r.target), askRaw(t, base, r.method, r.target)
		if platform400 && got.status == http.StatusBadRequest && !utf8.ValidString(r.target) {
			refused++
			continue
		}
		if d := want.diff(got); d != "" {
			if failed++; failed <= 20 {
				t.Errorf("%s %q (raw): %s", r.method, r.target, d)
			}
		}
	}
	if failed > 20 {
		t.Errorf("and %d more of %d raw requests differ", failed-20, len(rs))
	}
	t.Logf("%d raw requests, %d answered as feedgen serve answers them, %d refused by the platform", len(rs), len(rs)-failed-refused, refused)
}
