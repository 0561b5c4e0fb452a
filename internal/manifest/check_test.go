package manifest

import (
	"math"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

func TestCheckPath(t *testing.T) {
	for _, name := range []string{"articles/20/0.json", "manifest.json", "a/b/", "статьи/1.json"} {
		if msg := CheckPath(name); msg != "" {
			t.Errorf("CheckPath(%q) = %q, want ok", name, msg)
		}
	}
	for _, name := range []string{"", "/x", "../x", "a/../b", "a/..", `a\b`, "c:x", "a//b", "./a", "a/.", "a\x00b", "a\nb", "\xff"} {
		if msg := CheckPath(name); msg == "" {
			t.Errorf("CheckPath(%q) = ok, want a problem", name)
		}
	}
}

func TestCheckPathMessages(t *testing.T) {
	tests := []struct{ name, want string }{
		{"articles/20/../20/0.json", "not a clean relative path (a .. element)"},
		{"articles/../../x.json", "the name leads outside the archive (..)"},
		{"..", "the name leads outside the archive (..)"},
	}
	for _, tt := range tests {
		if got := CheckPath(tt.name); got != tt.want {
			t.Errorf("CheckPath(%q) = %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestValidate checks that a manifest whose numbers the pages do not back
// is refused before a reader sizes anything by them.
func TestValidate(t *testing.T) {
	sum := "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
	valid := func() *Manifest {
		m := &Manifest{
			Format: Format, Articles: 3,
			Pagination:  listing.Pagination{DefaultLimit: 2, MaxLimit: 2, Limits: []int{2}, Offsets: "all"},
			Collections: []Collection{{Dir: "articles", Count: 3}},
		}
		for _, p := range []string{"articles/index.json", "articles/2/0.json", "articles/2/1.json", "articles/2/2.json"} {
			m.Files = append(m.Files, File{Path: p, Size: 10, SHA256: sum})
		}
		return m
	}
	// chunked makes m a build of the chunks layout: one chunk, one index.
	chunked := func(m *Manifest) {
		m.Pagination.Layout = layout.ChunksName
		m.Files = []File{{Path: "articles/chunks/" + sum[:2] + "/" + sum + ".json", Size: 10, SHA256: sum}, {Path: "articles/chunks.json", Size: 10, SHA256: sum}}
	}
	tests := []struct {
		name   string
		change func(m *Manifest)
		want   string // "" for valid
	}{
		{"valid", func(m *Manifest) {}, ""},
		{"aligned needs fewer pages", func(m *Manifest) { m.Pagination.Offsets = "aligned"; m.Files = append(m.Files[:2], m.Files[3]) }, ""},
		{"count one more than the pages", func(m *Manifest) { m.Collections[0].Count, m.Articles = 4, 4 },
			`manifest.json: collection "articles" of 4 articles: page articles/2/3.json is not listed (1 page missing)`},
		{"huge count", func(m *Manifest) { m.Collections[0].Count, m.Articles = 1<<40, 1<<40 },
			`manifest.json: collection "articles" of 1099511627776 articles: page articles/2/3.json is not listed`},
		{"articles differ from the count", func(m *Manifest) { m.Articles = 2 },
			`manifest.json: collection "articles" counts 3 articles, the manifest 2: it changed since a build wrote it; run feedgen build, which writes it again`},
		{"negative count", func(m *Manifest) { m.Collections[0].Count, m.Articles = -1, -1 },
			`manifest.json: collection "articles" of -1 articles: page articles/2/0.json is not listed`},
		{"huge page", func(m *Manifest) { m.Files[1].Size = 1 << 50 },
			`manifest.json: page articles/2/0.json: 1125899906842624 bytes, more than any page feedgen writes`},
		{"limit near the largest int", func(m *Manifest) {
			m.Pagination = listing.Pagination{DefaultLimit: 2, MaxLimit: math.MaxInt, Limits: []int{2, math.MaxInt}, Offsets: "aligned"}
			m.Collections[0].Count, m.Articles = math.MaxInt-1, math.MaxInt-1
		}, `manifest.json: collection "articles" of 9223372036854775806 articles: page articles/2/4.json is not listed`},
		{"no main collection", func(m *Manifest) { m.Collections = nil }, `manifest.json: no collection "articles"`},
		{"bad limits", func(m *Manifest) { m.Pagination.Limits = []int{0} }, "manifest.json: bad limits [0]"},
		{"listed twice", func(m *Manifest) { m.Files = append(m.Files, m.Files[1]) }, "manifest.json: page articles/2/0.json: listed twice"},
		{"bad sha256", func(m *Manifest) { m.Files[1].SHA256 = "x" }, "manifest.json: page articles/2/0.json: bad size or sha256"},
		{"chunks", chunked, ""},
		{"chunks: a page", func(m *Manifest) {
			chunked(m)
			m.Files = append(m.Files, File{Path: "articles/2/0.json", Size: 10, SHA256: sum})
		},
			"manifest.json: page articles/2/0.json: not a file of the chunks layout (chunk index, chunk index leaf, chunk or feed)"},
		{"chunks: a chunk named by another sum", func(m *Manifest) { chunked(m); m.Files[0].SHA256 = strings.Repeat("0", 64) },
			"manifest.json: chunk articles/chunks/" + sum[:2] + "/" + sum + ".json: its sha256 is not the one its name gives"},
		{"chunks: no index", func(m *Manifest) { chunked(m); m.Files = m.Files[:1] },
			`manifest.json: collection "articles": its chunk index articles/chunks.json is not listed`},
		{"unknown layout", func(m *Manifest) { m.Pagination.Layout = "tiles" },
			`manifest.json: unknown layout "tiles": a newer feedgen wrote it?`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := valid()
			tt.change(m)
			got := m.Validate().Error()
			if tt.want == "" && got != "" || tt.want != "" && !strings.HasPrefix(got, tt.want) {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
}
