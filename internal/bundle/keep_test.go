package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/server"
)

// kept records what a KeepFunc was given: each path's calls, its last
// bytes (copied) and sum.
type kept struct {
	mu    sync.Mutex
	calls map[string]int
	data  map[string][]byte
	sums  map[string][sha256.Size]byte
}

func newKept() *kept {
	return &kept{calls: map[string]int{}, data: map[string][]byte{}, sums: map[string][sha256.Size]byte{}}
}

func (k *kept) keep(path string, data []byte, sum [sha256.Size]byte) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls[path]++
	k.data[path] = slices.Clone(data)
	k.sums[path] = sum
}

// TestReadWithKeepsEachPage checks that ReadWith and OpenWith hand every
// page that passed verification to keep exactly once, with its bytes and
// their SHA-256, and never a page that failed, nor the bundle's own files.
func TestReadWithKeepsEachPage(t *testing.T) {
	o := buildSite(t, smallOpt)
	good := o.write(t, Options{})
	const page = "articles/5/3.json"
	flipped := rezip(t, edit(entries(t, good), page, func(e *zipEntry) bool { e.data[20] ^= 0x20; return true }))
	noManifest := rezip(t, edit(entries(t, good), ManifestName, func(*zipEntry) bool { return false }))
	m := readManifest(t, o.out)

	tests := []struct {
		name    string
		archive []byte
		open    bool   // OpenWith on a file, else ReadWith
		bad     string // the page refused, if any
		none    bool   // no page can be checked
	}{
		{name: "read", archive: good},
		{name: "open", archive: good, open: true},
		{name: "a page changed", archive: flipped, bad: page},
		{name: "a page changed, open", archive: flipped, open: true, bad: page},
		{name: "no manifest", archive: noManifest, none: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newKept()
			var b *Bundle
			var err error
			if tt.open {
				name := filepath.Join(t.TempDir(), "feed.zip")
				if err := os.WriteFile(name, tt.archive, 0o644); err != nil {
					t.Fatal(err)
				}
				b, err = OpenWith(context.Background(), name, k.keep)
			} else {
				b, err = ReadWith(context.Background(), bytes.NewReader(tt.archive), int64(len(tt.archive)), k.keep)
			}
			var ps *Problems
			switch {
			case tt.bad == "" && !tt.none && err != nil:
				t.Fatalf("got error %v, want none", err)
			case (tt.bad != "" || tt.none) && !errors.As(err, &ps):
				t.Fatalf("got error %v, want *Problems", err)
			}
			if b != nil {
				defer b.Close()
			}
			if tt.none {
				if len(k.calls) != 0 {
					t.Errorf("got %d pages kept, want none", len(k.calls))
				}
				return
			}
			for _, f := range m.Files {
				n := k.calls[f.Path]
				if f.Path == tt.bad {
					if n != 0 {
						t.Errorf("%s: kept %d times, want never (it failed verification)", f.Path, n)
					}
					continue
				}
				if n != 1 {
					t.Errorf("%s: kept %d times, want once", f.Path, n)
					continue
				}
				want, err := os.ReadFile(filepath.Join(o.out, filepath.FromSlash(f.Path)))
				if err != nil {
					t.Fatal(err)
				}
				if got := k.data[f.Path]; !bytes.Equal(got, want) {
					t.Errorf("%s: got %.60q, want %.60q", f.Path, got, want)
				}
				if got, want := k.sums[f.Path], sha256.Sum256(want); got != want {
					t.Errorf("%s: got sum %x, want %x", f.Path, got, want)
				}
			}
			for path := range k.calls {
				if reserved(path) || !slices.ContainsFunc(m.Files, func(f manifest.File) bool { return f.Path == path }) {
					t.Errorf("%s: kept, want only the manifest's pages", path)
				}
			}
		})
	}
}

// countingReaderAt counts how many times each byte of an archive is read.
type countingReaderAt struct {
	data []byte
	mu   sync.Mutex
	n    []int
}

func (r *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	n, err := bytes.NewReader(r.data).ReadAt(p, off)
	r.mu.Lock()
	for i := range n {
		r.n[off+int64(i)]++
	}
	r.mu.Unlock()
	return n, err
}

// pageReads returns the fewest and the most times a byte of a page's
// compressed data was read.
func (r *countingReaderAt) pageReads(t *testing.T) (lo, hi int) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(r.data), int64(len(r.data)))
	if err != nil {
		t.Fatal(err)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	lo = -1
	for _, f := range zr.File {
		if reserved(f.Name) || f.CompressedSize64 == 0 {
			continue
		}
		start, err := f.DataOffset()
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range r.n[start : start+int64(f.CompressedSize64)] {
			if lo < 0 || n < lo {
				lo = n
			}
			hi = max(hi, n)
		}
	}
	return lo, hi
}

// TestServeReadsEachPageOnce opens a bundle and starts a server on it as
// serve --bundle does, and checks how many times each page's compressed
// bytes were read from the archive, verification and server together:
// once when the pages verification read are handed over (ReadWith into
// server.Archive); up to twice when the server reads them again
// (not index.json, the same bytes as another page). Every page is then
// answered like the build's folder.
func TestServeReadsEachPageOnce(t *testing.T) {
	o := buildSite(t, smallOpt)
	archive := o.write(t, Options{})
	tests := []struct {
		name     string
		handOver bool
		most     int // reads of a page's bytes; every one is read once at least
	}{
		{"handed over", true, 1},
		{"read again", false, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := &countingReaderAt{data: archive, n: make([]int, len(archive))}
			var pages *server.Batch
			var keep KeepFunc
			if tt.handOver {
				pages = server.NewPages()
				keep = func(_ string, data []byte, sum [sha256.Size]byte) { pages.Add(data, sum) }
			}
			b, err := ReadWith(context.Background(), r, int64(len(archive)), keep)
			if err != nil {
				t.Fatal(err)
			}
			zip := serve(t, server.Options{Source: server.Archive("feed.zip", b.FS(), pages)})
			if lo, hi := r.pageReads(t); lo != 1 || hi != tt.most {
				t.Errorf("got each byte of the pages read %d to %d times, want 1 to %d", lo, hi, tt.most)
			}
			dir := serve(t, server.Options{Source: server.Folder(o.out)})
			for _, f := range b.Manifest.Files {
				k, ok := listing.ParsePageKey(f.Path)
				if !ok || k.Dir != listing.Dir {
					t.Fatalf("%s: not a page of the main listing", f.Path)
				}
				target := "/articles/"
				if !k.Index {
					target += "?limit=" + strconv.Itoa(k.Limit) + "&offset=" + strconv.Itoa(k.Offset)
				}
				want := dir.do(t, "GET", target, nil)
				if got := zip.do(t, "GET", target, nil); got.status != want.status || got.body != want.body {
					t.Errorf("GET %s: got %s %.60q, want %s %.60q", target, got.status, got.body, want.status, want.body)
				}
			}
		})
	}
}
