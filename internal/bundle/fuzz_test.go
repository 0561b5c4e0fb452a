package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/server"
)

var update = flag.Bool("update", false, "rewrite the bundles in testdata")

// v1 is a bundle of format 1 kept in testdata: what this feedgen wrote
// must stay readable by every later one.
const v1 = "testdata/v1.zip"

// tiny is the smallest bundle there is, a seed for FuzzRead: the two
// pages of an empty listing and a one-line config.
const tiny = "testdata/tiny.zip"

func tinyBundle(t testing.TB) []byte {
	t.Helper()
	page := []byte(`{"count":0,"next":null,"previous":null,"results":[]}`)
	sum := sha256.Sum256(page)
	m := manifest.Manifest{
		Format: manifest.Format, Generator: "feedgen test", BuildTime: buildTime,
		BaseURL: "https://api.example.com", Pagination: listing.Pagination{DefaultLimit: 1, MaxLimit: 1, Limits: []int{1}, Offsets: "all"},
		Collections: []manifest.Collection{{Dir: "articles", Params: []listing.Param{}}},
		Files: []manifest.File{
			{Path: "articles/1/0.json", Size: int64(len(page)), SHA256: hex.EncodeToString(sum[:])},
			{Path: "articles/index.json", Size: int64(len(page)), SHA256: hex.EncodeToString(sum[:])},
		},
	}
	output := fstest.MapFS{
		"manifest.json":       {Data: m.Marshal()},
		"articles/1/0.json":   {Data: page},
		"articles/index.json": {Data: page},
	}
	var buf bytes.Buffer
	if _, err := Write(context.Background(), &buf, output, Options{Config: []byte("site_url: x\n")}); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestReadTiny(t *testing.T) {
	if *update {
		if err := os.WriteFile(tiny, tinyBundle(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(tiny)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(data, tinyBundle(t)) {
		t.Errorf("%s differs from what Write writes today: the bytes of a bundle changed (run with -update if deliberate)", tiny)
	}
	if _, err := read(data); err != nil {
		t.Errorf("got %v, want it to verify", err)
	}
}

// TestReadV1 reads the bundle kept in testdata: one of format 1 as
// feedgen wrote them before they had a seal (see zipfmt.go), kept as it
// is, never written again. Its every header is checked as those of a
// bundle of today are.
func TestReadV1(t *testing.T) {
	data, err := os.ReadFile(v1)
	if err != nil {
		t.Fatal(err)
	}
	b, err := read(data)
	if err != nil {
		t.Fatalf("got %v, want the bundle in %s to verify", err, v1)
	}
	if b.Info.Format != 1 || b.Info.Articles != 3 || b.Info.Pages != 4 || len(b.Manifest.Files) != 4 {
		t.Errorf("got %+v, want format 1, 3 articles, 4 pages", b.Info)
	}
	page, err := fs.ReadFile(b.FS(), "articles/2/2.json")
	if err != nil || !bytes.HasPrefix(page, []byte(`{"count":3,"next":null,`)) {
		t.Errorf("got articles/2/2.json %.40q, %v", page, err)
	}
}

// FuzzRead feeds Read arbitrary archives, starting from the bundle in
// testdata and damaged copies of it: it must never panic, and either
// accept the archive with a manifest whose every page reads back, or
// name what is wrong, one line each.
func FuzzRead(f *testing.F) {
	seeds, err := filepath.Glob("testdata/*.zip")
	if err != nil || len(seeds) == 0 {
		f.Fatalf("no seed archives in testdata: %v", err)
	}
	for _, name := range seeds {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
		f.Add(data[:len(data)/2])
		f.Add(data[:len(data)-1])
		flipped := bytes.Clone(data)
		flipped[len(flipped)/3] ^= 0xff
		f.Add(flipped)
	}
	f.Add([]byte{})
	f.Add([]byte("PK\x05\x06" + strings.Repeat("\x00", 18)))
	f.Fuzz(func(t *testing.T, data []byte) {
		b, err := read(data)
		if err != nil {
			var ps *Problems
			if !errors.As(err, &ps) || len(ps.Report()) == 0 {
				t.Fatalf("got error %v, want *Problems", err)
			}
			for _, p := range append(ps.Report(), ps.Damage...) {
				if p.Msg == "" || strings.ContainsAny(p.String(), "\n\r") {
					t.Errorf("bad problem line %q", p.String())
				}
			}
			return
		}
		if b.Manifest == nil {
			t.Fatal("accepted without a manifest")
		}
		for _, file := range b.Manifest.Files {
			r, err := b.FS().Open(file.Path)
			if err != nil {
				t.Fatalf("%s: %v", file.Path, err)
			}
			n, err := io.Copy(io.Discard, r)
			r.Close()
			if err != nil || n != file.Size {
				t.Fatalf("%s: read %d bytes, %v; want %d", file.Path, n, err, file.Size)
			}
		}
		// What verify accepts, serve --bundle serves.
		if _, err := server.New(context.Background(), server.Options{Source: server.Archive("fuzz.zip", b.FS(), nil), StartTimeout: time.Millisecond}); err != nil {
			t.Fatalf("a bundle that reads as sound does not serve: %v", err)
		}
	})
}

// TestReadCanceled checks that a canceled Read stops with the context's
// error.
func TestReadCanceled(t *testing.T) {
	o := buildSite(t, smallOpt)
	data := o.write(t, Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, bytes.NewReader(data), int64(len(data))); !errors.Is(err, context.Canceled) {
		t.Errorf("got %v, want context.Canceled", err)
	}
}

// FuzzFlip changes one byte of a bundle (testdata's tiny one, or one of
// the chunks layout of 60 articles, larger than TestEveryByte can walk
// byte by byte): whatever the byte and however it changes, verification
// refuses it.
func FuzzFlip(f *testing.F) {
	tinyData, err := os.ReadFile(tiny)
	if err != nil {
		f.Fatal(err)
	}
	o := buildSite(f, corpus.Options{Articles: 60, Limits: []int{5, 20}, Seed: 7, Layout: layout.ChunksName, Filters: []string{"author", "tag"}})
	bundles := [][]byte{tinyData, o.write(f, Options{})}
	for _, at := range []uint{0, 30, 100, 1000, 5000, 20000} {
		f.Add(uint8(1), at, byte(0x80))
		f.Add(uint8(0), at, byte(0x01))
	}
	f.Add(uint8(1), uint(1<<40), byte(0xff)) // the end
	f.Fuzz(func(t *testing.T, which uint8, at uint, mask byte) {
		good := bundles[int(which)%len(bundles)]
		if mask == 0 {
			return
		}
		b := slices.Clone(good)
		if at >= uint(len(b)) {
			at = uint(len(b)) - 1 - at%64 // near the end: the end records and the seal
		}
		b[at] ^= mask
		if _, err := read(b); err == nil {
			t.Fatalf("byte %d of %d ^ %#x: verifies", at, len(b), mask)
		}
	})
}
