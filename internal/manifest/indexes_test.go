package manifest

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// TestReadIndexes checks the indexes of a build of the chunks layout
// against its manifest, and its chunks against them (Fits).
func TestReadIndexes(t *testing.T) {
	body := []byte(`[{"id":1},{"id":22}]`)
	sum := sha256.Sum256(body)
	cp := chunk.ChunkPath(sum)
	file := func(p string, data []byte) File {
		s := sha256.Sum256(data)
		return File{Path: p, Size: int64(len(data)), SHA256: hex.EncodeToString(s[:])}
	}
	build := func(count int, ends []int, chunkSize int) (*Manifest, map[string][]byte) {
		ix, leaves := chunktest.Tree(&chunk.Index{Count: count, Chunks: []chunk.Ref{{Path: cp, Size: chunkSize, Ends: ends}}})
		m := &Manifest{
			Format: Format, Articles: 2,
			Pagination:  listing.Pagination{DefaultLimit: 1, MaxLimit: 1, Limits: []int{1}, Offsets: "all", Layout: layout.ChunksName},
			Collections: []Collection{{Dir: "articles", Count: 2}},
			Files:       []File{file("articles/chunks.json", ix), file(cp, body)},
		}
		files := map[string][]byte{"articles/chunks.json": ix, cp: body}
		for p, d := range leaves {
			m.Files = append(m.Files, file(p, d))
			files[p] = d
		}
		return m, files
	}
	tests := []struct {
		name      string
		count     int
		ends      []int
		chunkSize int
		read      error
		want      string // the problem of ReadIndexes
		fits      string // Fits' error on the chunk
	}{
		{name: "fits", count: 2, ends: []int{9, 19}, chunkSize: len(body)},
		{name: "an end shifted", count: 2, ends: []int{8, 19}, chunkSize: len(body),
			fits: "articles/chunks.json: does not fit its chunks: chunk " + cp + ": article 0 is not at 1..8"},
		{name: "another count", count: 1, ends: []int{19}, chunkSize: len(body),
			want: "articles/chunks.json: corrupted: it counts 1 articles, the manifest 2"},
		{name: "another size", count: 2, ends: []int{9, 20}, chunkSize: len(body) + 1,
			want: "articles/chunks.json: corrupted: chunk " + cp + " is not in the manifest with 21 bytes"},
		{name: "unreadable", count: 2, ends: []int{9, 19}, chunkSize: len(body), read: errors.New("disk on fire"),
			want: "articles/chunks.json: corrupted: disk on fire"},
		{name: "unreadable, said by the caller", count: 2, ends: []int{9, 19}, chunkSize: len(body), read: fmt.Errorf("not in the bundle: %w", ErrReported)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, files := build(tt.count, tt.ends, tt.chunkSize)
			ix, ps := ReadIndexes(m, func(f File) ([]byte, error) { return files[f.Path], tt.read })
			if got := ps.Error(); got != tt.want {
				t.Errorf("got problems %q, want %q", got, tt.want)
			}
			err := ix.Fits(cp, body)
			if got := ""; err != nil || tt.fits != "" {
				if err != nil {
					got = err.Error()
				}
				if got != tt.fits {
					t.Errorf("Fits: got %q, want %q", got, tt.fits)
				}
			}
			if len(ps) == 0 && tt.read == nil { // an index skipped names no chunk
				if got := ix.Chunks(); len(got) != 1 || got[0] != cp {
					t.Errorf("Chunks() = %q, want [%s]", got, cp)
				}
			}
			// Restricted to no index: none read, none to fit.
			none, ps := ReadIndexesOf(m, func(string) bool { return false }, func(f File) ([]byte, error) {
				t.Errorf("%s read", f.Path)
				return nil, tt.read
			})
			if len(ps) > 0 || none.Fits(cp, nil) != nil || len(none.Chunks()) > 0 {
				t.Errorf("ReadIndexesOf none: %v, %v, %q", ps, none.Fits(cp, nil), none.Chunks())
			}
		})
	}
}
