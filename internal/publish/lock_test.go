package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/heaptest"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// lockOptions are testOptions for a bucket made by newBucket: on disk,
// the lock is a file of the bucket's folder, as feedgen publish makes it.
func lockOptions(url, store string) Options {
	opt := testOptions()
	if strings.HasPrefix(url, "file://") {
		opt.Folder = store
	}
	return opt
}

// signal is a writer that closes its channel on the first write: a test
// waits on it for a notice.
type signal struct {
	once sync.Once
	c    chan struct{}
	mu   sync.Mutex
	b    bytes.Buffer
}

func newSignal() *signal { return &signal{c: make(chan struct{})} }

func (s *signal) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.b.Write(p)
	s.mu.Unlock()
	s.once.Do(func() { close(s.c) })
	return len(p), nil
}

// consistent fails the test unless the bucket holds, under articles/,
// exactly the pages its manifest.json names with their bytes, and that
// manifest is the one of one of the builds in dirs. It returns that dir.
func consistent(t *testing.T, b *blob.Bucket, dirs ...string) string {
	t.Helper()
	data, err := b.ReadAll(context.Background(), manifest.Name)
	if err != nil {
		t.Fatalf("reading the bucket's manifest: %v", err)
	}
	for _, dir := range dirs {
		local, err := os.ReadFile(filepath.Join(dir, manifest.Name))
		if err != nil {
			t.Fatal(err)
		}
		if bytes.Equal(local, data) {
			checkBucket(t, b, dir, config.DefaultCacheControl, nil)
			return dir
		}
	}
	t.Fatalf("the bucket's manifest is none of the builds'")
	return ""
}

// TestPublishConcurrent publishes two builds to one bucket at once, as
// two CI jobs would (the probe's case: both exited 0, and the bucket
// ended with one build's manifest and many of the other's pages). Either
// way the bucket ends holding exactly one build: with waiting, both
// publishes succeed one after the other; without, one fails with a
// *LockedError.
func TestPublishConcurrent(t *testing.T) {
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		x := newSite(t, corpus.Options{Articles: 30, Limits: []int{5, 10}, Seed: 1, Filters: []string{"tag"}})
		y := newSite(t, corpus.Options{Articles: 31, Limits: []int{5, 10}, Seed: 2, Filters: []string{"tag"}})
		for round := range 2 {
			url, store := newBucket(t)
			b := open(t, url)
			wait := round == 0
			errs := make([]error, 2)
			var wg sync.WaitGroup
			for i, dir := range []string{x.out, y.out} {
				wg.Go(func() {
					opt := lockOptions(url, store)
					opt.Workers = 4
					if !wait {
						opt.LockWait = -1
					}
					_, errs[i] = Publish(context.Background(), b, os.DirFS(dir), opt)
				})
			}
			wg.Wait()
			failed := 0
			for _, err := range errs {
				var le *LockedError
				switch {
				case err == nil:
				case !wait && errors.As(err, &le):
					failed++
				default:
					t.Fatalf("round %d: %v", round, err)
				}
			}
			if failed > 1 {
				t.Fatalf("round %d: both publishes were refused", round)
			}
			consistent(t, b, x.out, y.out)
		}
	})
}

// TestPublishWaits holds the lock with one publish, and checks what two
// others do meanwhile: one told not to wait fails at once, changing
// nothing, with a message naming the holder; one told to wait says so,
// waits until the first is done, and then publishes.
func TestPublishWaits(t *testing.T) {
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		x := newSite(t, smallOpt)
		y := newSite(t, corpus.Options{Articles: 15, Limits: []int{5, 10}, Seed: 8, Filters: []string{"tag"}})
		url, store := newBucket(t)
		b := open(t, url)
		publishDir(t, b, x.out, lockOptions(url, store))

		locked, resume := make(chan struct{}), make(chan struct{})
		first := make(chan error, 1)
		go func() {
			opt := lockOptions(url, store)
			opt.Owner = "the first"
			opt.step = func(_ context.Context, what string) {
				if what == "locked" {
					close(locked)
					<-resume
				}
			}
			_, err := Publish(context.Background(), b, os.DirFS(x.out), opt)
			first <- err
		}()
		<-locked

		before := storeSnapshot(t, store)
		opt := lockOptions(url, store)
		opt.LockWait = -1
		_, err := Publish(context.Background(), b, os.DirFS(y.out), opt)
		var le *LockedError
		if !errors.As(err, &le) || !strings.Contains(err.Error(), "the publish of the first, started ") || !strings.Contains(err.Error(), "--lock-wait") {
			t.Fatalf("got %v, want a LockedError naming the first publish", err)
		}
		sameStore(t, store, before)

		notices := newSignal()
		second := make(chan error, 1)
		go func() {
			opt := lockOptions(url, store)
			opt.LockWait = time.Minute
			opt.Notices = notices
			_, err := Publish(context.Background(), b, os.DirFS(y.out), opt)
			second <- err
		}()
		<-notices.c
		if got := notices.b.String(); !strings.HasPrefix(got, "waiting for the publish of the first, started ") {
			t.Errorf("notice %q", got)
		}
		select {
		case err := <-second:
			t.Fatalf("the second publish ended while the first held the lock: %v", err)
		default:
		}
		close(resume)
		if err := <-first; err != nil {
			t.Fatal(err)
		}
		if err := <-second; err != nil {
			t.Fatal(err)
		}
		checkBucket(t, b, y.out, config.DefaultCacheControl, nil)
	})
}

