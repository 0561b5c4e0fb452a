package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// chunksOpt is a site of 300 articles in the chunks layout, with a tag
// filter: about ten chunks in the main listing, and a collection per tag.
var chunksOpt = corpus.Options{Articles: 64, Limits: []int{10, 20}, Seed: 7, Filters: []string{"tag"}}

// stepOfKey is the step of a publish in which an object goes up: chunks
// and leaves, then the rest of articles/ (indexes' roots, or pages), then
// manifest.json; -1 for the lock.
func stepOfKey(key string) int {
	switch {
	case key == KeptName:
		return -1 // publish's record, after the manifest: see checkKept
	case immutable(key):
		return 0
	case strings.HasPrefix(key, Prefix):
		return 1
	case key == manifest.Name:
		return 2
	}
	return -1
}

// minus returns the keys of a that none of bs holds, sorted.
func minus(a map[string]bool, bs ...map[string]bool) []string {
	var out []string
	for k := range a {
		if !slices.ContainsFunc(bs, func(b map[string]bool) bool { return b[k] }) {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// staleFiles counts the files of build a that build b does not have,
// chunks and leaves apart.
func staleFiles(a, b *manifest.Manifest) int {
	have := map[string]bool{}
	for _, f := range b.Files {
		have[f.Path] = true
	}
	n := 0
	for _, f := range a.Files {
		if !have[f.Path] && !immutable(f.Path) {
			n++
		}
	}
	return n
}

// recordedPublish publishes the build in dir to b, whose uploads rec
// records, and checks their order: every chunk in the bucket before the
// first index starts, every index before manifest.json. It returns the
// result and the keys uploaded; rec.lists counts its list requests.
func recordedPublish(t *testing.T, b *blob.Bucket, rec *recorder, dir string, opt Options) (*Result, []string) {
	t.Helper()
	rec.take()
	rec.lists.Store(0)
	res := publishDir(t, b, dir, opt)
	keys, err := order(rec.take(), stepOfKey)
	if err != nil {
		t.Error(err)
	}
	return res, keys
}

// TestPublishChunks publishes a site of layout: chunks, then the changes a
// CI job would publish, through a bucket that records the order of its
// uploads (chunks, then indexes, then manifest.json, each step done
// before the next starts): the chunks' immutable Cache-Control, what an
// unchanged build and a new article upload, the chunks the bucket keeps
// for one more publish, a dry run, a revert, an interrupted publish and
// headers to fix.
func TestPublishChunks(t *testing.T) {
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		ctx := context.Background()
		s := newChunksSite(t, chunksOpt)
		url, store := newBucket(t)
		b, rec := record(t, open(t, url))
		cc := config.DefaultCacheControl
		first := readManifest(t, s.out)
		if !layout.Of(first.Pagination).Assembled || len(immutables(first)) < 10 {
			t.Fatalf("the site is not in the chunks layout, or has few chunks (%d)", len(immutables(first)))
		}

		t.Run("first", func(t *testing.T) {
			res, keys := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: len(first.Files) + 1}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if !res.Chunked || res.Kept != 0 {
				t.Errorf("got Chunked %v, Kept %d; want true, 0", res.Chunked, res.Kept)
			}
			if len(keys) != len(first.Files)+1 || keys[len(keys)-1] != manifest.Name {
				t.Errorf("%d objects uploaded, want %d, manifest.json last", len(keys), len(first.Files)+1)
			}
			checkBucket(t, b, s.out, cc, nil)
		})

		t.Run("unchanged", func(t *testing.T) {
			before := storeSnapshot(t, store)
			res, keys := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Unchanged: len(first.Files) + 1}); got != want || len(keys) > 0 {
				t.Errorf("got %+v, uploaded %q; want %+v, nothing", got, keys, want)
			}
			if res.Listed || rec.lists.Load() != 0 {
				t.Errorf("listed the bucket (%d requests)", rec.lists.Load())
			}
			sameStore(t, store, before)
		})

		// A: the first build; B: with one article more; C: B with one
		// article edited.
		a := first
		s.add(t)
		bm := readManifest(t, s.out)
		keptA := minus(immutables(a), immutables(bm))
		t.Run("one new article", func(t *testing.T) {
			up, del := changed(a, bm)
			var chunks, leaves, indexes int
			for _, f := range bm.Files {
				if !slices.ContainsFunc(a.Files, func(g manifest.File) bool { return g.Path == f.Path && g.SHA256 == f.SHA256 }) {
					switch {
					case chunk.IsChunk(f.Path):
						chunks++
					case chunk.IsLeaf(f.Path):
						leaves++
					default:
						indexes++
					}
				}
			}
			// A handful: each collection the article joins (the main
			// listing and its tags') gets a new root, a new leaf (one
			// that another collection's root may name too) and one or
			// two new chunks, and nothing else changes.
			sizes := map[string]int{}
			for _, c := range a.Collections {
				sizes[c.Dir] = c.Count
			}
			joins := 0
			for _, c := range bm.Collections {
				if n, ok := sizes[c.Dir]; !ok || n != c.Count {
					joins++
				}
			}
			t.Logf("one new article: %d chunks, %d leaves and %d indexes of %d files", chunks, leaves, indexes, len(bm.Files))
			if indexes != joins || leaves == 0 || leaves > joins || chunks == 0 || chunks > 2*joins || up > len(bm.Files)/10 {
				t.Fatalf("one new article, in %d collections, changed %d chunks, %d leaves and %d indexes of %d files", joins, chunks, leaves, indexes, len(bm.Files))
			}
			res, keys := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(bm.Files) - up, Deleted: staleFiles(a, bm)}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			// Exactly the files that changed, and not a key listed: the
			// manifests and the record of what the bucket keeps say what
			// it holds.
			var want []string
			for _, f := range bm.Files {
				if !slices.ContainsFunc(a.Files, func(g manifest.File) bool { return g.Path == f.Path && g.SHA256 == f.SHA256 }) {
					want = append(want, f.Path)
				}
			}
			want = append(want, manifest.Name)
			if slices.Sort(keys); !slices.Equal(keys, slices.Sorted(slices.Values(want))) {
				t.Errorf("uploaded %q, want the files that changed %q", keys, want)
			}
			if res.Listed || rec.lists.Load() != 0 {
				t.Errorf("listed the bucket (%d requests)", rec.lists.Load())
			}
			// The chunks and leaves only A names stay: an edge may hold
			// A's indexes.
			if l, c := countKinds(keptA); res.Kept != len(keptA) || l == 0 || c == 0 || del-staleFiles(a, bm) != len(keptA) {
				t.Errorf("kept %d chunks and leaves, want the %d only A names (%d leaves, %d chunks)", res.Kept, len(keptA), l, c)
			}
			if got := res.Summary(); !strings.Contains(got, fmt.Sprintf(", kept %s, in ", human.Plural(len(keptA), "old chunk"))) {
				t.Errorf("summary %q does not say what it kept", got)
			}
			checkBucketKeeping(t, b, s.out, cc, nil, keptA)
		})

		snapB := s.snapshot(t)
		s.edit(t, 33, "An edited title")
		cm := readManifest(t, s.out)
		keptB := minus(immutables(bm), immutables(cm))
		goneA := minus(immutables(a), immutables(bm), immutables(cm))
		t.Run("dry run", func(t *testing.T) {
			snap := storeSnapshot(t, store)
			var log bytes.Buffer
			opt := lockOptions(url, store)
			opt.DryRun, opt.Log = true, &log
			rec.take()
			res := publishDir(t, b, s.out, opt)
			if got := rec.take(); len(got) > 0 {
				t.Errorf("the dry run uploaded %v", got)
			}
			up, _ := changed(bm, cm)
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(cm.Files) - up, Deleted: staleFiles(bm, cm) + len(goneA)}); got != want || res.Kept != len(keptB) {
				t.Errorf("got %+v, kept %d; want %+v, kept %d", got, res.Kept, want, len(keptB))
			}
			var (
				lines   = strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
				deletes []string
				steps   []int
			)
			line := regexp.MustCompile(`^(upload (\S+) \(\d+(\.\d)? k?B\)|delete (\S+)|keep (\d+) old chunks: the bucket's previous manifest names them, and a cached index may still read them)$`)
			for _, l := range lines {
				m := line.FindStringSubmatch(l)
				switch {
				case m == nil:
					t.Errorf("line %q is not an upload, a delete or a keep", l)
				case m[2] != "":
					steps = append(steps, stepOfKey(m[2]))
				case m[4] != "":
					deletes = append(deletes, m[4])
				case m[5] != fmt.Sprint(len(keptB)):
					t.Errorf("line %q: want %d kept", l, len(keptB))
				}
			}
			if len(steps) != up+1 || !slices.IsSorted(steps) || steps[len(steps)-1] != 2 {
				t.Errorf("the uploads are not chunks, then indexes, then the manifest:\n%s", log.String())
			}
			if l, c := countKinds(goneA); !slices.Equal(deletes, goneA) || l == 0 || c == 0 {
				t.Errorf("deletes %q, want the chunks and leaves only A names %q (some of each)", deletes, goneA)
			}
			if got, want := res.Summary(), fmt.Sprintf(", would delete %d, would keep %s, in ", len(goneA), human.Plural(len(keptB), "old chunk")); !strings.Contains(got, want) {
				t.Errorf("summary %q, want it to hold %q", got, want)
			}
			sameStore(t, store, snap)
		})

		t.Run("two manifests", func(t *testing.T) {
			// The third publish: chunks and leaves only A names go,
			// those B names and C does not stay.
			res, _ := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if res.Listed || rec.lists.Load() != 0 {
				t.Errorf("listed the bucket (%d requests)", rec.lists.Load())
			}
			if res.Deleted != staleFiles(bm, cm)+len(goneA) || res.Kept != len(keptB) || len(goneA) == 0 || len(keptB) == 0 {
				t.Errorf("deleted %d, kept %d; want %d deleted (%d chunks only A names), %d kept", res.Deleted, res.Kept, staleFiles(bm, cm)+len(goneA), len(goneA), len(keptB))
			}
			checkBucketKeeping(t, b, s.out, cc, nil, keptB)
		})

		t.Run("revert", func(t *testing.T) {
			// B again: its chunks and leaves are in the bucket (kept, as
			// publish's record of what it keeps says), neither uploaded
			// nor checked; only roots and the manifest go up.
			res, keys := recordedPublish(t, b, rec, snapB, lockOptions(url, store))
			for _, k := range keys {
				if immutable(k) {
					t.Errorf("uploaded %s, which the bucket kept", k)
				}
			}
			if res.Checked != 0 || res.Kept != len(minus(immutables(cm), immutables(bm))) || res.Listed {
				t.Errorf("checked %d, kept %d, listed %v; want 0, %d, false", res.Checked, res.Kept, res.Listed, len(minus(immutables(cm), immutables(bm))))
			}
			checkBucketKeeping(t, b, snapB, cc, nil, minus(immutables(cm), immutables(bm)))
			recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			checkBucketKeeping(t, b, s.out, cc, nil, keptB)
		})

		// The chunks the bucket keeps after the interrupted publish.
		var kept []string
		t.Run("interrupted", func(t *testing.T) {
			before := readManifest(t, s.out)
			old, err := os.ReadFile(filepath.Join(s.out, manifest.Name))
			if err != nil {
				t.Fatal(err)
			}
			s.add(t)
			after := readManifest(t, s.out)
			// Stopped after the first upload, a chunk or a leaf: no
			// root has changed, and the bucket's roots name leaves and
			// chunks it holds.
			rec.take()
			interrupt(t, b, s.out, 1, lockOptions(url, store))
			keys, err := order(rec.take(), stepOfKey)
			if err != nil || len(keys) != 1 || !immutable(keys[0]) {
				t.Errorf("the interrupted publish uploaded %q (%v), want one chunk or leaf", keys, err)
			}
			checkTrees(t, b, before)
			if got, err := b.ReadAll(ctx, manifest.Name); err != nil || !bytes.Equal(got, old) {
				t.Errorf("the interrupted publish changed the bucket's %s (%v)", manifest.Name, err)
			}
			res, _ := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if !strings.HasSuffix(res.Remote, " did not finish") {
				t.Errorf("got Remote %q, want that the last publish did not finish", res.Remote)
			}
			// It did not finish: a root it uploaded (none here, but it
			// cannot know) may name any leaf; all leaves and chunks are
			// kept.
			kept = minus(immutables(bm), immutables(after))
			kept = append(kept, minus(immutables(before), immutables(bm), immutables(after))...)
			if res.Deleted != staleFiles(before, after) || res.Kept != len(kept) {
				t.Errorf("deleted %d, kept %d; want %d, %d", res.Deleted, res.Kept, staleFiles(before, after), len(kept))
			}
			checkBucketKeeping(t, b, s.out, cc, nil, kept)
		})

		files := readManifest(t, s.out).Files
		var imm, leaves []string // the build's chunks and leaves; its leaves
		for _, f := range files {
			if immutable(f.Path) {
				imm = append(imm, f.Path)
			}
			if chunk.IsLeaf(f.Path) {
				leaves = append(leaves, f.Path)
			}
		}
		t.Run("cache control", func(t *testing.T) {
			if isFolder(b) {
				t.Skip("a folder keeps no headers: its web server gives them")
			}
			// Another Cache-Control in the config: the roots and the
			// manifest go up again, the chunks and leaves are checked
			// and stay as they are, immutable. The manifest's bytes do
			// not change: the chunks and leaves kept stay.
			for _, cc := range []string{"public, max-age=300", cc} {
				opt := lockOptions(url, store)
				opt.CacheControl = cc
				res, keys := recordedPublish(t, b, rec, s.out, opt)
				if got, want := countsOf(res), (counts{Uploaded: len(files) - len(imm) + 1, Unchanged: len(imm), Checked: len(files)}); got != want || res.Kept != len(kept) {
					t.Errorf("%s: got %+v, kept %d; want %+v, %d", cc, got, res.Kept, want, len(kept))
				}
				if slices.ContainsFunc(keys, immutable) {
					t.Errorf("%s: uploaded chunks or leaves again", cc)
				}
				checkBucketKeeping(t, b, s.out, cc, nil, kept)
			}
		})

		t.Run("chunk headers", func(t *testing.T) {
			if isFolder(b) {
				t.Skip("a folder keeps no headers: its web server gives them")
			}
			// A chunk and a leaf with the configured Cache-Control, as
			// another tool would upload them: --full finds them, and
			// uploads them again.
			var want []string
			for _, key := range []string{imm[len(imm)/2], leaves[0]} {
				data, err := os.ReadFile(filepath.Join(s.out, filepath.FromSlash(key)))
				if err != nil {
					t.Fatal(err)
				}
				if err := b.WriteAll(ctx, key, data, &blob.WriterOptions{ContentType: listing.ContentType, CacheControl: cc, Metadata: map[string]string{MetaSHA256: sha256Hex(data)}}); err != nil {
					t.Fatal(err)
				}
				want = append(want, key)
			}
			slices.Sort(want)
			want = slices.Compact(want)
			opt := lockOptions(url, store)
			opt.Full = true
			res, keys := recordedPublish(t, b, rec, s.out, opt)
			slices.Sort(keys)
			if !slices.Equal(keys, want) || res.Checked != len(files) {
				t.Errorf("uploaded %q, checked %d; want %q, %d", keys, res.Checked, want, len(files))
			}
			checkBucketKeeping(t, b, s.out, cc, nil, kept)
		})

		t.Run("killed after the manifest", func(t *testing.T) {
			// A publish killed (SIGKILL, another process) once the new
			// manifest is in the bucket, before the record of what the
			// bucket keeps that goes with it: the next publish finds
			// the lock saying so, lists the bucket once, says so, and
			// keeps every chunk the build does not have.
			s.add(t)
			killedPublish(t, url, store, s.out, "manifest")
			var held []string
			it := b.List(&blob.ListOptions{Prefix: chunk.Dir + "/"})
			for {
				o, err := it.Next(ctx)
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatal(err)
				}
				if immutable(o.Key) {
					held = append(held, o.Key)
				}
			}
			now := readManifest(t, s.out)
			extra := slices.DeleteFunc(held, func(k string) bool { return inBuild(now, k) })
			var notes bytes.Buffer
			opt := lockOptions(url, store)
			opt.Notices = &notes
			// The killed publish's lock is taken over once seen unchanged
			// for a lease.
			opt.LockLease = 3 * time.Second
			lists := 0
			opt.step = func(_ context.Context, what string) {
				if what == "list "+Prefix {
					lists++
				}
			}
			res, _ := recordedPublish(t, b, rec, s.out, opt)
			if !res.Listed || lists != 1 || !strings.HasSuffix(res.Remote, " did not finish") {
				t.Errorf("listed %v (%d times), Remote %q; want one listing, as the last publish did not finish", res.Listed, lists, res.Remote)
			}
			if want := map[bool]int64{true: 0, false: 1}[isFolder(b)]; rec.lists.Load() != want {
				t.Errorf("%d list requests, want %d", rec.lists.Load(), want)
			}
			said := regexp.MustCompile(`(?m)^the publish of .* did not finish: (listing articles/ once to see what the bucket holds \(about 1 request of 1000 keys\), then checking each file of the build there by its attributes \(up to \d+ requests, 16 at a time\)|walking articles/ once to see what the folder holds, then reading each file of the build there \(up to \d+ files, \d+\.\d kB\))$`)
			if n := len(said.FindAllString(notes.String(), -1)); n != 1 {
				t.Errorf("said %d times that it lists the bucket, want once:\n%s", n, notes.String())
			}
			if res.Kept != len(extra) || len(extra) == 0 {
				t.Errorf("kept %d chunks, want the %d the build does not have", res.Kept, len(extra))
			}
			// The bucket's manifest is publish's: a chunk of the build's
			// size holds its bytes (its name is their digest); the
			// indexes are checked.
			if indexes := len(now.Files) - len(immutables(now)); res.Checked != indexes || res.Uploaded != 0 {
				t.Errorf("checked %d, uploaded %d; want the %d indexes checked, nothing uploaded", res.Checked, res.Uploaded, indexes)
			}
			checkBucketKeeping(t, b, s.out, cc, nil, extra)

			// The publish after it trusts the bucket again.
			s.add(t)
			next := readManifest(t, s.out)
			res, _ = recordedPublish(t, b, rec, s.out, lockOptions(url, store))
			if res.Listed || rec.lists.Load() != 0 || res.Remote != "" {
				t.Errorf("the publish after: listed %v (%d requests), Remote %q", res.Listed, rec.lists.Load(), res.Remote)
			}
			checkBucketKeeping(t, b, s.out, cc, nil, minus(immutables(now), immutables(next)))
		})
	})
}

