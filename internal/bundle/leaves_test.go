package bundle

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/manifest/manifesttest"
)

// An index is a root (chunks.json) and leaves, named by their SHA-256 as
// chunks are: a bundle holds them all, and verification checks every
// leaf as it does a chunk, and that each root's leaves are there.

// smallLeaves writes the indexes of the build in out again as leaves of
// one chunk each (a test site is too small for more than one leaf of the
// build's sizes), and returns the main listing's leaves.
func smallLeaves(t testing.TB, out string) []chunk.LeafRef {
	t.Helper()
	roots := manifesttest.RewriteIndexes(t, out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
		return chunktest.TreeOf(ix, 1)
	})
	r, err := chunk.ParseRoot(roots[listing.Dir])
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Leaves) < 3 {
		t.Fatalf("the main listing has %d leaves, want 3 or more", len(r.Leaves))
	}
	return r.Leaves
}

// zipOutput writes a bundle of the output o as Write would, without its
// checks: every file under articles/ (strays included), its manifest,
// its config, and bundle.json counting them.
func zipOutput(t testing.TB, o testOutput) []byte {
	t.Helper()
	mdata, err := os.ReadFile(filepath.Join(o.out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(mdata)
	if err != nil {
		t.Fatal(err)
	}
	info := Info{Format: Format, Generator: m.Generator, BundledBy: "feedgen test", BuildTime: m.BuildTime.UTC(), Articles: m.Articles}
	var es []zipEntry
	err = filepath.WalkDir(filepath.Join(o.out, listing.Dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(o.out, p)
		e := zipEntry{data: data}
		e.hdr.Name = filepath.ToSlash(rel)
		es = append(es, e)
		info.Pages++
		info.Bytes += int64(len(data))
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	idata, err := json.MarshalIndent(info, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	for name, data := range map[string][]byte{InfoName: append(idata, '\n'), ConfigName: o.config, ManifestName: mdata} {
		e := zipEntry{data: data}
		e.hdr.Name = name
		es = append(es, e)
	}
	return rezip(t, es)
}

// TestLeavesBundled checks that a bundle of indexes of many leaves holds
// every root, leaf and chunk, verifies, and that a bundle written again
// from the same files (zipOutput) is the same bytes.
func TestLeavesBundled(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 150, Limits: []int{5, 24}, Seed: 3, Layout: layout.ChunksName, Filters: []string{"section"}})
	leaves := smallLeaves(t, o.out)
	// The build's own leaves, named by no root now: not bundled.
	r, err := manifest.Read(os.DirFS(o.out))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range mustGlob(t, o.out, "articles/chunks/*/*.leaf.json") {
		if !slices.ContainsFunc(r.Files, func(f manifest.File) bool { return f.Path == p }) {
			if err := os.Remove(filepath.Join(o.out, p)); err != nil {
				t.Fatal(err)
			}
		}
	}
	good := o.write(t, Options{})
	b, err := read(good)
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, e := range entries(t, good) {
		names[e.hdr.Name] = true
	}
	kinds := map[layout.Kind]int{}
	for _, f := range b.Manifest.Files {
		if !names[f.Path] {
			t.Errorf("%s: not in the bundle", f.Path)
		}
		kinds[layout.Classify(f.Path)]++
	}
	for _, lr := range leaves {
		if !names[lr.Path] {
			t.Errorf("leaf %s: not in the bundle", lr.Path)
		}
	}
	if kinds[layout.Leaf] < len(leaves) || kinds[layout.Chunk] < len(leaves) || kinds[layout.Index] < 2 {
		t.Errorf("the bundle holds %v", kinds)
	}
	if again := zipOutput(t, o); !bytes.Equal(again, good) {
		t.Errorf("zipOutput does not write the bundle Write does")
	}
}

// mustGlob returns the files of out matching pattern, as slash paths.
func mustGlob(t testing.TB, out, pattern string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(out, filepath.FromSlash(pattern)))
	if err != nil {
		t.Fatal(err)
	}
	var rel []string
	for _, p := range m {
		r, _ := filepath.Rel(out, p)
		rel = append(rel, filepath.ToSlash(r))
	}
	return rel
}

// TestLeavesVerified damages a leaf of a bundle, or the root that names
// it, and checks what verification says: the entry at fault first, as
// it says of a chunk or an index, and no intact root or leaf blamed.
func TestLeavesVerified(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 150, Limits: []int{5, 24}, Seed: 3, Layout: layout.ChunksName})
	leaves := smallLeaves(t, o.out)
	for _, p := range mustGlob(t, o.out, "articles/chunks/*/*.leaf.json") {
		if !slices.ContainsFunc(leaves, func(lr chunk.LeafRef) bool { return lr.Path == p }) {
			os.Remove(filepath.Join(o.out, p)) // the build's, named by no root now
		}
	}
	good := o.write(t, Options{})
	if _, err := read(good); err != nil {
		t.Fatal(err)
	}
	index := chunk.IndexPath(listing.Dir)
	leaf := leaves[1].Path
	other := chunk.LeafPath(sha256.Sum256([]byte("another leaf")))
	tests := []struct {
		name string
		edit func(es []zipEntry) []zipEntry
		want []string // among the problems: the entry at fault
		// blamed is the only leaf a problem may name (the chunks only
		// it names are extra: unknown without it)
		blamed string
	}{
		{"leaf with other bytes", func(es []zipEntry) []zipEntry {
			return edit(es, leaf, func(e *zipEntry) bool { e.data[len(e.data)/2] ^= 1; return true })
		}, []string{leaf + ": corrupted: its SHA-256 differs from the manifest"}, leaf},
		{"leaf cut short", func(es []zipEntry) []zipEntry {
			return edit(es, leaf, func(e *zipEntry) bool { e.data = e.data[:len(e.data)-1]; return true })
		}, []string{fmt.Sprintf("%s: corrupted: %d bytes, the manifest says %d", leaf, leaves[1].Size-1, leaves[1].Size)}, leaf},
		{"leaf missing", func(es []zipEntry) []zipEntry {
			return edit(es, leaf, func(*zipEntry) bool { return false })
		}, []string{leaf + ": missing: the manifest lists it"}, leaf},
		{"root names a leaf not there", func(es []zipEntry) []zipEntry {
			var oldSum, newSum string
			es = edit(es, index, func(e *zipEntry) bool {
				s := sha256.Sum256(e.data)
				oldSum = hex.EncodeToString(s[:])
				e.data = bytes.Replace(e.data, []byte(leaf), []byte(other), 1)
				s = sha256.Sum256(e.data)
				newSum = hex.EncodeToString(s[:])
				return true
			})
			return edit(es, ManifestName, func(e *zipEntry) bool {
				e.data = bytes.Replace(e.data, []byte(oldSum), []byte(newSum), 1)
				return true
			})
		}, []string{other + ": missing: the manifest lists it", leaf + ": extra: the manifest does not list it"}, other},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, rezip(t, tt.edit(entries(t, good))))
			for _, p := range tt.want {
				if !slices.Contains(got, p) {
					t.Errorf("got problems\n%s\nwant %q among them", strings.Join(got, "\n"), p)
				}
			}
			for _, p := range got {
				name, _, _ := strings.Cut(p, ": ")
				if k := layout.Classify(name); k == layout.Index || k == layout.Leaf && name != tt.blamed && !slices.Contains(tt.want, p) {
					t.Errorf("an intact index blamed: %q (problems:\n%s)", p, strings.Join(got, "\n"))
				}
			}
		})
	}
}

