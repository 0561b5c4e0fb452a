package main

import (
	"archive/zip"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// bundleSite writes and builds a site of three articles in dir/site, at
// 2026-01-01T00:00:00Z.
func bundleSite(t *testing.T, dir string) {
	t.Helper()
	site := filepath.Join(dir, "site")
	testfiles.WriteFile(t, filepath.Join(site, "config.yaml"), e2eConfig)
	for _, id := range []string{"1", "2", "3"} {
		testfiles.WriteFile(t, filepath.Join(site, "content/news/politics/a"+id+".md"), article(id))
	}
	env := []string{"SOURCE_DATE_EPOCH=1767225600"}
	if r := runFeedgen(t, dir, env, "build", "--config", "site/config.yaml", "--quiet"); r.code != 0 {
		t.Fatalf("build: exit %d: %s", r.code, r.stderr)
	}
}

// TestBundleE2E bundles a built site (testdata/script/bundle.txtar is the
// command-line session), serves the bundle next to serve --dir (same
// answers), then damages it: verify and serve --bundle refuse it.
func TestBundleE2E(t *testing.T) {
	dir := t.TempDir()
	bundleSite(t, dir)
	if r := runFeedgen(t, dir, nil, "bundle", "-q", "--dir", "site/public", "--config", "site/config.yaml", "-o", "feed.zip"); r.code != 0 {
		t.Fatalf("bundle: exit %d: %s", r.code, r.stderr)
	}
	first, err := os.ReadFile(filepath.Join(dir, "feed.zip"))
	if err != nil {
		t.Fatal(err)
	}
	if info, err := os.Stat(filepath.Join(dir, "feed.zip")); err != nil || info.Mode().Perm()&0o444 != 0o444 {
		t.Errorf("got %v, %v; want a file readable by all (0644 less the umask)", info, err)
	}

	zipped := startServe(t, dir, "serve", "--bundle", "feed.zip", "--addr", "127.0.0.1:0")
	plain := startServe(t, dir, "serve", "--dir", "site/public", "--addr", "127.0.0.1:0")
	for _, tt := range []struct{ method, target string }{
		{"GET", "/articles/"},
		{"GET", "/articles/?limit=20&offset=1"},
		{"GET", "/articles/?limit=20&offset=2"},
		{"GET", "/articles/?offset=3"},
		{"GET", "/articles/?limit=%D9%A2%D9%A0&offset=99"},
		{"HEAD", "/articles/?offset=1"},
		{"GET", "/articles/?limit=7"},
		{"GET", "/articles?limit=20"},
		{"GET", "/manifest.json"},
		{"GET", "/config.yaml"},
		{"OPTIONS", "/articles/"},
		{"POST", "/articles/"},
	} {
		ws, wh, wb := get(t, tt.method, plain.url+tt.target)
		gs, gh, gb := get(t, tt.method, zipped.url+tt.target)
		wh.Del("Date")
		gh.Del("Date")
		if gs != ws || !bytes.Equal(gb, wb) || fmt.Sprint(gh) != fmt.Sprint(wh) {
			t.Errorf("%s %s: serve --bundle gives %d %v %.60q; serve --dir %d %v %.60q", tt.method, tt.target, gs, gh, gb, ws, wh, wb)
		}
	}
	if err := zipped.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	<-zipped.done
	if err := zipped.cmd.Wait(); err != nil {
		t.Errorf("after SIGTERM: %v, want exit 0", err)
	}
	for _, want := range []string{"loaded the build of 2026-01-01T00:00:00Z (3 articles", "from feed.zip", "serving feed.zip on ", "stopped serving feed.zip"} {
		if !strings.Contains(zipped.stderr(), want) {
			t.Errorf("serve --bundle: stderr lacks %q:\n%s", want, zipped.stderr())
		}
	}

	// Damaged copies: a flipped byte in a page, a truncated file.
	zr, err := zip.NewReader(bytes.NewReader(first), int64(len(first)))
	if err != nil {
		t.Fatal(err)
	}
	var off int64 = -1
	for _, f := range zr.File {
		if f.Name == "articles/20/1.json" {
			if off, err = f.DataOffset(); err != nil {
				t.Fatal(err)
			}
			off += int64(f.CompressedSize64) / 2
		}
	}
	flipped := bytes.Clone(first)
	flipped[off] ^= 0x55
	testfiles.WriteFile(t, filepath.Join(dir, "flipped.zip"), flipped)
	testfiles.WriteFile(t, filepath.Join(dir, "cut.zip"), first[:len(first)-100])
	for _, tt := range []struct {
		file, want string
	}{
		{"flipped.zip", "flipped.zip: articles/20/1.json: corrupted: it decompresses to more bytes than the archive says\n" +
			"feedgen: flipped.zip: damaged: restore it from a copy, or write it again from its build with feedgen bundle\n"},
		{"cut.zip", "cut.zip: truncated: the archive stops before its end (its central directory is missing); the file was cut short, copy it again\n" +
			"feedgen: cut.zip: 1 problem: the bundle is damaged or not a feedgen bundle\n"},
	} {
		for _, args := range [][]string{{"verify", tt.file}, {"serve", "--bundle", tt.file, "--addr", "127.0.0.1:0"}} {
			r := runFeedgen(t, dir, nil, args...)
			if r.code != 1 || r.stderr != tt.want {
				t.Errorf("%q: got exit %d, stderr %q; want exit 1, %q", args, r.code, r.stderr, tt.want)
			}
		}
	}
}

// TestBundleLeavesNothing checks that a bundle that fails halfway (a page
// changed since the build) leaves neither the bundle nor a temporary
// file, and keeps an older bundle of the same name as it was.
func TestBundleLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	bundleSite(t, dir)
	testfiles.WriteFile(t, filepath.Join(dir, "out", "feed.zip"), "old bundle")
	testfiles.WriteFile(t, filepath.Join(dir, "site", "public", "articles", "20", "2.json"), "{}")
	r := runFeedgen(t, dir, nil, "bundle", "--force", "--dir", "site/public", "--config", "site/config.yaml", "-o", "out/feed.zip")
	want := "feedgen: site/public: articles/20/2.json: shorter than the manifest says: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("got exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
	}
	entries, err := os.ReadDir(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || entries[0].Name() != "feed.zip" {
		t.Errorf("got %v in out/, want only the old feed.zip", entries)
	}
	if data, _ := os.ReadFile(filepath.Join(dir, "out", "feed.zip")); string(data) != "old bundle" {
		t.Errorf("got feed.zip %q, want the old bundle kept", data)
	}
}

