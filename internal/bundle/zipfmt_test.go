package bundle

import (
	"archive/zip"
	"bytes"
	"errors"
	"fmt"
	"io"
	"testing"
	"time"
)

// TestZipFormat checks that zipfmt.go writes the bytes archive/zip's
// Writer wrote for bundles before it (entries made by CreateRaw from the
// header of a deflated file of mode 0644 modified at the build time), so
// that those bundles verify byte for byte: with zip64 records (65,535
// entries and more), past 4 GiB, with an entry of 4 GiB and more, with a
// name in UTF-8.
func TestZipFormat(t *testing.T) {
	built := time.Date(2026, 11, 23, 6, 30, 15, 0, time.UTC)
	tests := []struct {
		name    string
		entries int
		base    int64 // where the archive starts (archive/zip's SetOffset)
		huge    bool  // the last entry says it holds 5 GiB
	}{
		{"few", 3, 0, false},
		{"zip64 entries", 70000, 0, false},
		{"past 4 GiB", 3, 5 << 30, false},
		{"an entry of 5 GiB", 3, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			type ent struct {
				e    zentry
				data []byte
			}
			var es []ent
			for i := range tt.entries {
				name := fmt.Sprintf("articles/%d/%d.json", i%100, i)
				if i == 1 {
					name = "articles/tag/café/index.json"
				}
				data := []byte(name)
				es = append(es, ent{zentry{name: name, crc: uint32(i * 7919), csize: uint64(len(data)), usize: uint64(3 * len(data))}, data})
			}
			if tt.huge {
				es[len(es)-1].e.csize, es[len(es)-1].e.usize = 5<<30, 6<<30
			}

			// As Write wrote them with archive/zip.
			var want bytes.Buffer
			zw := zip.NewWriter(&want)
			zw.SetOffset(tt.base)
			proto := zip.FileHeader{Name: "x", Method: zip.Deflate, Modified: entryTime(built)}
			proto.SetMode(0o644)
			if _, err := zip.NewWriter(io.Discard).CreateHeader(&proto); err != nil {
				t.Fatal(err)
			}
			proto.Flags &^= 0x8 | 0x800
			for _, x := range es {
				fh := proto
				fh.Name = x.e.name
				if !isASCII(x.e.name) {
					fh.Flags |= 0x800
				}
				fh.Extra = append([]byte(nil), proto.Extra...)
				fh.CRC32, fh.CompressedSize64, fh.UncompressedSize64 = x.e.crc, x.e.csize, x.e.usize
				w, err := zw.CreateRaw(&fh)
				if err != nil {
					t.Fatal(err)
				}
				w.Write(x.data)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}

			// As zipfmt.go writes them, without the seal.
			st := stampOf(built)
			var got []byte
			var offsets []uint64
			at := uint64(tt.base)
			for _, x := range es {
				offsets = append(offsets, at)
				n := len(got)
				got = appendLocal(got, &x.e, st)
				got = append(got, x.data...)
				at += uint64(len(got) - n)
			}
			start := at
			for i, x := range es {
				got = appendCentral(got, &x.e, st, offsets[i])
			}
			got = appendEnd(got, uint64(len(es)), uint64(len(got))-(start-uint64(tt.base)), start, 0)
			if d := firstDiff(got, want.Bytes()); d >= 0 {
				t.Errorf("differs at byte %d of %d (archive/zip: %d): % x, want % x", d, len(got), want.Len(), got[d:min(d+16, len(got))], want.Bytes()[d:min(d+16, want.Len())])
			}
		})
	}
}

// TestZip64Verifies checks that an archive of more than 65,535 entries,
// written as Write writes one (zip64 end records), has no damage: its
// headers are read and written again as they are.
func TestZip64Verifies(t *testing.T) {
	var es []zipEntry
	for i := range 66000 {
		es = append(es, zipEntry{hdr: zip.FileHeader{Name: fmt.Sprintf("articles/%d/%d.json", i%100, i)}, data: []byte("{}")})
	}
	start := time.Now()
	data := rezip(t, es)
	t.Logf("written in %s", time.Since(start))
	if !bytes.Contains(data[len(data)-sealLen-endLen-loc64Len-end64Len:], []byte("PK\x06\x06")) {
		t.Fatal("no zip64 end record")
	}
	_, err := read(data)
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("got %v, want the problems of an archive with no manifest", err)
	}
	if len(ps.Damage) > 0 {
		t.Errorf("got damage %q, want none", ps.Damage)
	}
	data[len(data)-sealLen-endLen-loc64Len-end64Len+32] ^= 1 // the zip64 end record's count of entries
	if _, err := read(data); !errors.As(err, &ps) || len(ps.Damage) != 1 || ps.Damage[0].Msg != "damaged: its zip64 end record counts 66001 entries, its central directory holds 66000" {
		t.Errorf("a count of the zip64 end record changed: got %v", err)
	}
}
