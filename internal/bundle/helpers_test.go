package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/corpus"
)

// buildTime is the build time of the test sites.
var buildTime = time.Date(2026, 11, 23, 6, 30, 15, 0, time.UTC)

// testOutput is a built site: its config and output folder.
type testOutput struct {
	config []byte
	out    string
}

// buildSite writes a corpus site into a temporary folder and builds it.
func buildSite(t testing.TB, opt corpus.Options) testOutput {
	t.Helper()
	dir := t.TempDir()
	if _, err := corpus.Write(dir, opt); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	_, err := build.New(build.Options{
		FS: os.DirFS(dir), ConfigName: corpus.ConfigPath, Root: dir, OutDir: out,
		Now: func() time.Time { return buildTime }, Generator: "feedgen test",
	}).Build(context.Background())
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	config, err := os.ReadFile(filepath.Join(dir, corpus.ConfigPath))
	if err != nil {
		t.Fatal(err)
	}
	return testOutput{config: config, out: out}
}

// small is a site of 12 articles with limits 5 and 10, every offset.
var smallOpt = corpus.Options{Articles: 12, Limits: []int{5, 10}, Seed: 3}

// write bundles o with opt (Config and BundledBy filled in when empty).
func (o testOutput) write(t testing.TB, opt Options) []byte {
	t.Helper()
	if opt.Config == nil {
		opt.Config = o.config
	}
	if opt.BundledBy == "" {
		opt.BundledBy = "feedgen test"
	}
	var buf bytes.Buffer
	if _, err := Write(context.Background(), &buf, os.DirFS(o.out), opt); err != nil {
		t.Fatalf("write: %v", err)
	}
	return buf.Bytes()
}

// read verifies an archive in memory.
func read(data []byte) (*Bundle, error) {
	return Read(context.Background(), bytes.NewReader(data), int64(len(data)))
}

// problems verifies data and returns its problems as lines, as Report
// gives them; it fails the test on an error that is not *Problems.
func problems(t testing.TB, data []byte) []string {
	t.Helper()
	_, err := read(data)
	if err == nil {
		return nil
	}
	var ps *Problems
	if !errors.As(err, &ps) {
		t.Fatalf("got error %v, want *Problems", err)
	}
	var lines []string
	for _, p := range ps.Report() {
		lines = append(lines, p.String())
	}
	return lines
}

// zipEntry is one entry to write with rezip.
type zipEntry struct {
	hdr  zip.FileHeader
	data []byte // uncompressed
}

// entries reads every entry of an archive, decompressed.
func entries(t testing.TB, data []byte) []zipEntry {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var es []zipEntry
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		es = append(es, zipEntry{hdr: f.FileHeader, data: b})
	}
	return es
}

// rezip writes es as a new archive as Write writes one (entries sorted
// by name, deflated, dated with buildTime, sealed), whatever their
// headers say: an archive whose bytes are all as feedgen writes them,
// with the entries given.
func rezip(t testing.TB, es []zipEntry) []byte {
	t.Helper()
	es = slices.Clone(es)
	slices.SortStableFunc(es, func(a, b zipEntry) int { return strings.Compare(a.hdr.Name, b.hdr.Name) })
	var buf bytes.Buffer
	zw := newZipWriter(&buf, buildTime)
	c := newCompressor(DefaultLevel)
	for _, e := range es {
		var comp bytes.Buffer
		c.Reset(&comp)
		if _, err := c.Write(e.data); err != nil {
			t.Fatal(err)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if err := zw.add(e.hdr.Name, crc32.ChecksumIEEE(e.data), int64(len(e.data)), comp.Bytes(), sha256.Sum256(comp.Bytes())); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// otherZip writes es as a new archive with the zip package's own writer
// (deflate, data descriptors): what another zip tool could make of a
// bundle.
func otherZip(t testing.TB, es []zipEntry) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		h := zip.FileHeader{Name: e.hdr.Name, Method: e.hdr.Method, Modified: e.hdr.Modified}
		h.SetMode(e.hdr.Mode())
		w, err := zw.CreateHeader(&h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(e.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// edit returns the entries with the one named name changed by f; f
// returning false drops it.
func edit(es []zipEntry, name string, f func(*zipEntry) bool) []zipEntry {
	var out []zipEntry
	for _, e := range es {
		e.data = slices.Clone(e.data)
		if e.hdr.Name == name && !f(&e) {
			continue
		}
		out = append(out, e)
	}
	return out
}

// patchCentral sets the 4 bytes at field (an offset in the record) of the
// central directory record of the entry name in data to v.
func patchCentral(t testing.TB, data []byte, name string, field int, v uint32) {
	t.Helper()
	for i := bytes.LastIndex(data, []byte("PK\x01\x02")); i >= 0; i = bytes.LastIndex(data[:i], []byte("PK\x01\x02")) {
		n := int(binary.LittleEndian.Uint16(data[i+28:]))
		if i+46+n <= len(data) && string(data[i+46:i+46+n]) == name {
			binary.LittleEndian.PutUint32(data[i+field:], v)
			return
		}
	}
	t.Fatalf("no central directory record of %s", name)
}
