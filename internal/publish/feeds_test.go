package publish

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
)

// TestPublishFeeds publishes a build with reader feeds, in both layouts,
// to every backend: each feed goes up with its format's Content-Type
// (application/rss+xml and application/atom+xml with charset=utf-8,
// application/feed+json) and the configured Cache-Control (checkBucket
// checks every object's); after an edit of the newest article, the
// feeds of its collections go up again, and the bucket is the build.
func TestPublishFeeds(t *testing.T) {
	opt := corpus.Options{Articles: 14, Limits: []int{5, 10}, Seed: 7, Filters: []string{"tag"}, Feeds: true}
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		for _, lay := range []string{layout.PagesName, layout.ChunksName} {
			t.Run(lay, func(t *testing.T) {
				s := newSite(t, opt)
				if lay == layout.ChunksName {
					s.setLayout(t, lay)
				}
				feeds := 0
				for _, f := range readManifest(t, s.out).Files {
					if layout.Classify(f.Path) == layout.Feed {
						feeds++
					}
				}
				if feeds < 6 {
					t.Fatalf("%d feeds in the build, want the main listing's and its tags'", feeds)
				}
				url, store := newBucket(t)
				b := open(t, url)
				publishDir(t, b, s.out, lockOptions(url, store))
				checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
				for _, key := range []string{"articles/feed.rss", "articles/feed.atom", "articles/feed.json"} {
					if isFolder(b) {
						break // a folder keeps no Content-Type
					}
					a, err := b.Attributes(context.Background(), key)
					if err != nil {
						t.Fatal(err)
					}
					if want := map[string]string{"rss": "application/rss+xml; charset=utf-8", "atom": "application/atom+xml; charset=utf-8", "json": "application/feed+json"}[key[strings.LastIndex(key, ".")+1:]]; a.ContentType != want {
						t.Errorf("%s: Content-Type %q, want %q", key, a.ContentType, want)
					}
				}
				// A repair (the bucket's manifest not publish's) checks every
				// object, and finds the feeds' as they were uploaded.
				data, err := os.ReadFile(filepath.Join(s.out, manifest.Name))
				if err != nil {
					t.Fatal(err)
				}
				if !isFolder(b) {
					if err := b.WriteAll(context.Background(), manifest.Name, data, nil); err != nil {
						t.Fatal(err)
					}
					res := publishDir(t, b, s.out, lockOptions(url, store))
					if res.Uploaded != 1 || res.Checked == 0 {
						t.Errorf("repair: uploaded %d (want the manifest only), checked %d", res.Uploaded, res.Checked)
					}
				}
				before := readManifest(t, s.out)
				s.edit(t, 0, "An edited title")
				uploads, _ := changed(before, readManifest(t, s.out))
				res := publishDir(t, b, s.out, lockOptions(url, store))
				if res.Uploaded < 3 || res.Uploaded != uploads+1 {
					t.Errorf("uploaded %d after the edit, want the %d files that changed (feeds among them) and the manifest", res.Uploaded, uploads)
				}
				// The chunks of the build before stay for one more publish.
				checkBucketKeeping(t, b, s.out, config.DefaultCacheControl, nil, minus(immutables(before), immutables(readManifest(t, s.out))))
			})
		}
	})
}
