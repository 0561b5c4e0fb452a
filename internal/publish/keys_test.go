package publish

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestBuildWrites: a publish deletes only the keys a feedgen build
// writes; one of each kind, and names no build writes.
func TestBuildWrites(t *testing.T) {
	sum := [32]byte{0xab, 1, 2}
	ch := chunk.ChunkPath(sum)
	for _, tt := range []struct {
		key  string
		want bool
	}{
		{"articles/20/40.json", true},                         // a page
		{"articles/index.json", true},                         // the main index page
		{"articles/tag/go/index.json", true},                  // a collection's index page
		{"articles/tag/go/20/0.json", true},                   // a collection's page
		{ch, true},                                            // a chunk
		{"articles/chunks.json", true},                        // the main listing's chunk index
		{"articles/tag/go/chunks.json", true},                 // a collection's chunk index
		{"articles/20/40.json.18a3f00c2b1e4d5a.tmp", true},    // a stopped publish's temporary file
		{ch + ".18a3f00c2b1e4d5a.tmp", true},                  // of a chunk
		{chunk.LeafPath(sum), true},                           // a leaf of an index
		{chunk.LeafPath(sum) + ".18a3f00c2b1e4d5a.tmp", true}, // of a leaf
		{"articles/index.html", false},                        // a web root's own
		{"articles/news/post.md", false},                      // a source article
		{"articles/20/040.json", false},                       // not canonical
		{"articles/20/x.json", false},                         // no offset
		{"articles/0/0.json", false},                          // limit 0
		{"articles/20/40.json.tmp", false},                    // no fileblob suffix
		{"articles/20/40.json.XYZ.tmp", false},                // not hex
		{"articles/notes.txt.18a3f00c2b1e4d5a.tmp", false},    // a temporary file of no build key
	} {
		if got := buildWrites(tt.key); got != tt.want {
			t.Errorf("buildWrites(%q) = %v, want %v", tt.key, got, tt.want)
		}
	}
}

// TestPublishKeepsForeign: a bucket folder whose articles/ holds files
// no feedgen build writes (a web root's index.html, a source article):
// the first publish (no manifest: the folder is listed), a publish of a
// new build (listed again) and --full keep them, count them in the
// summary, and a dry run names them; the pages the build no longer has
// go.
func TestPublishKeepsForeign(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	opt := lockOptions(url, store)
	opt.OutputDir = s.out
	foreign := map[string]string{
		"articles/index.html":       "<h1>mine</h1>",
		"articles/news/precious.md": "---\nid: 1\n---\nmine",
		"articles/20/notes.txt":     "mine",
	}
	for k, v := range foreign {
		testfiles.WriteFile(t, filepath.Join(store, filepath.FromSlash(k)), v)
	}
	stale := filepath.Join(store, "articles", "999", "0.json")
	testfiles.WriteFile(t, stale, "{}")

	var log strings.Builder
	opt.DryRun, opt.Log = true, &log
	res, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
	if err != nil {
		t.Fatal(err)
	}
	for k := range foreign {
		if !strings.Contains(log.String(), "keep "+k+": no feedgen build writes it\n") {
			t.Errorf("the dry run does not name %s:\n%s", k, log.String())
		}
	}
	if !strings.Contains(log.String(), "delete articles/999/0.json\n") || strings.Count(log.String(), "delete ") != 1 {
		t.Errorf("the dry run does not delete the stale page alone:\n%s", log.String())
	}
	if want := ", would keep 3 files under articles/ that no feedgen build writes, in "; !strings.Contains(res.Summary(), want) {
		t.Errorf("dry run summary %q, want %q", res.Summary(), want)
	}
	opt.DryRun, opt.Log = false, nil
	check := func(what string, res *Result) {
		t.Helper()
		for k, v := range foreign {
			data, err := os.ReadFile(filepath.Join(store, filepath.FromSlash(k)))
			if err != nil || string(data) != v {
				t.Errorf("%s: %s: %q, %v", what, k, data, err)
			}
		}
		if res.Foreign != 3 || res.Kept != 3 || !strings.Contains(res.Summary(), ", kept 3 files under articles/ that no feedgen build writes, in ") {
			t.Errorf("%s: foreign %d, kept %d: %s", what, res.Foreign, res.Kept, res.Summary())
		}
	}
	res = publishDir(t, b, s.out, opt)
	check("first publish", res)
	if res.Deleted != 1 {
		t.Errorf("deleted %d, want the stale page", res.Deleted)
	}
	if _, err := os.Stat(stale); !os.IsNotExist(err) {
		t.Errorf("the stale page is there: %v", err)
	}
	s.remove(t, 3)
	res = publishDir(t, b, s.out, opt)
	// A new build: the bucket is not listed, what is not the build's is
	// neither seen nor touched.
	if res.Foreign != 0 || res.Listed {
		t.Errorf("new build: foreign %d, listed %v; want none seen, nothing listed", res.Foreign, res.Listed)
	}
	if res.Deleted == 0 {
		t.Error("a new build with fewer pages deleted none")
	}
	opt.Full = true
	check("--full", publishDir(t, b, s.out, opt))
	s.remove(t, 1)
	check("new build, --full", publishDir(t, b, s.out, opt))
}

// TestCheckBucketSite: a bucket folder that is, lies in or holds the
// site's content folder, or holds its config.yaml, is refused; one
// apart, or the site's build folder's sibling, is not.
func TestCheckBucketSite(t *testing.T) {
	dir := t.TempDir()
	site := filepath.Join(dir, "site")
	content := filepath.Join(site, "content")
	cfg := filepath.Join(site, "config.yaml")
	testfiles.WriteFile(t, filepath.Join(content, "digests", "a.md"), "x")
	testfiles.WriteFile(t, cfg, "x")
	if err := os.Symlink(filepath.Join(content, "digests"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		bucket, want string
	}{
		{"apart", ""},
		{"site/www", ""},
		{"site/content", "is the site's content folder"},
		{"site/content/digests", "lies inside the site's content folder"},
		{"site/content/new/folder", "lies inside the site's content folder"},
		{"link", "lies inside the site's content folder"},
		{"site", "holds the site's content folder"},
		{".", "holds the site's content folder"},
	} {
		t.Run(tt.bucket, func(t *testing.T) {
			err := CheckBucketSite(filepath.Join(dir, tt.bucket), content, cfg)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want) || !strings.HasSuffix(err.Error(), "; publish to a folder apart from the site")):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
	// A content folder elsewhere: a bucket holding it is refused too.
	other := filepath.Join(dir, "other-content")
	testfiles.WriteFile(t, filepath.Join(other, "a.md"), "x")
	if err := CheckBucketSite(dir, other, ""); err == nil || !strings.Contains(err.Error(), "holds the site's content folder") {
		t.Errorf("got %v, want a refusal of a bucket holding the content", err)
	}
	// The site's folder, its content elsewhere: it holds config.yaml.
	if err := CheckBucketSite(site, other, cfg); err == nil || !strings.Contains(err.Error(), "holds the site's "+cfg+": its articles/ would go into the site") {
		t.Errorf("got %v, want a refusal of a bucket holding config.yaml", err)
	}
}
