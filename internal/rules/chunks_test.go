package rules

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// TestRefusesChunks gives every target a build of layout: chunks: the
// targets that only map a request onto a file refuse it, naming those
// that run code; those (nginx-njs, cloudflare, netlify) refuse it too,
// for now, saying that they will and that feedgen serve assembles today.
// None writes anything.
func TestRefusesChunks(t *testing.T) {
	root, m := buildSample(t, map[string]string{"\n  offsets: all": "\n  layout: chunks"})
	if !m.Pagination.Chunked() {
		t.Fatal("the build is not in the chunks layout")
	}
	const (
		cannot = "only maps a request onto a file; the targets that run code to do it are cloudflare, netlify and nginx-njs (and feedgen serve does it), or build with pagination.layout: pages"
		notYet = "putting its pages together from chunks at the edge is not implemented yet; cloudflare, netlify and nginx-njs will do it, and feedgen serve does it today, or build with pagination.layout: pages"
	)
	tests := []struct {
		target string
		want   string // the message after "TARGET: " and ErrChunks
	}{
		{"apache", "its pages are put together per request from chunks, and apache " + cannot},
		{"caddy", "its pages are put together per request from chunks, and caddy " + cannot},
		{"cloudflare", notYet},
		{"cloudfront", "its pages are put together per request from chunks, and cloudfront " + cannot},
		{"netlify", notYet},
		{"nginx", "its pages are put together per request from chunks, and nginx " + cannot},
		{"nginx-njs", notYet},
	}
	if len(tests) != len(Targets()) {
		t.Fatalf("%d targets tested, of %d", len(tests), len(Targets()))
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			tg, err := Find(tt.target)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSite(m, root, "127.0.0.1:8080")
			if err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(t.TempDir(), "out")
			_, _, err = Write(tg, s, out, false)
			want := tt.target + ": " + ErrChunks.Error() + ": " + tt.want
			if !errors.Is(err, ErrChunks) || err.Error() != want {
				t.Errorf("got %v\nwant %s", err, want)
			}
			if _, err := os.Stat(out); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("wrote %s (%v)", out, err)
			}
		})
	}
}
