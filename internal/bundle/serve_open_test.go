package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"io/fs"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/server"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// openCounter is a file system that records the names opened in it.
type openCounter struct {
	fsys fs.FS

	mu     sync.Mutex
	opened []string
}

func (c *openCounter) Open(name string) (fs.File, error) {
	c.mu.Lock()
	c.opened = append(c.opened, name)
	c.mu.Unlock()
	return c.fsys.Open(name)
}

// TestServeHandsPagesOver checks the start of serve --bundle: the pages
// that verifying the bundle decompressed are handed to the server
// (server.Archive), which opens no page in the archive again, only its
// manifest, and answers every page from them.
func TestServeHandsPagesOver(t *testing.T) {
	site := buildSite(t, smallOpt)
	name := filepath.Join(t.TempDir(), "feed.zip")
	testfiles.WriteFile(t, name, site.write(t, Options{}))
	var stderr bytes.Buffer
	b, pages, err := openServed(context.Background(), name, &stderr)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if pages == nil {
		t.Fatal("got no pages, want the verified pages handed over")
	}
	fsys := &openCounter{fsys: b.FS()}
	s, err := server.New(context.Background(), server.Options{Source: server.Archive(name, fsys, pages)})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"manifest.json"}; !slices.Equal(fsys.opened, want) {
		t.Errorf("the server opened %q in the archive, want %q", fsys.opened, want)
	}
	if stderr.Len() != 0 {
		t.Errorf("got stderr %q, want none", stderr.String())
	}

	for _, f := range b.Manifest.Files {
		k, ok := listing.ParsePageKey(f.Path)
		if !ok || k.Dir != listing.Dir {
			t.Fatalf("%s: not a page of the main listing", f.Path)
		}
		target := "/articles/"
		if !k.Index {
			target += "?limit=" + strconv.Itoa(k.Limit) + "&offset=" + strconv.Itoa(k.Offset)
		}
		want, err := os.ReadFile(filepath.Join(site.out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		w := httptest.NewRecorder()
		s.ServeHTTP(w, httptest.NewRequest("GET", target, nil))
		if got := w.Body.Bytes(); w.Code != 200 || !bytes.Equal(got, want) {
			t.Errorf("GET %s: got %d %.60q, want 200 %.60q", target, w.Code, got, want)
		}
	}
}

// TestServeRefusesDamage checks that serve --bundle refuses a bundle
// that fails verification before anything is served, with verify's
// messages, and hands no pages over.
func TestServeRefusesDamage(t *testing.T) {
	dir := t.TempDir()
	good := buildSite(t, smallOpt).write(t, Options{})
	zr, err := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	const page = "articles/5/1.json"
	flipped := bytes.Clone(good)
	for _, f := range zr.File {
		if f.Name == page {
			off, err := f.DataOffset()
			if err != nil {
				t.Fatal(err)
			}
			flipped[off+int64(f.CompressedSize64)/2] ^= 0x55
		}
	}
	// A byte of the name in the first local header (the zip package
	// reads the central directory's): verify refuses it, and so serve.
	renamed := bytes.Clone(good)
	renamed[30+3] ^= 1
	tests := []struct {
		name string
		data []byte
		line string // the start of stderr
		err  string // after the file's name
	}{
		{"flipped.zip", flipped, "flipped.zip: " + page + ": corrupted: ", ": damaged: restore it from a copy, or write it again from its build with feedgen bundle"},
		{"renamed.zip", renamed, "renamed.zip: " + zr.File[0].Name + ": damaged: its local header's name differs from its central directory record's\n", ": damaged: restore it from a copy, or write it again from its build with feedgen bundle"},
		{"cut.zip", good[:len(good)-100], "cut.zip: truncated: the archive stops before its end", ": 1 problem: the bundle is damaged or not a feedgen bundle"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(dir, tt.name)
			testfiles.WriteFile(t, name, tt.data)
			var stderr bytes.Buffer
			b, pages, err := openServed(context.Background(), name, &stderr)
			if err == nil {
				b.Close()
				t.Fatal("got no error, want the bundle refused")
			}
			if want := name + tt.err; err.Error() != want {
				t.Errorf("got error %q, want %q", err, want)
			}
			if got := strings.TrimPrefix(stderr.String(), dir+string(filepath.Separator)); !strings.HasPrefix(got, tt.line) {
				t.Errorf("got stderr %q, want it to start with %q", got, tt.line)
			}
			if b != nil || pages != nil {
				t.Errorf("got bundle %v, pages %v; want neither", b, pages)
			}
		})
	}
}
