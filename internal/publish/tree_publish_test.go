package publish

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// treeOpt is the site of TestPublishTree: a dozen chunks in the main
// listing, in several leaves of treeSizes, and a collection per section,
// of two or three leaves but one.
var treeOpt = corpus.Options{Articles: 480, Limits: []int{10, 20}, Seed: 11, Filters: []string{"section"}}

// TestPublishTree publishes builds whose collections have several leaves
// (retree), on every backend, through a bucket that records the order of
// its uploads (leaves and chunks, then roots, then manifest.json): A;
// B, A with a new article at the top; C, B with an article edited; D,
// C with a new article at the top, stopped before its roots, then
// killed after one, then published by the next publish; C again.
func TestPublishTree(t *testing.T) {
	s := newChunksSite(t, treeOpt)
	aDir := s.retree(t)
	s.addTop(t)
	bDir := s.retree(t)
	s.edit(t, 100, "C's edit")
	cDir := s.retree(t)
	s.addTop(t)
	dDir := s.retree(t)
	am, bm, cm, dm := readManifest(t, aDir), readManifest(t, bDir), readManifest(t, cDir), readManifest(t, dDir)
	ia, ib, ic, id := immutables(am), immutables(bm), immutables(cm), immutables(dm)
	if root, ix, _ := readTree(t, aDir, chunk.IndexPath(listing.Dir)); len(root.Leaves) < 3 {
		t.Fatalf("the main listing has %d leaves, want 3 or more", len(root.Leaves))
	} else {
		t.Logf("the main listing: %d articles, %d chunks in %d leaves; %d files", root.Count, len(ix.Chunks), len(root.Leaves), len(am.Files))
	}
	cc := config.DefaultCacheControl

	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		ctx := context.Background()
		url, store := newBucket(t)
		b, rec := record(t, open(t, url))
		res, keys := recordedPublish(t, b, rec, aDir, lockOptions(url, store))
		if l, _ := countKinds(keys); res.Uploaded != len(am.Files)+1 || l < 3 {
			t.Fatalf("the first publish uploaded %d files (%d leaves), want %d", res.Uploaded, l, len(am.Files)+1)
		}
		checkBucket(t, b, aDir, cc, nil)

		t.Run("one new article", func(t *testing.T) {
			// Each collection the article joins (the main listing and its
			// tags') has a new root, and one new leaf, at its top: the
			// others are the ones A's root names, in order. Its chunks
			// that changed, those leaves, those roots and manifest.json
			// are uploaded: nothing else.
			want := []string{manifest.Name}
			sums := map[string]string{}
			for _, f := range am.Files {
				sums[f.Path] = f.SHA256
			}
			joins := 0
			for _, f := range bm.Files {
				if !chunk.IsIndex(f.Path) || sums[f.Path] == f.SHA256 {
					continue
				}
				joins++
				want = append(want, f.Path)
				var before []string
				if sums[f.Path] != "" {
					before = leavesOf(t, aDir, f.Path)
				}
				if len(before) < 2 {
					t.Fatalf("%s has %d leaves: want a collection of several", f.Path, len(before))
				}
				// The new leaf is A's first one with the article, or
				// the article alone (its id ends a leaf) before A's.
				after := leavesOf(t, bDir, f.Path)
				added := minus(setOf(after), setOf(before))
				if len(added) != 1 || after[0] != added[0] || !slices.Equal(after[1:], before) && (len(before) == 0 || !slices.Equal(after[1:], before[1:])) {
					t.Errorf("%s: leaves %q, were %q: want one new leaf at the top, the others A's", f.Path, after, before)
				}
			}
			want = append(want, minus(ib, ia)...)
			if l, c := countKinds(want); joins < 2 || l == 0 || l > joins || c == 0 || c > 2*joins {
				t.Fatalf("the article joins %d collections, and changes %d leaves and %d chunks", joins, l, c)
			}
			res, keys := recordedPublish(t, b, rec, bDir, lockOptions(url, store))
			slices.Sort(keys)
			slices.Sort(want)
			if !slices.Equal(keys, want) || res.Uploaded != len(want) {
				t.Errorf("uploaded %d files:\n%q\nwant %d:\n%q", res.Uploaded, keys, len(want), want)
			}
			l, c := countKinds(want)
			t.Logf("one new article in %d collections: uploaded %d roots, %d leaves, %d chunks and %s; %d files unchanged", joins, joins, l, c, manifest.Name, res.Unchanged)
			// A's leaves and chunks stay: an edge may hold A's roots.
			keptA := minus(ia, ib)
			if res.Kept != len(keptA) || res.Deleted != 0 {
				t.Errorf("kept %d, deleted %d; want %d kept (the leaves and chunks only A names), none deleted", res.Kept, res.Deleted, len(keptA))
			}
			checkBucketKeeping(t, b, bDir, cc, nil, keptA)
		})

		t.Run("two manifests", func(t *testing.T) {
			// C: the leaves and chunks only A names go; those B names and
			// C does not stay, for an edge that holds B's roots.
			gone, kept := minus(ia, ib, ic), minus(ib, ic)
			gl, gc := countKinds(gone)
			kl, kc := countKinds(kept)
			if gl == 0 || gc == 0 || kl == 0 || kc == 0 {
				t.Fatalf("%d leaves and %d chunks only A names, %d and %d B names and C does not: want some of each", gl, gc, kl, kc)
			}
			var log bytes.Buffer
			opt := lockOptions(url, store)
			opt.DryRun, opt.Log = true, &log
			publishDir(t, b, cDir, opt)
			var deletes []string
			for line := range strings.Lines(log.String()) {
				if key, ok := strings.CutPrefix(strings.TrimSpace(line), "delete "); ok {
					deletes = append(deletes, key)
				}
			}
			if !slices.Equal(deletes, gone) {
				t.Errorf("the dry run deletes %q, want %q", deletes, gone)
			}
			res, _ := recordedPublish(t, b, rec, cDir, lockOptions(url, store))
			if res.Deleted != len(gone) || res.Kept != len(kept) {
				t.Errorf("deleted %d, kept %d; want %d (%d leaves), %d (%d leaves)", res.Deleted, res.Kept, len(gone), gl, len(kept), kl)
			}
			checkBucketKeeping(t, b, cDir, cc, nil, kept)
		})

		cData, err := os.ReadFile(filepath.Join(cDir, manifest.Name))
		if err != nil {
			t.Fatal(err)
		}
		// stopAt publishes D through the recorder, whose hook cancels the
		// publish when stop says so, and returns the uploads that ended.
		stopAt := func(t *testing.T, stop func(key string, end bool) bool) []string {
			t.Helper()
			pctx, cancel := context.WithCancel(ctx)
			defer cancel()
			rec.take()
			rec.setHook(func(key string, end bool) {
				if stop(key, end) {
					cancel()
				}
			})
			defer rec.setHook(nil)
			opt := lockOptions(url, store)
			opt.Workers = 1
			if _, err := Publish(pctx, b, os.DirFS(dDir), opt); !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want the publish stopped", err)
			}
			keys, err := order(rec.take(), stepOfKey)
			if err != nil {
				t.Error(err)
			}
			if got, err := b.ReadAll(ctx, manifest.Name); err != nil || !bytes.Equal(got, cData) {
				t.Errorf("the stopped publish changed the bucket's %s (%v)", manifest.Name, err)
			}
			// Whatever root the bucket holds, C's or D's, reads whole.
			checkTrees(t, b, cm)
			checkTrees(t, b, dm)
			return keys
		}

		t.Run("stopped before the roots", func(t *testing.T) {
			// Stopped as the first root starts: every new leaf and chunk
			// of D is in the bucket, no root.
			keys := stopAt(t, func(key string, end bool) bool { return !end && stepOfKey(key) == 1 })
			slices.Sort(keys)
			if want := minus(id, ib, ic); !slices.Equal(keys, want) {
				t.Errorf("uploaded %q, want D's new leaves and chunks %q", keys, want)
			}
		})

		t.Run("killed after a root", func(t *testing.T) {
			// The publish after it lists the bucket (the last one did not
			// finish), finds D's leaves and chunks there, and is stopped
			// once it uploaded a root. On disk, it is killed: the kernel
			// drops its flock, and the lock file says it runs. (In a
			// cloud, the lock of a killed publish is taken over after a
			// lease: TestPublishTakesOverDeadLock; here it says that the
			// publish stopped, and the next publish finds the bucket as
			// it would after a kill.)
			var root string
			keys := stopAt(t, func(key string, end bool) bool {
				if end && stepOfKey(key) == 1 && root == "" {
					root = key
				}
				return root != ""
			})
			if !slices.Equal(keys, []string{root}) || !chunk.IsIndex(root) {
				t.Errorf("uploaded %q, want one root (the leaves and chunks are in the bucket)", keys)
			}
			if isFolder(b) {
				killed := lockInfo{Owner: "a killed one", Token: "t0", Started: time.Now(), Renewed: time.Now(), State: lockRunning}
				if err := os.WriteFile(filepath.Join(store, LockName), killed.marshal(), 0o644); err != nil {
					t.Fatal(err)
				}
			}
		})

		t.Run("repaired", func(t *testing.T) {
			// The next publish takes the lock over, lists the bucket and
			// finishes D. It cannot know which roots the stopped one
			// uploaded: every leaf and chunk stays.
			res, _ := recordedPublish(t, b, rec, dDir, lockOptions(url, store))
			if !strings.HasSuffix(res.Remote, " did not finish") {
				t.Errorf("got Remote %q, want that the last publish did not finish", res.Remote)
			}
			kept := minus(mergeSets(ib, ic), id)
			if res.Kept != len(kept) || res.Deleted != 0 {
				t.Errorf("kept %d, deleted %d; want %d kept, none deleted", res.Kept, res.Deleted, len(kept))
			}
			checkBucketKeeping(t, b, dDir, cc, nil, kept)
			checkTrees(t, b, dm)
		})

		t.Run("after the repair", func(t *testing.T) {
			// C again: the bucket's manifest, D's, is trusted again;
			// what neither D nor C names goes (B's), C's leaves and
			// chunks are in the bucket, checked and not uploaded, and
			// those only D names stay.
			gone, kept := minus(ib, ic, id), minus(id, ic)
			res, keys := recordedPublish(t, b, rec, cDir, lockOptions(url, store))
			if res.Remote != "" || res.Deleted != len(gone) || res.Kept != len(kept) || len(gone) == 0 {
				t.Errorf("Remote %q, deleted %d, kept %d; want \"\", %d, %d", res.Remote, res.Deleted, res.Kept, len(gone), len(kept))
			}
			if slices.ContainsFunc(keys, immutable) {
				t.Errorf("uploaded %q: the bucket holds C's leaves and chunks", keys)
			}
			checkBucketKeeping(t, b, cDir, cc, nil, kept)
		})
	})
}

// setOf returns the set of keys.
func setOf(keys []string) map[string]bool {
	set := map[string]bool{}
	for _, k := range keys {
		set[k] = true
	}
	return set
}

// mergeSets returns the union of sets.
func mergeSets(sets ...map[string]bool) map[string]bool {
	out := map[string]bool{}
	for _, s := range sets {
		maps.Copy(out, s)
	}
	return out
}
