package build

import (
	"testing"

	"github.com/feedgen/feedgen/internal/config"
)

// TestSizeWarning checks the warning of an output past half of
// max_output_bytes: nothing at or below half, or without articles; else
// the size, the limit, the projected number of articles at which a build
// is refused (at the size per article now), and what to change for the
// config's layout and offsets.
func TestSizeWarning(t *testing.T) {
	const pages = `site_url: https://www.example.com
base_url: https://api.example.com
sections: {news: {general: General}}
authors: {editor: {name: The Editor, url: /authors/editor/}}
filters: [section, category, tag, author]
pagination:
  default_limit: 20
  max_limit: 100
  max_output_bytes: 1MB
`
	parse := func(t *testing.T, pagination string) *config.Config {
		t.Helper()
		cfg, err := config.Parse("config.yaml", "", []byte(pages+pagination))
		if err != nil {
			t.Fatal(err)
		}
		return cfg
	}
	const (
		all     = "  limits: [20, 50, 100]\n  offsets: all\n"
		aligned = "  limits: [20, 50, 100]\n  offsets: aligned\n"
		chunks  = "  layout: chunks\n"
		head    = "the output is 600.0 kB, more than half of pagination.max_output_bytes (1.0 MB): at 6.0 kB per article, a build of about 167 articles (100 now) will be refused; "
	)
	tests := []struct {
		name       string
		pagination string
		articles   int
		estimate   int64
		want       string
	}{
		{"half is fine", all, 100, 500_000, ""},
		{"no articles", all, 0, 600_000, ""},
		{"offsets all", all, 100, 600_000, head + "in config.yaml, under pagination:, set layout: chunks (every limit up to max_limit at every offset, each article stored once per listing) or offsets: aligned (a page per multiple of each limit, not per offset); or raise max_output_bytes"},
		{"aligned", aligned, 100, 600_000, head + "in config.yaml, under pagination:, set layout: chunks (every limit up to max_limit at every offset, each article stored once per listing) or list fewer limits (each is a copy of every listing); or list fewer filters; or raise max_output_bytes"},
		{"chunks", chunks, 100, 600_000, head + "in config.yaml, list fewer filters (each stores its articles once more); or raise max_output_bytes"},
		{"at the limit", chunks, 1000, 1_000_000, "the output is 1.0 MB, more than half of pagination.max_output_bytes (1.0 MB): at 1.0 kB per article, a build of about 1001 articles (1000 now) will be refused; in config.yaml, list fewer filters (each stores its articles once more); or raise max_output_bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := SizeWarning(parse(t, tt.pagination), tt.articles, tt.estimate); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}
