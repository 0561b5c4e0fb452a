package chunktest

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
)

// TestFormatTwo compares FormatTwo with an index that feedgen wrote in
// format 2, the last before trees (testdata/format2.json: 80 articles in
// two chunks), byte for byte.
func TestFormatTwo(t *testing.T) {
	want, err := os.ReadFile("testdata/format2.json")
	if err != nil {
		t.Fatal(err)
	}
	var ix chunk.Index
	if err := json.Unmarshal(want, &ix); err != nil {
		t.Fatal(err)
	}
	if len(ix.Chunks) < 2 {
		t.Fatalf("%d chunks, want an index of several", len(ix.Chunks))
	}
	if got := FormatTwo(&ix); string(got) != string(want) {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
