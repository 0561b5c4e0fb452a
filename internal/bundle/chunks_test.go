package bundle

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

// TestChunksVerified checks that verification reads the chunks layout:
// a bundle whose index does not fit its chunks is refused, though every
// file has the bytes the manifest says.
func TestChunksVerified(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: listing.LayoutChunks})
	good := o.write(t, Options{})
	if _, err := read(good); err != nil {
		t.Fatalf("a good bundle: %v", err)
	}
	index := chunk.IndexPath(listing.Dir)
	// The index with its first end one byte early, and the manifest with
	// that index's new size and SHA-256.
	var oldSum, newSum string
	es := edit(entries(t, good), index, func(e *zipEntry) bool {
		s := sha256.Sum256(e.data)
		oldSum = hex.EncodeToString(s[:])
		i := strings.Index(string(e.data), `"ends":[`) + len(`"ends":[`)
		j := i + strings.IndexByte(string(e.data[i:]), ',')
		n, err := strconv.Atoi(string(e.data[i:j]))
		if err != nil {
			t.Fatal(err)
		}
		e.data = append(append(append([]byte{}, e.data[:i]...), strconv.Itoa(n-1)...), e.data[j:]...)
		s = sha256.Sum256(e.data)
		newSum = hex.EncodeToString(s[:])
		return true
	})
	es = edit(es, ManifestName, func(e *zipEntry) bool {
		e.data = []byte(strings.Replace(string(e.data), oldSum, newSum, 1))
		return true
	})
	_, err := read(rezip(t, es))
	if err == nil || !strings.Contains(err.Error(), index+": corrupted: chunk articles/chunks/") {
		t.Fatalf("an index that does not fit its chunks: %v", err)
	}
}