// TestPublishTakesOverDeadLock checks the lock a publish left: one that
// stopped half way says so, one that died holding it is taken over (at
// once on disk, where the kernel released it; after a lease in a cloud,
// or at once when its last renewal is long past), and the publish after
// either trusts no manifest: it lists and checks the bucket, every file
// of a build in the chunks layout whose collections have several leaves
// (retree): roots, leaves and chunks.
func TestPublishTakesOverDeadLock(t *testing.T) {
	dead := func(renewed time.Time, state string) []byte {
		info := lockInfo{Owner: "a dead one", Token: "t0", Started: renewed, Renewed: renewed, State: state}
		return info.marshal()
	}
	out := newChunksSite(t, corpus.Options{Articles: 96, Seed: 7, Filters: []string{"section"}}).retree(t)
	if n := len(leavesOf(t, out, chunk.IndexPath(listing.Dir))); n < 2 {
		t.Fatalf("the main listing has %d leaves, want several", n)
	}
	forBackends(t, func(t *testing.T, newBucket newBucketFunc) {
		s := &site{out: out}
		m := readManifest(t, s.out)
		pages := len(m.Files)
		// A repair checks the roots; a chunk or leaf of the build's size
		// in a bucket whose manifest publish wrote holds its bytes (its
		// name is their digest).
		roots := pages - len(immutables(m))
		for _, tt := range []struct {
			name  string
			lock  []byte
			lease time.Duration
		}{
			{"interrupted", dead(time.Now(), lockInterrupted), time.Hour},
			// Renewed long ago by its own clock: taken over once seen
			// unchanged for a lease, by this clock (none are compared).
			// The lease is also the one this publish holds the lock by:
			// its renewals must each land within two thirds of it, which
			// a loaded machine's Azurite does not always do in one
			// second.
			{"killed", dead(time.Now().Add(-3*time.Hour), lockRunning), 3 * time.Second},
			{"damaged", []byte("{not json"), time.Hour},
		} {
			t.Run(tt.name, func(t *testing.T) {
				url, store := newBucket(t)
				b := open(t, url)
				opt := lockOptions(url, store)
				publishDir(t, b, s.out, opt)
				if opt.Folder != "" {
					if err := os.WriteFile(filepath.Join(store, LockName), tt.lock, 0o644); err != nil {
						t.Fatal(err)
					}
				} else if err := b.WriteAll(context.Background(), LockName, tt.lock, nil); err != nil {
					t.Fatal(err)
				}
				opt.LockLease = tt.lease
				opt.LockWait = time.Minute
				res := publishDir(t, b, s.out, opt)
				if !strings.HasSuffix(res.Remote, "did not finish") {
					t.Errorf("got Remote %q, want that the last publish did not finish", res.Remote)
				}
				if got, want := countsOf(res), (counts{Unchanged: pages + 1, Checked: roots}); got != want {
					t.Errorf("got %+v, want %+v", got, want)
				}
				checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
				// And the next one trusts the bucket again.
				if res := publishDir(t, b, s.out, opt); res.Remote != "" || res.Checked != 0 {
					t.Errorf("the publish after: Remote %q, %d checked", res.Remote, res.Checked)
				}
			})
		}
	})
}

