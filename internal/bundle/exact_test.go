package bundle

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
)

// TestEveryByte damages small bundles one byte at a time, its lowest,
// its highest and all its bits (of the larger one, all its bits, and
// the highest of the last byte of each entry's data), and cuts and
// extends them: verification refuses each, as it holds every byte of a
// bundle (zipfmt.go); the last bits of a deflate stream, which
// decompressing does not read, are held by the seal.
func TestEveryByte(t *testing.T) {
	chunks := buildSite(t, corpus.Options{Articles: 3, Limits: []int{2}, Seed: 2, Layout: layout.ChunksName})
	for _, tt := range []struct {
		name  string
		data  []byte
		masks []byte
	}{
		{"tiny", tinyBundle(t), []byte{0x01, 0x80, 0xff}},
		{"chunks", chunks.write(t, Options{}), []byte{0xff}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			good := tt.data
			if _, err := read(good); err != nil {
				t.Fatalf("the bundle itself: %v", err)
			}
			b := slices.Clone(good)
			last := lastDataBytes(t, good)
			passed := 0
			for i := range b {
				masks := tt.masks
				if last[i] {
					masks = []byte{0x80, 0xff}
				}
				for _, mask := range masks {
					b[i] ^= mask
					if _, err := read(b); err == nil {
						passed++
						if passed <= 5 {
							t.Errorf("byte %d of %d ^ %#x: verifies", i, len(b), mask)
						}
					}
					b[i] ^= mask
				}
			}
			for n := range len(good) {
				if _, err := read(good[:n]); err == nil {
					t.Errorf("cut to %d bytes of %d: verifies", n, len(good))
				}
			}
			for _, tail := range [][]byte{{0}, []byte("PK\x05\x06"), bytes.Repeat([]byte{' '}, 100)} {
				if _, err := read(append(slices.Clone(good), tail...)); err == nil {
					t.Errorf("with %q after it: verifies", tail)
				}
			}
			if passed > 0 {
				t.Errorf("%d changes of one byte verify", passed)
			}
			t.Logf("%d bytes, %s", len(good), time.Since(start))
		})
	}
}

// TestEveryByteV1 damages the bundle of before seals (testdata/v1.zip)
// one byte at a time (every byte of its headers, one in 16 of its data):
// verification refuses each change of its headers and of the data it
// decompresses; the padding bits of a deflate stream, which nothing
// held before seals, it cannot see.
func TestEveryByteV1(t *testing.T) {
	good, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	last := lastDataBytes(t, good)
	data := map[int]bool{}
	zr, _ := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	for _, f := range zr.File {
		at, _ := f.DataOffset()
		for i := range int(f.CompressedSize64) {
			data[int(at)+i] = true
		}
	}
	b := slices.Clone(good)
	for i := range b {
		if data[i] && i%16 != 0 {
			continue
		}
		b[i] ^= 0x80
		if _, err := read(b); err == nil && !last[i] {
			t.Errorf("byte %d of %d ^ 0x80: verifies", i, len(b))
		}
		b[i] ^= 0x80
	}
}

// lastDataBytes returns the offset of the last byte of each entry's data
// in the archive data.
func lastDataBytes(t *testing.T, data []byte) map[int]bool {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	last := map[int]bool{}
	for _, f := range zr.File {
		at, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		last[int(at)+int(f.CompressedSize64)-1] = true
	}
	return last
}

// TestDamageReport checks what verification says of one damaged byte:
// the damaged entry first, in one line, and what follows from it counted,
// not listed; never an intact entry blamed.
func TestDamageReport(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName, Filters: []string{"author"}})
	good := o.write(t, Options{})
	zr, err := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	first := zr.File[0]
	at, err := first.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	head := at - localSize(first.Name) // its local header
	t.Logf("first entry %s", first.Name)
	index := first.Name
	last := zr.File[len(zr.File)-1]
	dirEnd := len(good) - sealLen - endLen
	tests := []struct {
		name   string
		damage func(b []byte)
		want   []string
	}{
		{"name in the local header", func(b []byte) { b[head+localLen+3] ^= 1 }, []string{
			index + ": damaged: its local header's name differs from its central directory record's",
		}},
		{"modification time in the local header", func(b []byte) { b[head+10] ^= 1 }, []string{
			index + ": damaged: its local header's modification time is not the build's (2026-11-23T06:30:15Z)",
		}},
		{"version in the local header", func(b []byte) { b[head+4] ^= 1 }, []string{
			index + ": damaged: its local header's version needed to extract is not what feedgen bundle writes",
		}},
		// Caused by it: the chunk and the leaf only it names extra,
		// bundle.json's two counts.
		{"data", func(b []byte) { b[at+3] ^= 0x10 }, []string{
			index + ": corrupted: it cannot be decompressed (flate: corrupt input before offset 5)",
			"and 4 more problems caused by it, not listed",
		}},
		{"crc in both headers", func(b []byte) { flipCRC(b, head, first.Name) }, []string{
			index + ": corrupted: its CRC-32 differs from the archive's",
			"and 4 more problems caused by it, not listed",
		}},
		{"mode in the central directory", func(b []byte) {
			patchCentral(t, b, last.Name, 38, 0o100755<<16)
		}, []string{
			last.Name + ": damaged: its central directory record's file mode is not what feedgen bundle writes",
		}},
		{"size of the central directory", func(b []byte) { b[dirEnd+12] ^= 1 }, []string{
			"damaged: its end record's central directory size is not what feedgen bundle writes",
		}},
		{"offset of the central directory", func(b []byte) { b[dirEnd+16] ^= 1 }, []string{
			"damaged: its end record's central directory offset is not what feedgen bundle writes",
			"and 3 more problems caused by it, not listed",
		}},
		{"comment", func(b []byte) { b[len(b)-1] ^= 1 }, []string{
			"damaged: its compressed data differs from the SHA-256 in its comment, though every entry reads back whole (a byte changed that decompressing does not see, or one of the comment)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := slices.Clone(good)
			tt.damage(b)
			if got := problems(t, b); !slices.Equal(got, tt.want) {
				t.Errorf("got problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestDamagePrefix checks a bundle with bytes written before it (a file
// concatenated to its front): the one cause is said, how many bytes and
// how to take them off, and everything that follows from it is counted.
func TestDamagePrefix(t *testing.T) {
	good := buildSite(t, corpus.Options{Articles: 12, Limits: []int{5}, Seed: 3}).write(t, Options{})
	for _, prefix := range []string{"PK\x03\x04", strings.Repeat("\x00", 100)} {
		b := append([]byte(prefix), good...)
		got := problems(t, b)
		want := fmt.Sprintf("damaged: %d bytes before its first entry, where feedgen bundle writes none (the entries are where its central directory says, that far on): the bundle is what follows them (tail -c +%d FILE)", len(prefix), len(prefix)+1)
		if len(got) != 2 || got[0] != want || !strings.HasSuffix(got[1], "more problems caused by it, not listed") {
			t.Errorf("%d bytes before: got problems\n%s\nwant\n%s\nand a count of the rest", len(prefix), strings.Join(got, "\n"), want)
		}
		if _, err := read(b[len(prefix):]); err != nil {
			t.Errorf("what follows them: %v", err)
		}
	}
}
