package publish

import (
	"bytes"
	"context"
	"crypto/md5"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/publish/emulatortest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob"
	_ "gocloud.dev/blob/fileblob"
	_ "gocloud.dev/blob/gcsblob"
	_ "gocloud.dev/blob/s3blob"
)

// buildTime is the build time of the test sites.
var buildTime = time.Date(2026, 11, 23, 6, 30, 15, 0, time.UTC)

// smallOpt is a site of 14 articles with limits 5 and 10, every offset,
// and a tag filter: 40-odd pages in nested folders.
var smallOpt = corpus.Options{Articles: 14, Limits: []int{5, 10}, Seed: 7, Filters: []string{"tag"}}

// site is a corpus site in a temporary folder, built into out.
type site struct {
	dir, out string
	opt      corpus.Options
	added    int // articles added (add)
}

// newSite writes a corpus site and builds it.
func newSite(t testing.TB, opt corpus.Options) *site {
	t.Helper()
	s := writeSite(t, opt)
	s.build(t)
	return s
}

// newChunksSite writes a corpus site of layout: chunks and builds it.
func newChunksSite(t testing.TB, opt corpus.Options) *site {
	t.Helper()
	s := writeSite(t, opt)
	s.setLayout(t, layout.ChunksName)
	return s
}

// writeSite writes a corpus site, not built.
func writeSite(t testing.TB, opt corpus.Options) *site {
	t.Helper()
	dir := t.TempDir()
	if _, err := corpus.Write(dir, opt); err != nil {
		t.Fatal(err)
	}
	return &site{dir: dir, out: filepath.Join(dir, "public"), opt: opt}
}

// setLayout sets the config's pagination.layout (layout.PagesName or
// layout.ChunksName: the corpus writes offsets: "all", which chunks
// do not take) and rebuilds.
func (s *site) setLayout(t testing.TB, name string) {
	t.Helper()
	p := filepath.Join(s.dir, corpus.ConfigPath)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	conf := string(data)
	from, to := "  layout: chunks\n", "  offsets: \"all\"\n"
	if name == layout.ChunksName {
		from, to = to, from
	}
	if !strings.Contains(conf, from) && !strings.Contains(conf, to) {
		t.Fatalf("the corpus config has neither %q nor %q", from, to)
	}
	conf = strings.Replace(conf, from, to, 1)
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(t)
}