// TestPublishLosesLock takes the lock of a running publish away (another
// publish took it over while this one was stopped): the publish notices
// at its next renewal, stops, and writes no manifest.
func TestPublishLosesLock(t *testing.T) {
	v := versitytest.Start(t)
	x := newSite(t, smallOpt)
	y := newSite(t, corpus.Options{Articles: 15, Limits: []int{5, 10}, Seed: 8, Filters: []string{"tag"}})
	url, _ := v.NewBucket(t)
	b := open(t, url)
	publishDir(t, b, x.out, testOptions())
	before, err := b.ReadAll(context.Background(), manifest.Name)
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.LockLease = 600 * time.Millisecond
	opt.step = func(ctx context.Context, what string) {
		if what != "read" {
			return
		}
		other := lockInfo{Owner: "another", Token: "other", State: lockRunning}
		if err := b.WriteAll(context.Background(), LockName, other.marshal(), nil); err != nil {
			t.Error(err)
		}
		// The next renewal finds the lock another's, and stops the
		// publish.
		select {
		case <-ctx.Done():
		case <-time.After(time.Minute):
			t.Error("the publish did not notice that it lost its lock")
		}
	}
	_, err = Publish(context.Background(), b, os.DirFS(y.out), opt)
	if !errors.Is(err, errLockLost) {
		t.Fatalf("got %v, want the lock lost", err)
	}
	after, err := b.ReadAll(context.Background(), manifest.Name)
	if err != nil || !bytes.Equal(after, before) {
		t.Errorf("the bucket's manifest changed (%v)", err)
	}
}

// TestPublishManifestChanged writes the bucket's manifest.json behind a
// publish's back (no lock can stop another tool): on S3, whose writes can
// be conditional, the publish does not replace it.
func TestPublishManifestChanged(t *testing.T) {
	v := versitytest.Start(t)
	x := newSite(t, smallOpt)
	y := newSite(t, corpus.Options{Articles: 15, Limits: []int{5, 10}, Seed: 8, Filters: []string{"tag"}})
	url, _ := v.NewBucket(t)
	b := open(t, url)
	publishDir(t, b, x.out, testOptions())
	other := []byte(`{"written":"by another tool"}`)
	opt := testOptions()
	opt.step = func(_ context.Context, what string) {
		if what == "read" {
			if err := b.WriteAll(context.Background(), manifest.Name, other, nil); err != nil {
				t.Error(err)
			}
		}
	}
	_, err := Publish(context.Background(), b, os.DirFS(y.out), opt)
	if err == nil || !strings.Contains(err.Error(), "manifest.json changed in the bucket while this publish ran") {
		t.Fatalf("got %v, want the conditional write refused", err)
	}
	if got, err := b.ReadAll(context.Background(), manifest.Name); err != nil || !bytes.Equal(got, other) {
		t.Errorf("the other tool's manifest was replaced: %s, %v", got, err)
	}
	// The next publish, which finds the lock saying this one did not
	// finish, repairs the bucket.
	publishDir(t, b, y.out, testOptions())
	checkBucket(t, b, y.out, config.DefaultCacheControl, nil)
}