// TestPublishChunksKeeps publishes three builds in a row, A, B and C, and
// spoils the bucket before the third in ways that make the bucket's
// manifest (B's) unknown or not to be trusted for what it names: a chunk
// that only A names is deleted by the third publish only when it can be
// sure that B did not name it, and kept otherwise (as are the chunks
// that B names and C does not, always). A fourth publish, D, deletes
// whatever neither C nor D names.
func TestPublishChunksKeeps(t *testing.T) {
	s := newChunksSite(t, chunksOpt)
	a := s.snapshot(t)
	s.edit(t, 10, "B's edit")
	bDir := s.snapshot(t)
	s.edit(t, 33, "C's edit")
	cDir := s.snapshot(t)
	s.edit(t, 55, "D's edit")
	dDir := s.out
	am, bm, cm, dm := readManifest(t, a), readManifest(t, bDir), readManifest(t, cDir), readManifest(t, dDir)
	ctx := context.Background()

	writeLock := func(store, state string) error {
		info := lockInfo{Owner: "a dead one", Token: "t0", Started: time.Now(), Renewed: time.Now(), State: state}
		return os.WriteFile(filepath.Join(store, LockName), info.marshal(), 0o644)
	}
	for _, tt := range []struct {
		name string
		// spoil changes the bucket before the third publish, and may
		// change its options.
		spoil func(b *blob.Bucket, store string, opt *Options) error
		third string // the build of the third publish: C when ""
		// deletes: the chunks only A names go.
		deletes bool
		note    string // the start of Result.Remote
		// attrs: the case spoils the attributes of manifest.json, which a
		// bucket in a cloud keeps and a folder (Options.Folder) does
		// not: it runs on a folder that keeps them, as a cloud's bucket.
		attrs bool
	}{
		{name: "manifest read", deletes: true},
		{name: "full", spoil: func(_ *blob.Bucket, _ string, opt *Options) error { opt.Full = true; return nil }, deletes: true},
		{name: "manifest of other headers", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			// B's own manifest, complete, with another Cache-Control (the
			// config changed): what it names is known.
			data, err := b.ReadAll(ctx, manifest.Name)
			if err != nil {
				return err
			}
			return b.WriteAll(ctx, manifest.Name, data, &blob.WriterOptions{ContentType: listing.ContentType, CacheControl: "no-cache",
				Metadata: map[string]string{MetaSHA256: sha256Hex(data), MetaState: StateComplete}})
		}, deletes: true, note: "the bucket's manifest.json was not uploaded by feedgen publish with these headers", attrs: true},
		{name: "no manifest", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			return b.Delete(ctx, manifest.Name)
		}, note: "the bucket has no manifest.json"},
		{name: "damaged manifest", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			return b.WriteAll(ctx, manifest.Name, []byte(`{"format":1,"files":[`), &blob.WriterOptions{ContentType: listing.ContentType})
		}, note: "the bucket's manifest.json is damaged"},
		{name: "manifest of another tool", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			data, err := os.ReadFile(filepath.Join(bDir, manifest.Name))
			if err != nil {
				return err
			}
			return b.WriteAll(ctx, manifest.Name, data, nil)
		}, note: "the bucket's manifest.json was not uploaded by feedgen publish", attrs: true},
		// Publish's record of what the bucket keeps, which the third
		// publish cannot use: it lists the bucket, knowing what B names.
		{name: "no record", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			return b.Delete(ctx, KeptName)
		}, deletes: true, note: `the bucket has no record of the chunks it keeps \(articles/chunks/kept\.json: an earlier feedgen published it\)`},
		{name: "damaged record", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			return b.WriteAll(ctx, KeptName, []byte(`{"format":1,"files":[`), nil)
		}, deletes: true, note: `the bucket's record of the chunks it keeps is damaged \(articles/chunks/kept\.json: `},
		{name: "record of another manifest", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			k := keptRecord{Manifest: sha256Hex([]byte("another")), Complete: true}
			return b.WriteAll(ctx, KeptName, k.marshal(), nil)
		}, deletes: true, note: `the bucket's record of the chunks it keeps is not its manifest\.json's`},
		{name: "record of some", spoil: func(b *blob.Bucket, _ string, _ *Options) error {
			data, err := b.ReadAll(ctx, KeptName)
			if err != nil {
				return err
			}
			k, err := parseKept(data)
			if err != nil {
				return err
			}
			k.Complete = false
			return b.WriteAll(ctx, KeptName, k.marshal(), nil)
		}, deletes: true, note: `the bucket's record of the chunks it keeps names only some of them`},
		{name: "last publish did not finish", spoil: func(_ *blob.Bucket, store string, _ *Options) error {
			return writeLock(store, lockInterrupted)
		}, note: "the publish of a dead one, started .* did not finish"},
		{name: "unchanged, full", spoil: func(_ *blob.Bucket, _ string, opt *Options) error { opt.Full = true; return nil }, third: bDir},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, store := fileBucket(t)
			b := open(t, url)
			lockOptions := lockOptions
			if tt.attrs {
				var err error
				if b, err = blob.OpenBucket(ctx, url); err != nil {
					t.Fatal(err)
				}
				defer b.Close()
				lockOptions = func(string, string) Options { return testOptions() }
			}
			publishDir(t, b, a, lockOptions(url, store))
			publishDir(t, b, bDir, lockOptions(url, store))
			keptA := minus(immutables(am), immutables(bm))
			checkBucketKeeping(t, b, bDir, config.DefaultCacheControl, nil, keptA)

			opt := lockOptions(url, store)
			if tt.spoil != nil {
				if err := tt.spoil(b, store, &opt); err != nil {
					t.Fatal(err)
				}
			}
			third, tm := cDir, cm
			if tt.third != "" {
				third, tm = tt.third, readManifest(t, tt.third)
			}
			res := publishDir(t, b, third, opt)
			if !regexp.MustCompile("^" + tt.note).MatchString(res.Remote) {
				t.Errorf("got Remote %q, want %q", res.Remote, tt.note)
			}
			kept := minus(immutables(bm), immutables(tm))
			goneA := minus(immutables(am), immutables(bm), immutables(tm))
			if !tt.deletes {
				kept, goneA = append(kept, goneA...), nil
			}
			if len(kept) == 0 && tt.third == "" {
				t.Fatal("the third build has every chunk of the second")
			}
			if res.Kept != len(kept) || res.Deleted != staleFiles(bm, tm)+len(goneA) {
				t.Errorf("kept %d, deleted %d; want %d kept, %d deleted (%d chunks only A names)", res.Kept, res.Deleted, len(kept), staleFiles(bm, tm)+len(goneA), len(goneA))
			}
			checkBucketKeeping(t, b, third, config.DefaultCacheControl, nil, kept)

			// The fourth publish knows the third's manifest: whatever
			// neither it nor D names goes.
			res = publishDir(t, b, dDir, lockOptions(url, store))
			kept = minus(immutables(tm), immutables(dm))
			if res.Kept != len(kept) || res.Remote != "" {
				t.Errorf("the fourth publish kept %d (%q), want %d", res.Kept, res.Remote, len(kept))
			}
			checkBucketKeeping(t, b, dDir, config.DefaultCacheControl, nil, kept)
		})
	}
}

