package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"gocloud.dev/blob"
)

// counts are the numbers of a Result that the tests check.
type counts struct {
	Uploaded, Unchanged, Deleted, Checked int
}

func countsOf(r *Result) counts {
	return counts{Uploaded: r.Uploaded, Unchanged: r.Unchanged, Deleted: r.Deleted, Checked: r.Checked}
}

// testOptions are the options of the tests: retries without waiting.
func testOptions() Options {
	return Options{MaxDeletes: DefaultMaxDeletes, Backoff: time.Millisecond}
}

// publishDir publishes the build in dir, failing the test on an error.
func publishDir(t *testing.T, b *blob.Bucket, dir string, opt Options) *Result {
	t.Helper()
	res, err := Publish(context.Background(), b, os.DirFS(dir), opt)
	if err != nil {
		t.Fatalf("publish: %v", err)
	}
	return res
}

// TestPublish publishes a site, then the changes a CI job would publish,
// to a file:// bucket and to a versitygw bucket: what is uploaded and
// deleted, what the bucket holds after, what it must not lose.
func TestPublish(t *testing.T) {
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		ctx := context.Background()
		s := newSite(t, smallOpt)
		url, store := newBucket(t)
		b := open(t, url)
		if got, want := isGCS(b), strings.HasPrefix(url, "gs://"); got != want {
			t.Errorf("isGCS(%s) = %v, want %v", url, got, want)
		}
		// Objects of the bucket that are not the feed's: publish must
		// leave them as they are.
		foreign := map[string]string{
			"index.html":               "<h1>home</h1>",
			"articles.json":            "{}",
			"other/articles/5/0.json":  "{}",
			"manifest.json.bak":        "{}",
			"static/articles/index.js": "//",
		}
		for k, v := range foreign {
			if err := b.WriteAll(ctx, k, []byte(v), nil); err != nil {
				t.Fatal(err)
			}
		}
		cc := config.DefaultCacheControl
		m := readManifest(t, s.out)
		pages := len(m.Files)

		t.Run("first", func(t *testing.T) {
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: pages + 1}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if res.Remote != "" || !res.ManifestUploaded {
				t.Errorf("got Remote %q, ManifestUploaded %v; want \"\", true", res.Remote, res.ManifestUploaded)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("unchanged", func(t *testing.T) {
			before := storeSnapshot(t, store)
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Unchanged: pages + 1}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			if got, want := res.Summary(), "uploaded 0 files (0 B), unchanged "; !strings.HasPrefix(got, want) {
				t.Errorf("got %q, want it to start with %q", got, want)
			}
			sameStore(t, store, before)
		})

		t.Run("one edit", func(t *testing.T) {
			before := readManifest(t, s.out)
			s.edit(t, 3, "An edited title")
			after := readManifest(t, s.out)
			up, del := changed(before, after)
			if up == 0 || up == len(after.Files) {
				t.Fatalf("the edit changed %d pages of %d", up, len(after.Files))
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want {
				t.Errorf("got %+v, want %+v (%q)", got, want, res.Remote)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("deleted article", func(t *testing.T) {
			before := readManifest(t, s.out)
			s.remove(t, 1)
			after := readManifest(t, s.out)
			up, del := changed(before, after)
			if del == 0 {
				t.Fatal("removing an article deleted no page")
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		before := readManifest(t, s.out)
		s.remove(t, 2)
		after := readManifest(t, s.out)
		up, del := changed(before, after)

		t.Run("max deletes", func(t *testing.T) {
			snap := storeSnapshot(t, store)
			opt := lockOptions(url, store)
			opt.MaxDeletes = del - 1
			_, err := Publish(ctx, b, os.DirFS(s.out), opt)
			var tm *TooManyDeletesError
			if !errors.As(err, &tm) || *tm != (TooManyDeletesError{Deletes: del, Max: del - 1, Noun: "page"}) {
				t.Fatalf("got %v, want a TooManyDeletesError of %d deletes", err, del)
			}
			sameStore(t, store, snap)
		})

		t.Run("dry run", func(t *testing.T) {
			snap := storeSnapshot(t, store)
			var log bytes.Buffer
			opt := lockOptions(url, store)
			opt.DryRun, opt.Log = true, &log
			res := publishDir(t, b, s.out, opt)
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			lines := strings.Split(strings.TrimSuffix(log.String(), "\n"), "\n")
			uploads, deletes := 0, 0
			line := regexp.MustCompile(`^(upload articles/\S+\.json \(\d+(\.\d)? k?B\)|upload manifest\.json \(\d+(\.\d)? k?B\)|delete articles/\S+\.json)$`)
			for _, l := range lines {
				if !line.MatchString(l) {
					t.Errorf("line %q is not an upload or a delete", l)
				}
				switch {
				case strings.HasPrefix(l, "upload "):
					uploads++
				case strings.HasPrefix(l, "delete "):
					deletes++
				}
			}
			if uploads != up+1 || deletes != del || lines[up] != "upload manifest.json ("+strings.SplitN(lines[up], "(", 2)[1] {
				t.Errorf("got %d uploads (manifest last) and %d deletes, want %d and %d:\n%s", uploads, deletes, up+1, del, log.String())
			}
			if got := res.Summary(); !strings.HasPrefix(got, "dry run: would upload ") || !strings.HasSuffix(got, "; nothing changed") {
				t.Errorf("got summary %q", got)
			}
			sameStore(t, store, snap)
		})

		t.Run("after the dry run", func(t *testing.T) {
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		pages = len(after.Files)
		// A bucket whose manifest cannot be used: every page is checked by
		// its attributes, none is uploaded again, the manifest is. The
		// bucket is listed: a key under articles/ that no build made is
		// the feed's too, and goes.
		for _, tt := range []struct {
			name, note string
			spoil      func() error
		}{
			{"damaged manifest", `the bucket's manifest.json is damaged \(reading manifest: `, func() error {
				return b.WriteAll(ctx, manifest.Name, []byte(`{"format":1,"files":[`), &blob.WriterOptions{ContentType: listing.ContentType})
			}},
			{"missing manifest", "the bucket has no manifest.json", func() error { return b.Delete(ctx, manifest.Name) }},
			{"manifest damaged in the store", "the bucket's manifest.json (is damaged|cannot be read)", func() error {
				// Bytes changed behind the service's back: versitygw's
				// checksum no longer matches them.
				return os.WriteFile(filepath.Join(store, manifest.Name), []byte(`{"format":1,"files":[`), 0o644)
			}},
			{"interrupted publish", "a publish to the bucket was interrupted", func() error {
				data, err := os.ReadFile(filepath.Join(s.out, manifest.Name))
				if err != nil {
					return err
				}
				return b.WriteAll(ctx, manifest.Name, data, &blob.WriterOptions{ContentType: listing.ContentType, CacheControl: cc,
					Metadata: map[string]string{MetaSHA256: sha256Hex(data), MetaState: StatePartial}})
			}},
			{"manifest of another tool", "the bucket's manifest.json was not uploaded by feedgen publish", func() error {
				data, err := os.ReadFile(filepath.Join(s.out, manifest.Name))
				if err != nil {
					return err
				}
				return b.WriteAll(ctx, manifest.Name, data, nil)
			}},
		} {
			t.Run(tt.name, func(t *testing.T) {
				if store == "" && strings.Contains(tt.name, "in the store") {
					t.Skip("an emulator's store is not files")
				}
				if isFolder(b) && (tt.name == "interrupted publish" || tt.name == "manifest of another tool") {
					t.Skip("a folder keeps no attributes, which this spoils: how its last publish ended is its lock's (TestPublishTakesOverDeadLock)")
				}
				if err := tt.spoil(); err != nil {
					t.Fatal(err)
				}
				if err := b.WriteAll(ctx, "articles/5/999.json", []byte("{}"), nil); err != nil {
					t.Fatal(err)
				}
				res := publishDir(t, b, s.out, lockOptions(url, store))
				if got, want := countsOf(res), (counts{Uploaded: 1, Unchanged: pages, Checked: pages, Deleted: 1}); got != want {
					t.Errorf("got %+v, want %+v", got, want)
				}
				if !regexp.MustCompile(`^` + tt.note).MatchString(res.Remote) {
					t.Errorf("got Remote %q, want %q…", res.Remote, tt.note)
				}
				checkBucket(t, b, s.out, cc, foreign)
				if isFolder(b) {
					plainFolder(t, store, s.out, foreign)
				}
			})
		}

		t.Run("full", func(t *testing.T) {
			// Pages changed behind publish's back: a publish trusts the
			// manifest and does not see it; --full does, and repairs it.
			files := readManifest(t, s.out).Files
			if err := b.Delete(ctx, files[1].Path); err != nil {
				t.Fatal(err)
			}
			if err := b.WriteAll(ctx, files[2].Path, bytes.Repeat([]byte("x"), int(files[2].Size)), nil); err != nil {
				t.Fatal(err)
			}
			if err := b.WriteAll(ctx, "articles/10/999.json", []byte("{}"), nil); err != nil {
				t.Fatal(err)
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if got, want := countsOf(res), (counts{Unchanged: pages + 1}); got != want {
				t.Errorf("trusting the manifest: got %+v, want %+v", got, want)
			}
			opt := lockOptions(url, store)
			opt.Full = true
			res = publishDir(t, b, s.out, opt)
			// The manifest is the build's own: it stays.
			if got, want := countsOf(res), (counts{Uploaded: 2, Unchanged: pages - 2 + 1, Checked: pages - 1, Deleted: 1}); got != want {
				t.Errorf("--full: got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("cache control", func(t *testing.T) {
			opt := lockOptions(url, store)
			opt.CacheControl = "public, max-age=300"
			res := publishDir(t, b, s.out, opt)
			want := counts{Uploaded: pages + 1, Checked: pages}
			if isFolder(b) {
				want = counts{Unchanged: pages + 1} // a folder keeps no headers
			}
			if got := countsOf(res); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, opt.CacheControl, foreign)
			res = publishDir(t, b, s.out, lockOptions(url, store))
			if got := countsOf(res); got != want {
				t.Errorf("back to the default: got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("interrupted", func(t *testing.T) {
			old, err := os.ReadFile(filepath.Join(s.out, manifest.Name))
			if err != nil {
				t.Fatal(err)
			}
			before := readManifest(t, s.out)
			s.edit(t, 0, "Interrupted, then finished")
			up, _ := changed(before, readManifest(t, s.out))
			interrupt(t, b, s.out, up/2, lockOptions(url, store))
			if got, err := b.ReadAll(ctx, manifest.Name); err != nil || !bytes.Equal(got, old) {
				t.Fatalf("after the interrupted publish the bucket's manifest is not the previous one (%v)", err)
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if !strings.HasSuffix(res.Remote, " did not finish") {
				t.Errorf("got Remote %q, want that the last publish did not finish", res.Remote)
			}
			if res.Uploaded != up-up/2+1 {
				t.Errorf("got %d uploads, want the %d pages the interrupted publish did not upload and the manifest", res.Uploaded, up-up/2)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("interrupted while deleting", func(t *testing.T) {
			before := readManifest(t, s.out)
			s.remove(t, 2)
			after := readManifest(t, s.out)
			up, del := changed(before, after)
			if del < 2 {
				t.Fatalf("removing two articles deleted %d pages", del)
			}
			ctx, cancel := context.WithCancel(ctx)
			defer cancel()
			opt := lockOptions(url, store)
			opt.Workers = 1
			opt.Progress = func(done, total int) {
				if done == up+1 {
					cancel()
				}
			}
			if _, err := Publish(ctx, b, os.DirFS(s.out), opt); !errors.Is(err, context.Canceled) {
				t.Fatalf("got %v, want the publish interrupted", err)
			}
			res := publishDir(t, b, s.out, lockOptions(url, store))
			if !strings.HasSuffix(res.Remote, " did not finish") {
				t.Errorf("got Remote %q, want that the last publish did not finish", res.Remote)
			}
			// The manifest went up before the deletions: it stays.
			if got, want := countsOf(res), (counts{Unchanged: len(after.Files) + 1, Checked: len(after.Files), Deleted: del - 1}); got != want {
				t.Errorf("got %+v, want %+v", got, want)
			}
			checkBucket(t, b, s.out, cc, foreign)
		})

		t.Run("interrupted, then the previous build", func(t *testing.T) {
			// A publish of build X stops half way; the next one publishes
			// the build before X again (a revert): pages of X that the
			// interrupted publish uploaded must go, though the bucket's
			// manifest names them with the right SHA-256.
			previous := s.snapshot(t)
			before := readManifest(t, s.out)
			s.bump(t, 0) // pages of the same sizes: the listing cannot tell
			after := readManifest(t, s.out)
			up, _ := changed(before, after)
			for i, f := range after.Files {
				if f.Size != before.Files[i].Size {
					t.Fatalf("%s: %d bytes, was %d", f.Path, f.Size, before.Files[i].Size)
				}
			}
			interrupt(t, b, s.out, up-1, lockOptions(url, store))
			res := publishDir(t, b, previous, lockOptions(url, store))
			// The bucket's manifest is still the previous build's own:
			// it stays, and the pages of X are checked and replaced.
			if res.Uploaded != up-1 || res.ManifestUploaded {
				t.Errorf("got %d uploads (manifest: %v), want the %d pages of X", res.Uploaded, res.ManifestUploaded, up-1)
			}
			checkBucket(t, b, previous, cc, foreign)
		})
	})
}

// interrupt publishes the build in dir on one worker and cancels the
// publish once n pages are uploaded.
func interrupt(t *testing.T, b *blob.Bucket, dir string, n int, opt Options) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opt.Workers = 1
	opt.Progress = func(done, total int) {
		if done == n {
			cancel()
		}
	}
	res, err := Publish(ctx, b, os.DirFS(dir), opt)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want the publish interrupted", err)
	}
	if res.Uploaded != n || res.ManifestUploaded {
		t.Fatalf("the interrupted publish uploaded %d pages (manifest: %v), want %d pages", res.Uploaded, res.ManifestUploaded, n)
	}
}

// TestPublishRefuses checks that a build that is not finished, or whose
// pages are not what its manifest says, is not published: the bucket's
// manifest stays the previous one.
func TestPublishRefuses(t *testing.T) {
	ctx := context.Background()
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	publishDir(t, b, s.out, testOptions())

	t.Run("no build", func(t *testing.T) {
		_, err := Publish(ctx, b, os.DirFS(t.TempDir()), testOptions())
		if !errors.Is(err, manifest.ErrNoBuild) {
			t.Errorf("got %v, want %v", err, manifest.ErrNoBuild)
		}
	})

	t.Run("unfinished build", func(t *testing.T) {
		marker := filepath.Join(s.out, outdir.Unfinished)
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(marker)
		snap := storeSnapshot(t, store)
		_, err := Publish(ctx, b, os.DirFS(s.out), testOptions())
		if err == nil || !strings.Contains(err.Error(), "did not finish") {
			t.Errorf("got %v, want a refusal of the unfinished build", err)
		}
		sameStore(t, store, snap)
	})

	t.Run("ready says no", func(t *testing.T) {
		// A build the bucket does not have: Publish would write, but
		// Ready (the comparison with the site, --strict) says no first.
		s.edit(t, 3, "Not to be published")
		no := errors.New("the site changed")
		for _, dryRun := range []bool{false, true} {
			snap := storeSnapshot(t, store)
			opt := testOptions()
			opt.DryRun = dryRun
			readies := 0
			opt.Ready = func() error { readies++; return no }
			opt.step = func(_ context.Context, what string) {
				t.Errorf("dry run %v: step %q after Ready said no", dryRun, what)
			}
			res, err := Publish(ctx, b, os.DirFS(s.out), opt)
			if !errors.Is(err, no) || readies != 1 {
				t.Fatalf("dry run %v: got %v after %d calls of Ready, want its error after one", dryRun, err, readies)
			}
			if res.Uploaded != 0 || res.Deleted != 0 {
				t.Errorf("dry run %v: %+v", dryRun, res)
			}
			sameStore(t, store, snap)
		}
	})

	t.Run("page changed since the manifest", func(t *testing.T) {
		before := readManifest(t, s.out)
		s.edit(t, 2, "Changed under the manifest")
		after := readManifest(t, s.out)
		var page string
		for i, f := range after.Files {
			if f.SHA256 != before.Files[i].SHA256 {
				page = f.Path
				break
			}
		}
		p := filepath.Join(s.out, filepath.FromSlash(page))
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		data[len(data)/2] ^= 1
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		old, err := b.ReadAll(ctx, manifest.Name)
		if err != nil {
			t.Fatal(err)
		}
		_, err = Publish(ctx, b, os.DirFS(s.out), testOptions())
		var mm *manifest.Mismatch
		if !errors.As(err, &mm) || mm.Path != page {
			t.Fatalf("got %v, want a mismatch of %s", err, page)
		}
		if got, err := b.ReadAll(ctx, manifest.Name); err != nil || !bytes.Equal(got, old) {
			t.Errorf("the bucket's manifest changed (%v)", err)
		}
	})
}

// TestPublishWorkers publishes a larger build on many workers and on one:
// the same bucket either way.
func TestPublishWorkers(t *testing.T) {
	s := newSite(t, smallOpt)
	for _, workers := range []int{1, 64} {
		url, _ := fileBucket(t)
		b := open(t, url)
		opt := testOptions()
		opt.Workers = workers
		var (
			mu          sync.Mutex
			calls, last int
		)
		opt.Progress = func(done, total int) {
			mu.Lock()
			defer mu.Unlock()
			calls++
			last = total
		}
		res := publishDir(t, b, s.out, opt)
		pages := len(readManifest(t, s.out).Files)
		if res.Uploaded != pages+1 {
			t.Errorf("workers %d: got %d uploads, want %d", workers, res.Uploaded, pages+1)
		}
		if workers == 1 && (calls != pages || last != pages) {
			t.Errorf("workers 1: got %d progress calls of total %d, want %d", calls, last, pages)
		}
		checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
	}
}

// TestPublishFolderFull: a publish of a new build to a folder trusts the
// folder's manifest and lists nothing: what another tool changed under
// articles/ is not seen; --full walks the folder once and repairs it: a
// file another tool added under articles/ goes, one it removed or cut
// comes back, links are replaced, never read; the folder is then the
// build and nothing else.
func TestPublishFolderFull(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	publishDir(t, b, s.out, lockOptions(url, store))
	before := readManifest(t, s.out)
	gone, cut := before.Files[1].Path, before.Files[2].Path
	if err := os.Remove(filepath.Join(store, filepath.FromSlash(gone))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, filepath.FromSlash(cut)), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(store, "articles", "10", "999.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	// Links, never read: one in place of a page, one of its own.
	outside := filepath.Join(t.TempDir(), "outside.json")
	if err := os.WriteFile(outside, []byte("[1]"), 0o644); err != nil {
		t.Fatal(err)
	}
	linked := before.Files[3].Path
	if err := os.Remove(filepath.Join(store, filepath.FromSlash(linked))); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{linked, "articles/10/998.json"} {
		if err := os.Symlink(outside, filepath.Join(store, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	s.edit(t, 3, "Edited, with the folder changed by another tool")
	after := readManifest(t, s.out)
	sums := map[string]string{}
	for _, f := range before.Files {
		sums[f.Path] = f.SHA256
	}
	up, repair := 0, 0
	for _, f := range after.Files {
		switch {
		case sums[f.Path] != f.SHA256:
			up++
		case f.Path == gone || f.Path == cut || f.Path == linked:
			repair++
		}
	}
	_, del := changed(before, after)
	res := publishDir(t, b, s.out, lockOptions(url, store))
	if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want || res.Listed {
		t.Errorf("trusting the manifest: got %+v, listed %v; want %+v, not listed", got, res.Listed, want)
	}
	opt := lockOptions(url, store)
	opt.Full = true
	res = publishDir(t, b, s.out, opt)
	if got, want := countsOf(res), (counts{Uploaded: repair, Unchanged: len(after.Files) - repair + 1, Checked: len(after.Files) - 2, Deleted: 2}); got != want || !res.Listed {
		t.Errorf("--full: got %+v, listed %v; want %+v, listed", got, res.Listed, want)
	}
	checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
	plainFolder(t, store, s.out, nil)
	if data, err := os.ReadFile(outside); err != nil || string(data) != "[1]" {
		t.Errorf("the file the links named: %q, %v", data, err)
	}
}

// TestPublishFolderOneWalk: a bucket folder of a few thousand files is
// listed (here by --full) in one walk of the disk: each folder under
// articles/ read once, not one walk per thousand keys as
// gocloud.dev/blob/fileblob's paged listing does, and no request of the
// bucket's driver.
func TestPublishFolderOneWalk(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b, rec := record(t, open(t, url))
	publishDir(t, b, s.out, lockOptions(url, store))
	const folders, files = 30, 100 // files another tool wrote, which stay
	for i := range folders {
		dir := filepath.Join(store, "articles", "other", fmt.Sprint(i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		for j := range files {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.txt", j)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	var dirs []string
	err := filepath.WalkDir(filepath.Join(store, "articles"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			rel, _ := filepath.Rel(store, p)
			dirs = append(dirs, filepath.ToSlash(rel))
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	read := map[string]int{}
	lists := 0
	opt := lockOptions(url, store)
	opt.Full = true
	opt.step = func(_ context.Context, what string) {
		if dir, ok := strings.CutPrefix(what, "read "); ok {
			read[dir]++
		}
		if what == "list "+Prefix {
			lists++
		}
	}
	res, _ := recordedPublish(t, b, rec, s.out, opt)
	if res.Foreign != folders*files || !res.Listed || lists != 1 || rec.lists.Load() != 0 {
		t.Errorf("found %d files of another tool, listed %v (%d listings, %d list requests of the driver); want %d, one walk, no request",
			res.Foreign, res.Listed, lists, rec.lists.Load(), folders*files)
	}
	for _, d := range dirs {
		if read[d] != 1 {
			t.Errorf("%s read %d times, want once", d, read[d])
		}
	}
	if len(read) != len(dirs) {
		t.Errorf("read %d folders, want the %d under articles/", len(read), len(dirs))
	}
}

// TestPublishFolderArticlesLink: the bucket folder's articles is a link
// to a folder elsewhere (a web root on another disk): a new build uploads
// its changes only, and deletes what the build no longer has, there;
// --full walks what it links to.
func TestPublishFolderArticlesLink(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	opt := lockOptions(url, store)
	opt.OutputDir = s.out
	publishDir(t, b, s.out, opt)
	elsewhere := filepath.Join(t.TempDir(), "articles")
	if err := os.Rename(filepath.Join(store, "articles"), elsewhere); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, filepath.Join(store, "articles")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(elsewhere, "10", "999.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	before := readManifest(t, s.out)
	s.edit(t, 3, "Edited, with articles linked elsewhere")
	after := readManifest(t, s.out)
	up, del := changed(before, after)
	res := publishDir(t, b, s.out, opt)
	if got, want := countsOf(res), (counts{Uploaded: up + 1, Unchanged: len(after.Files) - up, Deleted: del}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	// --full walks it, through the link, and finds what another tool
	// added there.
	opt.Full = true
	res = publishDir(t, b, s.out, opt)
	if got, want := countsOf(res), (counts{Unchanged: len(after.Files) + 1, Checked: len(after.Files), Deleted: 1}); got != want {
		t.Errorf("--full: got %+v, want %+v", got, want)
	}
	// The folder linked to is the build's articles/, no more.
	plainFolder(t, filepath.Dir(elsewhere), s.out, map[string]string{})
	for _, f := range after.Files {
		want, err := os.ReadFile(filepath.Join(s.out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(filepath.Join(filepath.Dir(elsewhere), filepath.FromSlash(f.Path))); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s: %v, not the build's", f.Path, err)
		}
	}
	if info, err := os.Lstat(filepath.Join(store, "articles")); err != nil || info.Mode().Type() != fs.ModeSymlink {
		t.Errorf("articles: %v, %v; want the link kept", info, err)
	}
}
