package rules

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

func TestCountsChanged(t *testing.T) {
	coll := func(count int, kv ...string) manifest.Collection {
		c := manifest.Collection{Count: count}
		for i := 0; i < len(kv); i += 2 {
			c.Params = append(c.Params, listing.Param{Key: kv[i], Value: kv[i+1]})
		}
		return c
	}
	now := []manifest.Collection{coll(67), coll(21, "section", "news"), coll(6, "category", "politics", "section", "news"), coll(1, "tag", "new")}
	for _, tc := range []struct {
		name string
		old  map[string]int
		want string
	}{
		{"unknown", nil, ""},
		{"same", map[string]int{"/articles/": 67, "?section=news": 21, "?category=politics&section=news": 6, "?tag=new": 1}, ""},
		{"one count", map[string]int{"/articles/": 66, "?section=news": 21, "?category=politics&section=news": 6, "?tag=new": 1},
			"counts of /articles/ 66, now 67"},
		{"counts, new and gone", map[string]int{"/articles/": 66, "?section=news": 20, "?category=politics&section=news": 5, "?tag=old": 1, "?tag=older": 2},
			"counts of /articles/ 66, now 67; ?section=news 20, now 21; ?category=politics&section=news 5, now 6; new ?tag=new; gone ?tag=old; ?tag=older"},
		{"more than three", map[string]int{"/articles/": 1, "?section=news": 1, "?category=politics&section=news": 1, "?tag=new": 2},
			"counts of /articles/ 1, now 67; ?section=news 1, now 21; ?category=politics&section=news 1, now 6 and 1 more"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := CountsChanged(tc.old, now); got != tc.want {
				t.Errorf("got  %q\nwant %q", got, tc.want)
			}
		})
	}
}

// TestCheck writes a target's files and checks them: up to date, then
// each way a file can be stale.
func TestCheck(t *testing.T) {
	tg, err := Find("caddy")
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSite(sampleMan, sampleRoot, "8080")
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if _, _, err := Write(tg, s, out, false); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(out, "Caddyfile")
	counts := Counts(sampleMan.Collections)
	fewer := *s
	fewer.Collections = append([]manifest.Collection(nil), s.Collections...)
	fewer.Collections[0].Count--
	other := *s
	other.Listen = "9090"
	for _, tc := range []struct {
		name string
		s    *Site
		edit func()
		want string // the Why of the one stale file, "" for none
	}{
		{"up to date", s, nil, ""},
		{"counts", &fewer, nil, "counts of /articles/ 66, now 65"},
		{"flags", &other, nil, "line "},
		{"edited", s, func() { os.WriteFile(file, []byte("x\n"), 0o644) }, "line 1 differs"},
		{"missing", s, func() { os.Remove(file) }, "missing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.edit != nil {
				tc.edit()
			}
			stale, err := Check(tg, tc.s, out, counts)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == "" {
				if len(stale) != 0 {
					t.Fatalf("stale: %v", stale)
				}
				return
			}
			if len(stale) != 1 || stale[0].File != file || !strings.HasPrefix(stale[0].Why, tc.want) {
				t.Fatalf("got %v, want %s: %s...", stale, file, tc.want)
			}
		})
	}
}
