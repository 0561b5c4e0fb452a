package server

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/listing"
)

// FuzzServeQuery checks the mapping of any raw query to an answer, on a
// build with every offset and one with aligned offsets: the server never
// panics, and answers either 404 (a limit that is not pre-rendered, or an
// offset inside the listing that is not aligned) or 200 with the page the
// query asks for: the bytes of its file, or the original's page past the
// end, checked against an independent computation of its links.
func FuzzServeQuery(f *testing.F) {
	for _, q := range []string{
		"", "limit=20", "limit=%2020", "limit=+20", "limit=%2B20", "limit=020", "limit=2_0", "limit=2__0",
		"limit=%D9%A2%D9%A0", "limit=%EF%BC%92%EF%BC%90", "limit=0", "limit=-0", "limit=-1", "limit=abc",
		"limit=1.5", "limit=", "limit=1000000000000000000000000000000", "offset=1000000000000000000000000000000",
		"limit=7&limit=abc", "limit=7;offset=14", "foo=bar&offset=3", "limit=20&offset=45", "limit=20&offset=10",
		"limit=50&offset=99999999999999999999", "offset=%", "offset=%FF", "&&=&", "limit=5&offset=٤٤",
	} {
		f.Add(q)
	}
	type target struct {
		name   string
		s      *Server
		paging listing.Pagination
		count  int
		files  map[string][]byte
	}
	var targets []target
	for _, st := range []testSite{allSite, alignSite, noneSite} {
		s, _ := newServer(f, Options{Source: Folder(st.out)})
		m := readManifest(f, st.out)
		files := map[string][]byte{}
		err := filepath.WalkDir(st.out, func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(st.out, p)
			files[filepath.ToSlash(rel)] = data
			return err
		})
		if err != nil {
			f.Fatal(err)
		}
		targets = append(targets, target{st.out, s, m.Pagination, m.Articles, files})
	}

	f.Fuzz(func(t *testing.T, raw string) {
		for _, tg := range targets {
			resp := request(tg.s, http.MethodGet, "/articles/?"+raw, nil)
			body := readBody(t, resp)
			q := listing.ParseQuery(raw, tg.paging, nil)
			off := q.Offset
			if off == "" || off[0] == '-' || off != "0" && off[0] == '0' {
				t.Fatalf("ParseQuery(%q) gave offset %q", raw, off)
			}
			inside := off == "0" || len(off) < 18 && mustAtoi(t, off) < tg.count
			wantStatus := http.StatusOK
			if !tg.paging.HasLimit(q.Limit) ||
				inside && tg.paging.Offsets == listing.OffsetsAligned && mustAtoi(t, off)%q.Limit != 0 {
				wantStatus = http.StatusNotFound
			}
			if resp.StatusCode != wantStatus {
				t.Fatalf("%s: query %q: got status %d, want %d", tg.name, raw, resp.StatusCode, wantStatus)
			}
			if got, want := resp.Header.Get("Content-Length"), strconv.Itoa(len(body)); got != want {
				t.Fatalf("%s: query %q: got Content-Length %s, want %s", tg.name, raw, got, want)
			}
			if wantStatus == http.StatusNotFound {
				if string(body) != `{"detail":"Not found."}` {
					t.Fatalf("%s: query %q: got 404 body %q", tg.name, raw, body)
				}
				continue
			}
			if inside {
				want := tg.files["articles/"+strconv.Itoa(q.Limit)+"/"+off+".json"]
				if want == nil || !bytes.Equal(body, want) {
					t.Fatalf("%s: query %q: got %.200s, want the file of limit %d offset %s", tg.name, raw, body, q.Limit, off)
				}
				continue
			}
			checkEmptyPage(t, body, tg.count, q.Limit, off)
		}
	})
}

// checkEmptyPage checks a page past the end against its definition: the
// count, no next link, no results, and a previous link that is null at
// offset 0, has no offset when offset <= limit, and is offset-limit
// otherwise. off is a canonical decimal of any size.
func checkEmptyPage(t *testing.T, body []byte, count, limit int, off string) {
	t.Helper()
	var p struct {
		Count    *int
		Next     *string
		Previous *string
		Results  []json.RawMessage
	}
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("page past the end is not JSON: %v: %s", err, body)
	}
	var want *string
	switch {
	case off == "0":
	case len(off) < 18 && mustAtoi(t, off) <= limit:
		s := base + "limit=" + strconv.Itoa(limit)
		want = &s
	default:
		s := base + "limit=" + strconv.Itoa(limit) + "&offset=" + minus(off, limit)
		want = &s
	}
	if p.Count == nil || *p.Count != count || p.Next != nil || p.Results == nil || len(p.Results) != 0 ||
		(want == nil) != (p.Previous == nil) || want != nil && *want != *p.Previous {
		t.Fatalf("got page past the end %.300s for limit %d offset %.100s", body, limit, off)
	}
}

// minus returns the canonical decimal d - n, for d > n of any size: the
// last 18 digits are subtracted as a number, borrowing from the rest.
func minus(d string, n int) string {
	if len(d) <= 18 {
		v, _ := strconv.ParseInt(d, 10, 64)
		return strconv.FormatInt(v-int64(n), 10)
	}
	head, tail := d[:len(d)-18], d[len(d)-18:]
	v, _ := strconv.ParseInt(tail, 10, 64)
	v -= int64(n)
	if v < 0 {
		v += 1e18
		h := []byte(head)
		i := len(h) - 1
		for h[i] == '0' {
			h[i] = '9'
			i--
		}
		h[i]--
		head = strings.TrimLeft(string(h), "0")
	}
	t := strconv.FormatInt(v, 10)
	if head == "" {
		return t
	}
	return head + strings.Repeat("0", 18-len(t)) + t
}

func mustAtoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestMinus(t *testing.T) {
	tests := []struct {
		d    string
		n    int
		want string
	}{
		{"100", 20, "80"},
		{"1000000000000000000000000000000", 5, "999999999999999999999999999995"},
		{"1000000000000000000", 20, "999999999999999980"},
		{"12000000000000000000000000000010", 20, "11999999999999999999999999999990"},
		{"12000000000000000000000000000030", 20, "12000000000000000000000000000010"},
	}
	for _, tt := range tests {
		if got := minus(tt.d, tt.n); got != tt.want {
			t.Errorf("minus(%s, %d): got %s, want %s", tt.d, tt.n, got, tt.want)
		}
	}
}
