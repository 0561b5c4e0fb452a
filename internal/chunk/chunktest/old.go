package chunktest

import (
	"strconv"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
)

// FormatTwo returns index ix as feedgen wrote it before format 3: flat,
// at the collection's chunks.json, one line a chunk, positions counted
// in the collection; for tests that such a build is refused or rebuilt,
// never read as format 3.
//
//	{"format":2,"count":N,"chunks":[
//	{"first":0,"path":"articles/chunks/cd/cd….json","size":S,"ends":[…]},
//	…]}
func FormatTwo(ix *chunk.Index) []byte {
	dst := []byte(`{"format":2,"count":` + strconv.Itoa(ix.Count) + `,"chunks":[`)
	first := 0
	for i, r := range ix.Chunks {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, "\n"+`{"first":`...)
		dst = strconv.AppendInt(dst, int64(first), 10)
		first += len(r.Ends)
		dst = append(dst, `,"path":`...)
		dst = listing.AppendString(dst, r.Path)
		dst = append(dst, `,"size":`...)
		dst = strconv.AppendInt(dst, int64(r.Size), 10)
		dst = append(dst, `,"ends":[`...)
		for j, e := range r.Ends {
			if j > 0 {
				dst = append(dst, ',')
			}
			dst = strconv.AppendInt(dst, int64(e), 10)
		}
		dst = append(dst, "]}"...)
	}
	return append(dst, "]}\n"...)
}