// TestPublishLargeRemoteManifest gives the bucket a manifest far larger
// than the build's (100,000 pages the build does not have): publish, and
// its dry run, read it as a stream and keep no more of it than they could
// delete, so that the heap stays far below the manifest's size.
func TestPublishLargeRemoteManifest(t *testing.T) {
	s := newSite(t, smallOpt)
	// A folder with attribute files (fileblob's own way): a bucket that
	// keeps attributes, as the clouds' do.
	url, _ := fileBucket(t)
	b, err := blob.OpenBucket(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	local := readManifest(t, s.out)
	const extra = 100_000
	big := *local
	big.Files = append([]manifest.File(nil), local.Files...)
	sum := strings.Repeat("0123456789abcdef", 4)
	for i := range extra {
		big.Files = append(big.Files, manifest.File{Path: fmt.Sprintf("articles/old/%d/%d.json", i/1000+1, i), Size: 4000, SHA256: sum, Input: sum})
	}
	data := big.Marshal()
	if err := b.WriteAll(context.Background(), manifest.Name, data, &blob.WriterOptions{ContentType: listing.ContentType,
		CacheControl: config.DefaultCacheControl, Metadata: map[string]string{MetaSHA256: sha256Hex(data), MetaState: StateComplete}}); err != nil {
		t.Fatal(err)
	}
	big.Files = nil
	for _, dry := range []bool{true, false} {
		var log bytes.Buffer
		opt := testOptions()
		opt.DryRun, opt.Log = dry, &log
		var res *Result
		peak := heaptest.Growth(func() {
			var err error
			res, err = Publish(context.Background(), b, os.DirFS(s.out), opt)
			var tm *TooManyDeletesError
			if !errors.As(err, &tm) || tm.Deletes != extra {
				t.Errorf("dry run %v: got %v, want %d deletes, too many", dry, err, extra)
			}
		})
		t.Logf("dry run %v: the heap grew by at most %d bytes", dry, peak)
		if limit := uint64(len(data)) / 2; peak > limit {
			t.Errorf("dry run %v: the heap grew by %d bytes reading a manifest of %d, want under %d", dry, peak, len(data), limit)
		}
		if dry && (res.More != extra-DefaultMaxDeletes-1 || !strings.HasSuffix(log.String(), fmt.Sprintf("and %d pages more to delete\n", res.More))) {
			t.Errorf("dry run: More %d, log ends %q", res.More, log.String()[max(0, log.Len()-80):])
		}
	}
	t.Logf("a manifest of %d bytes", len(data))
}

// TestRemoteManifestWholeHash reads bucket manifests of many sizes, among
// them those whose final byte the JSON decoder never needs to read: each
// is trusted, its SHA-256 taken over every byte.
func TestRemoteManifestWholeHash(t *testing.T) {
	s := newSite(t, smallOpt)
	b := memblob.OpenBucket(nil)
	defer b.Close()
	local := readManifest(t, s.out)
	p := &publisher{bucket: b, opt: testOptions().withDefaults()}
	var err error
	if p.local, err = readLocal(context.Background(), os.DirFS(s.out)); err != nil {
		t.Fatal(err)
	}
	p.index = map[string]int{}
	for i, f := range local.Files {
		p.index[f.Path] = i
	}
	small := *local
	small.Files, small.Collections = local.Files[:1], local.Collections[:1]
	base := len(small.Marshal())
	for size := base; size < 4200; size++ {
		m := small
		m.Generator = strings.Repeat("g", len(small.Generator)+size-base)
		data := m.Marshal()
		if err := b.WriteAll(context.Background(), manifest.Name, data, &blob.WriterOptions{ContentType: listing.ContentType,
			CacheControl: config.DefaultCacheControl, Metadata: map[string]string{MetaSHA256: sha256Hex(data), MetaState: StateComplete}}); err != nil {
			t.Fatal(err)
		}
		rem := &remote{size: make([]int64, len(local.Files)), held: make([]held, len(local.Files)), bound: -1}
		if err := p.readManifest(context.Background(), rem); err != nil || !rem.trusted {
			t.Fatalf("a manifest of %d bytes: trusted %v, %q, %v", len(data), rem.trusted, rem.note, err)
		}
	}
}

// TestFence checks the check made before every write: once the hold has
// ended (as after a SIGSTOP of the process longer than it, before the
// timer that would say so has run), the write fails and the publish is
// told, at once, without a request.
func TestFence(t *testing.T) {
	var told error
	l := &objectLock{lost: func(err error) { told = err }}
	l.until = time.Now().Add(time.Hour)
	if err := l.fence(); err != nil {
		t.Fatalf("within the hold: %v", err)
	}
	l.until = time.Now().Add(-time.Millisecond)
	if err := l.fence(); !errors.Is(err, errLockLost) || !errors.Is(told, errLockLost) {
		t.Fatalf("past the hold: %v, told %v", err, told)
	}
	if l.lostNow() == nil {
		t.Error("the loss is not recorded for release")
	}
	// What the publish is told says why: the service stopped answering
	// the renewals, or failed them.
	for _, tt := range []struct {
		failed error
		want   string
	}{
		{nil, "(no renewal came back)"},
		{fmt.Errorf("renewing: %w", context.DeadlineExceeded), "(the bucket's service stopped answering)"},
		{codeError("InternalError"), "(the last try: InternalError: message of InternalError)"},
	} {
		l := &objectLock{lost: func(error) {}}
		l.sent, l.until, l.failed = time.Now().Add(-21*time.Second), time.Now().Add(-time.Millisecond), tt.failed
		want := "this publish could not renew the bucket's lock " + LockName + " for 21s " + tt.want + ", and stopped: past that, another publish may take the bucket over; check that the bucket's service answers, and publish again"
		if err := l.fence(); !errors.Is(err, errLockLost) || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	}
}