// TestPublishSwitchLayout publishes a build of the pages layout, then the
// same site in the chunks layout, and back: each publish deletes the
// other layout's files as stale (but the chunks of the last manifest,
// for one publish more), within --max-deletes.
func TestPublishSwitchLayout(t *testing.T) {
	opt := chunksOpt
	opt.Articles = 60
	s := newSite(t, opt)
	url, store := fileBucket(t)
	b, rec := record(t, open(t, url))
	cc := config.DefaultCacheControl
	pages := readManifest(t, s.out)
	recordedPublish(t, b, rec, s.out, lockOptions(url, store))
	checkBucket(t, b, s.out, cc, nil)

	s.setLayout(t, layout.ChunksName)
	chunked := readManifest(t, s.out)
	t.Run("to chunks, too many deletes", func(t *testing.T) {
		snap := storeSnapshot(t, store)
		opt := lockOptions(url, store)
		opt.MaxDeletes = len(pages.Files) - 1
		_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
		var tm *TooManyDeletesError
		if !errors.As(err, &tm) || *tm != (TooManyDeletesError{Deletes: len(pages.Files), Max: len(pages.Files) - 1, Noun: "file"}) {
			t.Fatalf("got %v, want a TooManyDeletesError of %d files", err, len(pages.Files))
		}
		sameStore(t, store, snap)
	})
	t.Run("to chunks", func(t *testing.T) {
		res, _ := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
		if got, want := countsOf(res), (counts{Uploaded: len(chunked.Files) + 1, Deleted: len(pages.Files)}); got != want || res.Kept != 0 {
			t.Errorf("got %+v, kept %d; want %+v, none kept", got, res.Kept, want)
		}
		checkBucket(t, b, s.out, cc, nil)
	})

	s.setLayout(t, layout.PagesName)
	t.Run("back to pages", func(t *testing.T) {
		// The indexes go; the chunks stay, named by the bucket's
		// manifest: an edge may hold its indexes.
		res, _ := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
		all := minus(immutables(chunked))
		if got, want := countsOf(res), (counts{Uploaded: len(pages.Files) + 1, Deleted: len(chunked.Files) - len(all)}); got != want || res.Kept != len(all) {
			t.Errorf("got %+v, kept %d; want %+v, %d kept", got, res.Kept, want, len(all))
		}
		checkBucketKeeping(t, b, s.out, cc, nil, all)
	})
	t.Run("pages, edited", func(t *testing.T) {
		before := readManifest(t, s.out)
		s.edit(t, 3, "An edited title")
		after := readManifest(t, s.out)
		up, del := changed(before, after)
		res, _ := recordedPublish(t, b, rec, s.out, lockOptions(url, store))
		if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del + len(immutables(chunked))}); got != want || res.Kept != 0 {
			t.Errorf("got %+v, kept %d; want %+v, none kept", got, res.Kept, want)
		}
		checkBucket(t, b, s.out, cc, nil)
	})
}