// TestBuildRepairsWhatBundleRefuses damages a page of a build at the
// same size (one byte flipped): bundle refuses it, saying to build; the
// build it names rewrites the page (its status change time is later than
// the manifest's), saying so, and the bundle after it is the bundle of
// the build before the damage, byte for byte.
func TestBuildRepairsWhatBundleRefuses(t *testing.T) {
	dir := t.TempDir()
	bundleSite(t, dir)
	env := []string{"SOURCE_DATE_EPOCH=1767225600"}
	bundle := func(name string) result {
		return runFeedgen(t, dir, env, "bundle", "-q", "--dir", "site/public", "--config", "site/config.yaml", "-o", name)
	}
	if r := bundle("before.zip"); r.code != 0 {
		t.Fatalf("bundle: exit %d: %s", r.code, r.stderr)
	}
	page := filepath.Join(dir, "site", "public", "articles", "20", "1.json")
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 1
	testfiles.WriteFile(t, page, data)

	r := bundle("damaged.zip")
	want := "feedgen: site/public: articles/20/1.json: its SHA-256 differs from the manifest: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done\n"
	if r.code != 1 || r.stderr != want {
		t.Errorf("bundle of the damaged build: exit %d, stderr %q; want 1, %q", r.code, r.stderr, want)
	}
	r = runFeedgen(t, dir, env, "build", "--config", "site/config.yaml")
	if r.code != 0 || !strings.HasPrefix(r.stdout, "3 articles, 4 pages in site/public/articles: 1 written (1 repaired: changed since the last build), 3 unchanged, 0 deleted, ") {
		t.Errorf("build: exit %d, stdout %q, stderr %q; want the page repaired", r.code, r.stdout, r.stderr)
	}
	if r := bundle("after.zip"); r.code != 0 {
		t.Fatalf("bundle after the build: exit %d: %s", r.code, r.stderr)
	}
	before, _ := os.ReadFile(filepath.Join(dir, "before.zip"))
	after, _ := os.ReadFile(filepath.Join(dir, "after.zip"))
	if !bytes.Equal(before, after) {
		t.Errorf("the bundle after the repair differs from the one before the damage")
	}
}