// add adds a new article to the site and rebuilds.
func (s *site) add(t testing.TB) {
	t.Helper()
	p, data := corpus.Article(s.opt, s.opt.Articles+s.added)
	s.added++
	if err := os.WriteFile(filepath.Join(s.dir, filepath.FromSlash(p)), data, 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(t)
}

// build builds the site into s.out.
func (s *site) build(t testing.TB) {
	t.Helper()
	_, err := build.New(build.Options{
		FS: os.DirFS(s.dir), ConfigName: corpus.ConfigPath, Root: s.dir, OutDir: s.out,
		Now: func() time.Time { return buildTime }, Generator: "feedgen test",
	}).Build(context.Background())
	if err != nil {
		t.Fatalf("build: %v", err)
	}
}

// articles returns the paths of the site's article files, sorted.
func (s *site) articles(t testing.TB) []string {
	t.Helper()
	var paths []string
	err := filepath.WalkDir(filepath.Join(s.dir, "content"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".md") {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(paths)
	return paths
}

// edit changes the title of the i-th article and rebuilds.
func (s *site) edit(t testing.TB, i int, title string) {
	t.Helper()
	s.change(t, i, "title:", func(string) string { return " " + title })
}

// bump changes the last digit of the i-th article's pageviews and
// rebuilds: its pages change, and keep their sizes.
func (s *site) bump(t testing.TB, i int) {
	t.Helper()
	s.change(t, i, "pageviews:", func(v string) string {
		d := v[len(v)-1]
		return v[:len(v)-1] + string('0'+(d-'0'+1)%10)
	})
}

// change replaces the value of the i-th article's front matter line that
// starts with key by what change makes of it, and rebuilds.
func (s *site) change(t testing.TB, i int, key string, change func(value string) string) {
	t.Helper()
	p := s.articles(t)[i]
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(data), "\n")
	found := false
	for j, l := range lines {
		if strings.HasPrefix(l, key) {
			lines[j], found = key+change(l[len(key):]), true
			break
		}
	}
	if !found {
		t.Fatalf("%s: no %s line", p, key)
	}
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	s.build(t)
}

// remove deletes the first n articles and rebuilds.
func (s *site) remove(t testing.TB, n int) {
	t.Helper()
	for _, p := range s.articles(t)[:n] {
		if err := os.Remove(p); err != nil {
			t.Fatal(err)
		}
	}
	s.build(t)
}

// snapshot copies the output folder's files, so that a test can publish
// a build that the site has since left.
func (s *site) snapshot(t testing.TB) string {
	t.Helper()
	dst := t.TempDir()
	if err := os.CopyFS(dst, os.DirFS(s.out)); err != nil {
		t.Fatal(err)
	}
	return dst
}

// manifest reads the manifest of the build in dir.
func readManifest(t testing.TB, dir string) *manifest.Manifest {
	t.Helper()
	snap, err := manifest.Read(os.DirFS(dir))
	if err != nil {
		t.Fatal(err)
	}
	return snap.Manifest
}

// changed counts the pages of build b that build a does not have with the
// same bytes, and the pages of a that b does not have.
func changed(a, b *manifest.Manifest) (uploads, deletes int) {
	sums := map[string]string{}
	for _, f := range a.Files {
		sums[f.Path] = f.SHA256
	}
	for _, f := range b.Files {
		if sums[f.Path] != f.SHA256 {
			uploads++
		}
		delete(sums, f.Path)
	}
	return uploads, len(sums)
}

// newBucketFunc makes a new, empty bucket: its URL, and the folder on
// disk where its objects are kept (for snapshots of what publish changed).
type newBucketFunc func(t *testing.T) (url, store string)

// fileBucket makes a file:// bucket.
func fileBucket(t *testing.T) (string, string) {
	dir := t.TempDir()
	return "file://" + filepath.ToSlash(dir), dir
}

// forBackends runs test with file:// buckets, then with the buckets of a
// versitygw server (s3://), of fake-gcs-server (gs://) and of Azurite
// (azblob://, the one the package's tests share), each started for it: one
// suite every backend runs.
func forBackends(t *testing.T, test func(t *testing.T, newBucket newBucketFunc)) {
	t.Run("file", func(t *testing.T) { test(t, fileBucket) })
	t.Run("s3", func(t *testing.T) {
		v := versitytest.Start(t)
		test(t, v.NewBucket)
	})
	t.Run("gcs", func(t *testing.T) { test(t, emulatortest.GCS(t).NewBucket) })
	t.Run("azblob", func(t *testing.T) { test(t, shared.Azurite(t).NewBucket) })
}

// shared are the emulators the package's tests share (Azurite, slow to
// start), stopped by TestMain.
var shared emulatortest.Shared

func TestMain(m *testing.M) {
	code := m.Run()
	shared.Close()
	os.Exit(code)
}

// open opens a bucket URL for the test as feedgen publish opens it (a
// file:// one a plain copy of the build: see Options.Folder).
func open(t *testing.T, url string) *blob.Bucket {
	t.Helper()
	bk, err := ParseBucketURL(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bk.Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// fileState is what a snapshot keeps of one stored file.
type fileState struct {
	mtime time.Time
	size  int64
}

// storeSnapshot records every file under dir but the lock (nothing for a
// store of "": an emulator's own format): a file rewritten, even
// with the same bytes, gets another modification time (both fileblob and
// versitygw write a new file and rename or link it into place).
func storeSnapshot(t *testing.T, dir string) map[string]fileState {
	t.Helper()
	snap := map[string]fileState{}
	if dir == "" {
		return snap
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == LockName {
			return nil // the lock file of a bucket on disk: written by every publish
		}
		snap[rel] = fileState{mtime: info.ModTime(), size: info.Size()}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return snap
}

// sameStore fails the test when the store changed since snapshot before.
func sameStore(t *testing.T, dir string, before map[string]fileState) {
	t.Helper()
	after := storeSnapshot(t, dir)
	var diffs []string
	for k, v := range before {
		if w, ok := after[k]; !ok {
			diffs = append(diffs, "removed "+k)
		} else if w != v {
			diffs = append(diffs, "rewritten "+k)
		}
	}
	for k := range after {
		if _, ok := before[k]; !ok {
			diffs = append(diffs, "added "+k)
		}
	}
	if len(diffs) > 0 {
		slices.Sort(diffs)
		t.Errorf("the bucket changed: %s", strings.Join(diffs, ", "))
	}
}

// checkBucket checks that the bucket holds exactly the build in out
// under articles/ and as manifest.json, with publish's headers and
// metadata (chunks and leaves with layout.ImmutableCacheControl, the
// rest with cacheControl), besides the foreign objects it is given (key → bytes).
func checkBucket(t *testing.T, b *blob.Bucket, out, cacheControl string, foreign map[string]string) {
	t.Helper()
	checkBucketKeeping(t, b, out, cacheControl, foreign, nil)
}

// checkBucketKeeping is checkBucket for a bucket that holds besides the
// chunks kept, which the build does not have: each of them must be there.
func checkBucketKeeping(t *testing.T, b *blob.Bucket, out, cacheControl string, foreign map[string]string, kept []string) {
	t.Helper()
	ctx := context.Background()
	m := readManifest(t, out)
	want := map[string]bool{}
	check := func(key string, local []byte, sum string) {
		a, err := b.Attributes(ctx, key)
		if err != nil {
			t.Errorf("%s: %v", key, err)
			return
		}
		// The bytes are read when the server gives no MD5 of them (a
		// folder), or another than the build's, and always for
		// manifest.json (a test may damage it in the store, behind the
		// server) and for objects of more than 4 MiB. Otherwise the MD5
		// is the server's own, of the bytes it stored: versitygw and
		// fake-gcs-server hash the body as they store it, and Azurite's
		// Put Blob checks the MD5 sent against the body (not its Put
		// Block List, which azureblob uses above 8 MiB).
		if m := md5.Sum(local); isFolder(b) || key == manifest.Name || a.Size > 4<<20 || !bytes.Equal(a.MD5, m[:]) {
			got, err := b.ReadAll(ctx, key)
			if err != nil {
				t.Errorf("%s: %v", key, err)
				return
			}
			if !bytes.Equal(got, local) {
				t.Errorf("%s: got %d bytes, want the build's %d", key, len(got), len(local))
			}
		}
		if isFolder(b) {
			return // a folder keeps no headers: its web server gives them
		}
		cc := cacheControl
		if immutable(key) {
			cc = layout.ImmutableCacheControl
		}
		if ct := layout.ContentType(key); a.ContentType != ct || a.CacheControl != cc || a.Metadata[MetaSHA256] != sum {
			t.Errorf("%s: got Content-Type %q, Cache-Control %q, sha256 %q; want %q, %q, %q",
				key, a.ContentType, a.CacheControl, a.Metadata[MetaSHA256], ct, cc, sum)
		}
	}
	// Eight at a time: each check is one request or two, and the
	// servers answer several at once.
	var (
		wg      sync.WaitGroup
		sem     = make(chan struct{}, 8)
		readErr atomic.Pointer[error]
	)
	for _, f := range m.Files {
		want[f.Path] = true
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			local, err := os.ReadFile(filepath.Join(out, filepath.FromSlash(f.Path)))
			if err != nil {
				readErr.CompareAndSwap(nil, &err) // the first: said once
				return
			}
			check(f.Path, local, f.SHA256)
		})
	}
	wg.Wait()
	if err := readErr.Load(); err != nil {
		t.Fatal(*err)
	}
	local, err := os.ReadFile(filepath.Join(out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	check(manifest.Name, local, sha256Hex(local))
	if a, err := b.Attributes(ctx, manifest.Name); err == nil && !isFolder(b) && a.Metadata[MetaState] != StateComplete {
		t.Errorf("%s: got state %q, want %q", manifest.Name, a.Metadata[MetaState], StateComplete)
	}
	for key, data := range foreign {
		got, err := b.ReadAll(ctx, key)
		if err != nil || string(got) != data {
			t.Errorf("foreign object %s: got %q, %v; want %q", key, got, err, data)
		}
	}
	for _, key := range kept {
		if want[key] {
			continue // the build has it again
		}
		want[key] = true
		if ok, err := b.Exists(ctx, key); !ok || err != nil {
			t.Errorf("the bucket lost %s, which it was to keep (%v)", key, err)
		}
	}
	// Publish's record of what the bucket keeps goes with its manifest,
	// and names every chunk the bucket holds that the build does not.
	extra := map[string]bool{}
	it := b.List(nil)
	for {
		o, err := it.Next(ctx)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("listing the bucket: %v", err)
		}
		if o.Key == LockName && o.Size == 0 || o.Key == KeptName {
			continue // the lock file of a bucket on disk, free; the record
		}
		if !want[o.Key] && o.Key != manifest.Name && foreign[o.Key] == "" {
			t.Errorf("the bucket holds %s, which the build does not have", o.Key)
		}
		if !inBuild(m, o.Key) && immutable(o.Key) {
			extra[o.Key] = true
		}
	}
	checkKept(t, b, local, extra, layout.Of(m.Pagination).Has(layout.Chunk))
}

// inBuild reports whether the build of m has the file key.
func inBuild(m *manifest.Manifest, key string) bool {
	_, ok := slices.BinarySearchFunc(m.Files, key, func(f manifest.File, key string) int { return strings.Compare(f.Path, key) })
	return ok
}

// checkKept checks the bucket's record of what it keeps (KeptName): it
// goes with the manifest of bytes man, names the files of extra and no
// other; a bucket that keeps nothing has none unless chunked.
func checkKept(t *testing.T, b *blob.Bucket, man []byte, extra map[string]bool, chunked bool) {
	t.Helper()
	data, err := b.ReadAll(context.Background(), KeptName)
	if isNotFound(err) && len(extra) == 0 && !chunked {
		return
	}
	if err != nil {
		t.Errorf("the bucket's record of what it keeps: %v", err)
		return
	}
	k, err := parseKept(data)
	if err != nil {
		t.Fatalf("%s: %v", KeptName, err)
	}
	if k.Manifest != sha256Hex(man) || !k.Complete {
		t.Errorf("%s goes with the manifest %s (complete %v), want the bucket's %s", KeptName, k.Manifest, k.Complete, sha256Hex(man))
	}
	var got, want []string
	for _, f := range k.Files {
		got = append(got, f.Path)
	}
	for key := range extra {
		want = append(want, key)
	}
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("%s names %q, want the chunks the bucket keeps %q", KeptName, got, want)
	}
}

// isFolder reports whether b is a bucket on disk.
func isFolder(b *blob.Bucket) bool {
	var fi os.FileInfo
	return b.As(&fi)
}

// plainFolder fails the test unless the folder dir of a bucket on disk
// holds only the files of the build in out, under articles/ and as
// manifest.json, besides the foreign files given: no attribute files,
// no lock, no temporary files; a copy a web server can serve as it is.
func plainFolder(t *testing.T, dir, out string, foreign map[string]string) {
	t.Helper()
	want := map[string]bool{manifest.Name: true}
	for _, f := range readManifest(t, out).Files {
		want[f.Path] = true
	}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		if _, ok := foreign[rel]; !want[rel] && !ok && rel != KeptName {
			t.Errorf("the bucket folder holds %s, which is not the build's", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// retryTest is policy.retry with no notices and the connect bound of
// timeout.
func retryTest(ctx context.Context, retries int, backoff, timeout time.Duration, op func(ctx context.Context, kick func(n int)) error) error {
	return policy{retries: retries, backoff: backoff, timeout: timeout}.retry(ctx, "", 0, op)
}
