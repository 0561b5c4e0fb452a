package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// TestChunksVerified checks that verification reads the chunks layout:
// a bundle whose index does not fit its chunks is refused, though every
// file has the bytes the manifest says.
func TestChunksVerified(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
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
	if err == nil || !strings.Contains(err.Error(), index+": corrupted: does not fit its chunks: chunk articles/chunks/") {
		t.Fatalf("an index that does not fit its chunks: %v", err)
	}
}

// TestChunksIndexMissingSaidOnce checks that an index missing from the
// bundle, or cut short, is one problem, said as a page's, not a second
// one from the check of the indexes, which cannot read it.
func TestChunksIndexMissingSaidOnce(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	good := o.write(t, Options{})
	index := chunk.IndexPath(listing.Dir)
	tests := []struct {
		name string
		edit func(*zipEntry) bool
		want string
	}{
		{"missing", func(*zipEntry) bool { return false }, index + ": missing: the manifest lists it"},
		{"cut short", func(e *zipEntry) bool { e.data = e.data[:len(e.data)-1]; return true }, index + ": corrupted: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var about []string
			for _, p := range problems(t, rezip(t, edit(entries(t, good), index, tt.edit))) {
				if strings.HasPrefix(p, index+":") {
					about = append(about, p)
				}
			}
			if len(about) != 1 || !strings.HasPrefix(about[0], tt.want) {
				t.Errorf("the problems of %s: %q, want one, %q", index, about, tt.want)
			}
		})
	}
}

// TestWriteRefusesIndexNotFitting checks that Write refuses an output of
// the chunks layout whose index does not fit its chunks, though every
// file has the bytes the manifest says (its index's entry was fixed):
// such a bundle would serve invalid JSON.
func TestWriteRefusesIndexNotFitting(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	if _, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config}); err != nil {
		t.Fatalf("the output as built: %v", err)
	}
	index := chunk.IndexPath(listing.Dir)
	name := filepath.Join(o.out, filepath.FromSlash(index))
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	// The first end of the first chunk one byte early: the index still
	// parses, its chunk is cut in the middle of an article.
	line := bytes.SplitAfter(data, []byte("\n"))[1]
	i := bytes.Index(data, line) + bytes.Index(line, []byte(`"ends":[`)) + len(`"ends":[`)
	j := i + bytes.IndexByte(data[i:], ',')
	n, err := strconv.Atoi(string(data[i:j]))
	if err != nil {
		t.Fatal(err)
	}
	data = slices.Concat(data[:i], []byte(strconv.Itoa(n-1)), data[j:])
	if err := os.WriteFile(name, data, 0o644); err != nil {
		t.Fatal(err)
	}
	m := readManifest(t, o.out)
	for k, f := range m.Files {
		if f.Path == index {
			sum := sha256.Sum256(data)
			m.Files[k].Size, m.Files[k].SHA256 = int64(len(data)), hex.EncodeToString(sum[:])
		}
	}
	if err := os.WriteFile(filepath.Join(o.out, manifest.Name), m.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config})
	want := regexp.MustCompile(`^articles/chunks\.json: does not fit its chunks: chunk articles/chunks/[0-9a-f]{2}/[0-9a-f]{64}\.json: article 0 is not at 1\.\.\d+: run feedgen build \(it writes such an index again\), and bundle once it is done$`)
	if err == nil || !want.MatchString(err.Error()) {
		t.Errorf("got %v, want an error matching %s", err, want)
	}
}