// TestPublishChunksManyNamed gives the bucket a manifest, complete, that
// names more chunks the build does not have than publish keeps in memory
// (maxNamed): what it names is then not known, and a chunk the bucket
// holds that neither manifest names is kept, not deleted.
func TestPublishChunksManyNamed(t *testing.T) {
	s := newChunksSite(t, corpus.Options{Articles: 40, Seed: 3})
	ctx := context.Background()
	local := readManifest(t, s.out)
	stray := chunk.ChunkPath([32]byte{1}) // named by no manifest
	for _, tt := range []struct {
		named int
		kept  bool
	}{
		{maxNamed(len(local.Files)), false},
		{maxNamed(len(local.Files)) + 1, true},
	} {
		t.Run(fmt.Sprint(tt.named), func(t *testing.T) {
			url, store := fileBucket(t)
			b := open(t, url)
			publishDir(t, b, s.out, lockOptions(url, store))
			if err := b.WriteAll(ctx, stray, []byte("[{}]"), nil); err != nil {
				t.Fatal(err)
			}
			// A manifest of another build, complete, with the files of
			// this one but the first, and an index of tt.named more
			// chunks and leaves (a manifest names them through its
			// indexes' roots): one leaf of tt.named-1 chunks.
			big := *local
			big.Generator = "another build"
			big.Files = append([]manifest.File(nil), local.Files[1:]...)
			ix := chunk.Index{Count: tt.named - 1}
			for i := range tt.named - 1 {
				var sum [32]byte
				sum[0], sum[1], sum[2], sum[3] = 2, byte(i>>16), byte(i>>8), byte(i)
				ix.Chunks = append(ix.Chunks, chunk.Ref{Path: chunk.ChunkPath(sum), Size: 4, Ends: []int{3}})
			}
			ixData, leaves := chunktest.Tree(&ix)
			const ixPath = "articles/tag/many/chunks.json"
			if err := b.WriteAll(ctx, ixPath, ixData, nil); err != nil {
				t.Fatal(err)
			}
			var leaf string
			for p, data := range leaves {
				if err := b.WriteAll(ctx, p, data, nil); err != nil {
					t.Fatal(err)
				}
				leaf = p
			}
			big.Files = append(big.Files, manifest.File{Path: ixPath, Size: int64(len(ixData)), SHA256: sha256Hex(ixData)})
			slices.SortFunc(big.Files, func(a, b manifest.File) int { return strings.Compare(a.Path, b.Path) })
			data := big.Marshal()
			if err := b.WriteAll(ctx, manifest.Name, data, &blob.WriterOptions{ContentType: listing.ContentType, CacheControl: config.DefaultCacheControl,
				Metadata: map[string]string{MetaSHA256: sha256Hex(data), MetaState: StateComplete}}); err != nil {
				t.Fatal(err)
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			kept, _ := b.Exists(ctx, stray)
			// The extra index's root goes either way: the build does not
			// have it. Its leaf stays either way: the bucket's manifest
			// names it.
			if kept != tt.kept || res.Kept != 1+map[bool]int{true: 1}[tt.kept] || res.Deleted != 1+map[bool]int{false: 1}[tt.kept] {
				t.Errorf("stray chunk kept: %v (Kept %d, Deleted %d), want %v", kept, res.Kept, res.Deleted, tt.kept)
			}
			if ok, _ := b.Exists(ctx, leaf); !ok {
				t.Errorf("the leaf the bucket's manifest names was deleted")
			}
		})
	}
}

// shiftEnd moves the end of the first article of the first chunk of an
// index of the build in out, in the chunks layout, one byte on, and
// writes the index again (its root and a leaf: chunktest.Tree), fixing
// the root's size and SHA-256 in manifest.json: an index that reads,
// counts its articles and matches the manifest, and does not fit its
// chunk. It returns the index's path.
func shiftEnd(t *testing.T, out string) string {
	t.Helper()
	m := readManifest(t, out)
	for _, f := range m.Files {
		if !chunk.IsIndex(f.Path) {
			continue
		}
		_, ix, _ := readTree(t, out, f.Path)
		if len(ix.Chunks[0].Ends) < 2 {
			continue
		}
		ix.Chunks[0].Ends[0]++
		root, leaves := chunktest.Tree(ix)
		if _, err := chunk.ReadIndex(root, func(p string) ([]byte, error) { return leaves[p], nil }); err != nil {
			t.Fatalf("the shifted index does not read: %v", err)
		}
		rewriteIndex(t, out, f, root, leaves)
		return f.Path
	}
	t.Fatal("no index names a chunk of two articles")
	return ""
}

// TestPublishChunksIndexFits: a build whose index does not fit its chunks
// (an article's end shifted, the manifest's entry fixed to match) is
// refused before anything is written, also by a dry run, as serve and
// verify refuse it: an edge assembling pages from it would answer invalid
// JSON.
func TestPublishChunksIndexFits(t *testing.T) {
	s := newChunksSite(t, chunksOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	publishDir(t, b, s.out, lockOptions(url, store))
	s.add(t)
	damaged := shiftEnd(t, s.out)
	want := regexp.MustCompile(`^` + regexp.QuoteMeta(damaged) + `: does not fit its chunks: chunk articles/chunks/[0-9a-f]{2}/[0-9a-f]{64}\.json: article 0 is not at 1\.\.\d+: nothing was published: run feedgen build \(it writes such an index again\), and publish once it is done$`)
	before := storeSnapshot(t, store)
	for _, dry := range []bool{true, false} {
		opt := lockOptions(url, store)
		opt.DryRun = dry
		_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
		if err == nil || !want.MatchString(err.Error()) {
			t.Errorf("dry run %v: got %v, want %s", dry, err, want)
		}
		sameStore(t, store, before)
	}
}
