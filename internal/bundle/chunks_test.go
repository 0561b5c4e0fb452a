package bundle

import (
	"context"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest/manifesttest"
)

// earlyEnd writes the main listing's index of the build in out again
// with its first end one byte early, its leaf and root renamed and
// resized as a build would (the manifest too): the index still parses,
// its first chunk is cut in the middle of an article.
func earlyEnd(t *testing.T, out string) {
	t.Helper()
	manifesttest.RewriteIndexes(t, out, func(dir string, ix *chunk.Index) ([]byte, map[string][]byte) {
		if dir == listing.Dir {
			ix.Chunks[0].Ends = slices.Clone(ix.Chunks[0].Ends)
			ix.Chunks[0].Ends[0]--
		}
		return chunktest.Tree(ix)
	})
}

// TestChunksVerified checks that verification reads the chunks layout:
// a bundle whose index does not fit its chunks is refused, though every
// file has the bytes the manifest (or its root) says.
func TestChunksVerified(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	good := o.write(t, Options{})
	if _, err := read(good); err != nil {
		t.Fatalf("a good bundle: %v", err)
	}
	index := chunk.IndexPath(listing.Dir)
	earlyEnd(t, o.out)
	_, err := read(zipOutput(t, o))
	if err == nil || !strings.Contains(err.Error(), index+": corrupted: does not fit its chunks: chunk articles/chunks/") {
		t.Fatalf("an index that does not fit its chunks: %v", err)
	}
}

// TestChunksIndexMissingSaidOnce checks that an index missing from the
// bundle, or cut short, is one problem, said as a page's, not a second
// one from the check of the indexes, which cannot read it.
func TestChunksIndexMissingSaidOnce(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	good := o.write(t, Options{})
	index := chunk.IndexPath(listing.Dir)
	tests := []struct {
		name string
		edit func(*zipEntry) bool
		want string
	}{
		{"missing", func(*zipEntry) bool { return false }, index + ": missing: the manifest lists it"},
		{"cut short", func(e *zipEntry) bool { e.data = e.data[:len(e.data)-1]; return true }, index + ": corrupted: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var about []string
			for _, p := range problems(t, rezip(t, edit(entries(t, good), index, tt.edit))) {
				if strings.HasPrefix(p, index+":") {
					about = append(about, p)
				}
			}
			if len(about) != 1 || !strings.HasPrefix(about[0], tt.want) {
				t.Errorf("the problems of %s: %q, want one, %q", index, about, tt.want)
			}
		})
	}
}

// TestWriteRefusesIndexNotFitting checks that Write refuses an output of
// the chunks layout whose index does not fit its chunks, though every
// file has the bytes the manifest says (its index's entry was fixed):
// such a bundle would serve invalid JSON.
func TestWriteRefusesIndexNotFitting(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	if _, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config}); err != nil {
		t.Fatalf("the output as built: %v", err)
	}
	earlyEnd(t, o.out)
	_, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config})
	want := regexp.MustCompile(`^articles/chunks\.json: does not fit its chunks: chunk articles/chunks/[0-9a-f]{2}/[0-9a-f]{64}\.json: article 0 is not at 1\.\.\d+: run feedgen build \(it writes such an index again\), and bundle once it is done$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("got %v, want an error matching %s", err, want)
	}
}