// TestWriteRefusesLeaf checks that Write refuses an output whose leaf
// does not match its root (other bytes, missing): a build is being
// written, or the output changed since.
func TestWriteRefusesLeaf(t *testing.T) {
	for _, tc := range []struct {
		name   string
		damage func(name string) error
	}{
		{"other bytes", func(name string) error {
			data, err := os.ReadFile(name)
			if err != nil {
				return err
			}
			data[len(data)/2] ^= 1
			return os.WriteFile(name, data, 0o644)
		}},
		{"missing", os.Remove},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := buildSite(t, corpus.Options{Articles: 150, Limits: []int{5, 24}, Seed: 3, Layout: layout.ChunksName})
			leaf := smallLeaves(t, o.out)[1].Path
			if err := tc.damage(filepath.Join(o.out, filepath.FromSlash(leaf))); err != nil {
				t.Fatal(err)
			}
			_, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config})
			want := leaf + ": does not match manifest.json (a build is being written, or died: run feedgen build)"
			if err == nil || err.Error() != want {
				t.Errorf("got %v, want %q", err, want)
			}
		})
	}
}

// TestOldIndexFormat checks a build, and a bundle, of an older feedgen
// (indexes of format 2: flat, at chunks.json, no leaves), written by
// hand: Write refuses the build and verification the bundle, each in one
// line saying to rebuild, never reading the index as a tree.
func TestOldIndexFormat(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 40, Limits: []int{5}, Seed: 5, Layout: layout.ChunksName})
	manifesttest.RewriteIndexes(t, o.out, func(_ string, ix *chunk.Index) ([]byte, map[string][]byte) {
		return chunktest.FormatTwo(ix), nil
	})
	for _, p := range mustGlob(t, o.out, "articles/chunks/*/*.leaf.json") {
		if err := os.Remove(filepath.Join(o.out, p)); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Config: o.config})
	want := "articles/chunks.json: reading chunk index: chunk index format 2, not 3: written by another version of feedgen; rebuild the output (feedgen build)"
	if err == nil || err.Error() != want {
		t.Errorf("Write: got %v, want %q", err, want)
	}

	got := problems(t, zipOutput(t, o))
	want = "articles/chunks.json: chunk index format 2 is not supported (this feedgen reads format 3): open the bundle with the feedgen that wrote it, or rebuild its output (feedgen build) and bundle it again"
	if len(got) != 1 || got[0] != want {
		t.Errorf("verify: got problems\n%s\nwant\n%s", strings.Join(got, "\n"), want)
	}
}
