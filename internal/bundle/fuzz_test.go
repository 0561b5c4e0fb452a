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
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/diag"
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

// TestReadV1 reads the bundle kept in testdata. Run with -update to write
// it again (only after a deliberate change of the format).
func TestReadV1(t *testing.T) {
	if *update {
		o := buildSite(t, corpus.Options{Articles: 3, Limits: []int{2}, Seed: 9})
		if err := os.WriteFile(v1, o.write(t, Options{BundledBy: "feedgen v0.0.0-test"}), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(tiny, tinyBundle(t), 0o644); err != nil {
			t.Fatal(err)
		}
	}
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
			var ps diag.List
			if !errors.As(err, &ps) || len(ps) == 0 {
				t.Fatalf("got error %v, want a diag.List", err)
			}
			for _, p := range ps {
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
