package main

import (
	"bytes"
	"crypto/sha256"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

func TestReadEditTarget(t *testing.T) {
	const body = "\nFirst paragraph.\n\n## Heading\n\nMore.\n"
	tests := []struct {
		name   string
		data   string
		ok     bool
		id     int
		tags   int
		author string
	}{
		{"tags and author", "---\nid: 12\ntitle: \"T\"\ntags:\n  - \"a\"\n  - \"b c\"\nauthor: ivan-petrov\n---\n" + body, true, 12, 2, "ivan-petrov"},
		{"announcement", "---\nid: 12\nannouncement: \"A\"\ntags:\n  - \"a\"\nauthor: ivan-petrov\n---\n" + body, false, 0, 0, ""},
		{"no tags", "---\nid: 12\ntags: []\nauthor: ivan-petrov\n---\n" + body, false, 0, 0, ""},
		{"inline author", "---\nid: 12\ntags:\n  - \"a\"\nauthor_name: \"Guest\"\nauthor_url: \"/g/\"\n---\n" + body, false, 0, 0, ""},
		{"no front matter", "id: 12\n", false, 0, 0, ""},
		{"no body", "---\nid: 12\ntags:\n  - \"a\"\nauthor: ivan-petrov\n---\n\n", false, 0, 0, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := readEditTarget("content/a/b/c.md", []byte(tt.data))
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v (%+v)", ok, tt.ok, got)
			}
			if !ok {
				return
			}
			if got.id != tt.id || got.tags != tt.tags || got.author != tt.author {
				t.Errorf("got id %d, %d tags, author %q; want %d, %d, %q", got.id, got.tags, got.author, tt.id, tt.tags, tt.author)
			}
			edited := got.edited(3)
			want := strings.Replace(tt.data, "\n---\n\nFirst", "\n---\n\nEdited 3. First", 1)
			if string(edited) != want {
				t.Errorf("edited(3) =\n%s\nwant\n%s", edited, want)
			}
			if string(got.data) != tt.data {
				t.Error("edited changed the generated article")
			}
		})
	}
}

func TestPickEditTarget(t *testing.T) {
	for _, n := range []int{45, 1000} {
		s := site{dir: "/nonexistent", opt: corpus.Options{Articles: n, Seed: 3, Filters: listing.FilterNames()}}
		got, err := pickEditTarget(s)
		if err != nil {
			t.Fatal(err)
		}
		if got.tags < 3 || got.author == "" || got.id <= 0 {
			t.Errorf("%d articles: picked %v", n, got)
		}
		if bytes.Contains(got.data, []byte("\nannouncement:")) {
			t.Errorf("%d articles: picked %v, which has an announcement", n, got)
		}
		again, err := pickEditTarget(s)
		if err != nil || again.path != got.path {
			t.Errorf("%d articles: picked %s, then %s (%v)", n, got.path, again.path, err)
		}
	}
}

func TestScanPages(t *testing.T) {
	public := t.TempDir()
	files := map[string]string{
		"articles/index.json":           `{"results":[{"id":7,"title":"x"}]}`,
		"articles/20/0.json":            `{"results":[{"id":7,"title":"x"}]}`,
		"articles/20/20.json":           `{"results":[{"id":77,"title":"y"}]}`,
		"articles/tag/a/20/0.json":      `{"results":[{"id":8,"title":"z"},{"id":7,"title":"x"}]}`,
		"articles/tag/a/index.json":     `{"results":[]}`,
		"manifest.json":                 `{"id":7,`,
		"articles/author/b/nested.json": `{"id":70,`,
	}
	for p, data := range files {
		name := filepath.Join(public, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sc, err := scanPages(public, []byte(`{"id":7,`))
	if err != nil {
		t.Fatal(err)
	}
	wantHolding := []string{"articles/20/0.json", "articles/index.json", "articles/tag/a/20/0.json"}
	if !reflect.DeepEqual(sc.holding, wantHolding) {
		t.Errorf("holding = %q, want %q", sc.holding, wantHolding)
	}
	if len(sc.sums) != len(files)-1 {
		t.Errorf("%d sums, want one for each of the %d files under articles", len(sc.sums), len(files)-1)
	}
	if got, want := sc.sums["articles/20/20.json"], sha256.Sum256([]byte(files["articles/20/20.json"])); got != want {
		t.Errorf("sum of articles/20/20.json = %x, want %x", got, want)
	}
	if _, err := scanPages(filepath.Join(public, "nope"), nil); err == nil {
		t.Error("scanPages of a missing folder succeeded")
	}
}

func TestChangedPages(t *testing.T) {
	sum := func(s string) [sha256.Size]byte { return sha256.Sum256([]byte(s)) }
	tests := []struct {
		name          string
		before, after map[string][sha256.Size]byte
		want          []string
	}{
		{"none", nil, nil, nil},
		{"same", map[string][sha256.Size]byte{"a": sum("1")}, map[string][sha256.Size]byte{"a": sum("1")}, nil},
		{
			"changed, added, removed",
			map[string][sha256.Size]byte{"a": sum("1"), "b": sum("2"), "c": sum("3")},
			map[string][sha256.Size]byte{"a": sum("1"), "b": sum("two"), "d": sum("4")},
			[]string{"b", "c", "d"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := changedPages(tt.before, tt.after); !reflect.DeepEqual(got, tt.want) {
				t.Errorf("changedPages = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWithout(t *testing.T) {
	tests := []struct {
		a, b, want []string
	}{
		{nil, nil, nil},
		{[]string{"a", "b"}, nil, []string{"a", "b"}},
		{[]string{"a", "b", "c"}, []string{"b"}, []string{"a", "c"}},
		{[]string{"a"}, []string{"a", "z"}, nil},
	}
	for _, tt := range tests {
		if got := without(tt.a, tt.b); !reflect.DeepEqual(got, tt.want) {
			t.Errorf("without(%q, %q) = %q, want %q", tt.a, tt.b, got, tt.want)
		}
	}
}

func TestPerByteRatio(t *testing.T) {
	tests := []struct {
		d         time.Duration
		n         int64
		twin      time.Duration
		twinBytes int64
		want      float64
	}{
		{time.Second, 1_000_000, time.Second, 1_000_000, 1},
		{7 * time.Second, 1_750_000_000, time.Second, 250_000_000, 1},
		{6 * time.Second, 2_000_000_000, time.Second, 250_000_000, 0.75},
		{time.Second, 1, 0, 1, math.Inf(1)},
		{time.Second, 1, time.Second, 0, math.Inf(1)},
	}
	for _, tt := range tests {
		got := perByteRatio(tt.d, tt.n, tt.twin, tt.twinBytes)
		if got != tt.want && math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("perByteRatio(%v, %d, %v, %d) = %v, want %v", tt.d, tt.n, tt.twin, tt.twinBytes, got, tt.want)
		}
	}
}

func TestPerMB(t *testing.T) {
	tests := []struct {
		d    time.Duration
		n    int64
		want float64
	}{
		{time.Second, 1_000_000, 1000},
		{500 * time.Millisecond, 250_000_000, 2},
		{time.Second, 0, 0},
	}
	for _, tt := range tests {
		if got := perMB(tt.d, tt.n); got != tt.want {
			t.Errorf("perMB(%v, %d) = %v, want %v", tt.d, tt.n, got, tt.want)
		}
	}
}
