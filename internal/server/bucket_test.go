package server

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/publish/emulatortest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"github.com/feedgen/feedgen/internal/syndication"
	"gocloud.dev/blob"
)

// The tests of serving from a bucket publish real builds with feedgen's
// publish to the real servers of the four kinds of bucket publish writes
// to: a folder (file://), versitygw (s3://), fake-gcs-server (gs://) and
// Azurite (azblob://), and compare the answers with those of the same
// build served from its folder.

// azurite is the Azurite the package's tests share (slow to start),
// stopped by TestMain.
var azurite emulatortest.Shared

// bucketKind is one kind of bucket: newBucket makes an empty one and
// returns its URL; proc, when not nil, is its server's process.
type bucketKind struct {
	name      string
	newBucket func(t *testing.T) string
	proc      *os.Process
}

// forBuckets runs test with a bucket of each kind, its server started for
// the test (Azurite: shared).
func forBuckets(t *testing.T, test func(t *testing.T, k bucketKind)) {
	t.Run("file", func(t *testing.T) {
		test(t, bucketKind{name: "file", newBucket: func(t *testing.T) string { return "file://" + filepath.ToSlash(t.TempDir()) }})
	})
	t.Run("s3", func(t *testing.T) {
		v := versitytest.Start(t)
		test(t, bucketKind{name: "s3", newBucket: func(t *testing.T) string { u, _ := v.NewBucket(t); return u }, proc: v.Process})
	})
	t.Run("gcs", func(t *testing.T) {
		g := emulatortest.GCS(t)
		test(t, bucketKind{name: "gcs", newBucket: func(t *testing.T) string { u, _ := g.NewBucket(t); return u }})
	})
	t.Run("azblob", func(t *testing.T) {
		a := azurite.Azurite(t)
		test(t, bucketKind{name: "azblob", newBucket: func(t *testing.T) string { u, _ := a.NewBucket(t); return u }})
	})
}

// openBucket opens a bucket URL as feedgen serve --dir opens it.
func openBucket(t *testing.T, u string) *blob.Bucket {
	t.Helper()
	bk, err := publish.ParseBucketURL(u)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bk.Open(context.Background(), publish.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// publishOut publishes the build in out to b, as feedgen publish does.
func publishOut(t *testing.T, b *blob.Bucket, out string) {
	t.Helper()
	if _, err := publish.Publish(context.Background(), b, os.DirFS(out), publish.Options{MaxDeletes: -1}); err != nil {
		t.Fatalf("publish: %v", err)
	}
}

// versityBucket publishes the build in out to a new bucket of a
// versitygw started for the test: the server, the bucket's URL, and the
// bucket, open.
func versityBucket(t *testing.T, out string) (*versitytest.Server, string, *blob.Bucket) {
	v := versitytest.Start(t)
	u, _ := v.NewBucket(t)
	b := openBucket(t, u)
	publishOut(t, b, out)
	return v, u, b
}

// bucketSites are a site of each layout, with every filter and feeds.
func bucketSites(t *testing.T, articles int) map[string]testSite {
	sites := map[string]testSite{}
	for _, lay := range []string{layout.PagesName, layout.ChunksName} {
		sites[lay] = makeSite(t, corpus.Options{Articles: articles, Limits: []int{5, 10}, Seed: 4, Layout: lay,
			Filters: []string{"section", "category", "tag", "author"}, Feeds: true})
	}
	return sites
}

// bucketTargets are requests of every collection of the build in out:
// pages of several limits and offsets (past the end, not pre-rendered),
// and its feeds.
func bucketTargets(t *testing.T, out string) []string {
	m := readManifest(t, out)
	var targets []string
	for _, c := range m.Collections {
		v := url.Values{}
		for _, p := range c.Params {
			v.Set(p.Key, p.Value)
		}
		q := v.Encode()
		if q != "" {
			q += "&"
		}
		for _, limit := range []int{1, 5, 7, 10} {
			for _, offset := range []int{0, 3, 5, c.Count - 1, c.Count, 1000} {
				if offset >= 0 {
					targets = append(targets, fmt.Sprintf("%s?%slimit=%d&offset=%d", listing.Path, q, limit, offset))
				}
			}
		}
		for _, f := range syndication.Formats() {
			targets = append(targets, listing.Path+f.File+"?"+q+"utm=x")
		}
	}
	return targets
}

// answer sends method target to the server at addr (host:port) with the
// extra header lines, and returns the answer, its Date left out.
func answer(t testing.TB, addr, method, target, header string) string {
	t.Helper()
	req := method + " " + target + " HTTP/1.1\r\nHost: example.com\r\n" + header + "\r\n"
	return dateField.ReplaceAllString(exchange(t, addr, req, method), "\r\nDate: D\r\n")
}

// etagIn returns the ETag of an answer, "" for none.
func etagIn(resp string) string {
	_, after, ok := strings.Cut(resp, "\r\nEtag: ")
	if !ok {
		return ""
	}
	tag, _, _ := strings.Cut(after, "\r\n")
	return tag
}

// TestBucketMatchesFolder is the conformance test of serving from a
// bucket: a build published to each kind of bucket, served from there,
// answers every request with the bytes its folder's server answers (but
// for the Date): pages of both layouts, feeds, HEAD, 304. With a cache
// of one byte, nothing is kept and every body is read again. The kinds
// of bucket differ only in how a file is read: the folder's (file://)
// gets every other target's requests, the others one in five of those.
func TestBucketMatchesFolder(t *testing.T) {
	sites := bucketSites(t, 30)
	type exchangeWant struct{ target, method, header, answer string }
	wants := map[string][]exchangeWant{}
	for lay, site := range sites {
		folder, _ := newServer(t, Options{Source: Folder(site.out)})
		addr := strings.TrimPrefix(serve(t, folder), "http://")
		for i, target := range bucketTargets(t, site.out) {
			if i%2 != 0 {
				continue // one in two, at most, is asked of a bucket (below)
			}
			get := answer(t, addr, "GET", target, "")
			wants[lay] = append(wants[lay], exchangeWant{target, "GET", "", get},
				exchangeWant{target, "HEAD", "", answer(t, addr, "HEAD", target, "")})
			if tag := etagIn(get); tag != "" {
				h := "If-None-Match: " + tag + "\r\n"
				wants[lay] = append(wants[lay], exchangeWant{target, "GET", h, answer(t, addr, "GET", target, h)})
			}
		}
	}
	forBuckets(t, func(t *testing.T, k bucketKind) {
		for _, lay := range []string{layout.PagesName, layout.ChunksName} {
			t.Run(lay, func(t *testing.T) {
				u := k.newBucket(t)
				b := openBucket(t, u)
				publishOut(t, b, sites[lay].out)
				caches, every := []int64{0}, 5
				if k.name == "file" {
					caches, every = append(caches, 1), 1
				}
				for _, cache := range caches {
					s, log := newServer(t, Options{Source: Bucket(u, b, cache)})
					if !strings.Contains(log.String(), "loaded the build of") {
						t.Fatalf("log: %s", log)
					}
					addr := strings.TrimPrefix(serve(t, s), "http://")
					n := 0
					for i, w := range wants[lay] {
						if i%every != 0 {
							continue
						}
						if got := answer(t, addr, w.method, w.target, w.header); got != w.answer {
							t.Fatalf("cache %d: %s %s %q:\n got %.400q\nwant %.400q", cache, w.method, w.target, w.header, got, w.answer)
						}
						n++
					}
					if held := s.remote.cached(); cache > 0 && held > cache {
						t.Errorf("cache of %d bytes holds %d", cache, held)
					}
					// Every body let go of is freed once its last answer
					// is written (the server may not be done with it when
					// the client has read it).
					if cache > 0 {
						waitFor(t, 5*time.Second, "the bodies let go of to be freed", func() bool { return s.remote.mapped.Load() == 0 })
					}
					t.Logf("cache %d: %d requests, the same answers", cache, n)
				}
			})
		}
	})
}

// TestBucketFollowsPublish publishes a build over the one a server of
// the bucket serves while readers ask for its pages and feeds: every
// answer is the whole answer of one of the two builds, never a mix (in
// the pages layout, publish writes the new page files over the old ones
// before the manifest: a request that reads one waits for the switch),
// and once switched, every answer is the new build's.
func TestBucketFollowsPublish(t *testing.T) {
	olds, news := bucketSites(t, 30), bucketSites(t, 33)
	forBuckets(t, func(t *testing.T, k bucketKind) {
		for _, lay := range []string{layout.PagesName, layout.ChunksName} {
			if lay == layout.ChunksName && (k.name == "gcs" || k.name == "azblob") {
				continue // chunks are never replaced: file and s3 are enough
			}
			t.Run(lay, func(t *testing.T) {
				old, nw := olds[lay], news[lay]
				u := k.newBucket(t)
				b := openBucket(t, u)
				publishOut(t, b, old.out)
				var targets []string
				for i, target := range bucketTargets(t, nw.out) {
					if i%3 == 0 {
						targets = append(targets, target)
					}
				}
				// What each build answers, from its folder.
				answers := make([]map[string]string, 2)
				for i, out := range []string{old.out, nw.out} {
					f, _ := newServer(t, Options{Source: Folder(out)})
					addr := strings.TrimPrefix(serve(t, f), "http://")
					answers[i] = map[string]string{}
					for _, target := range targets {
						answers[i][target] = answer(t, addr, "GET", target, "")
					}
				}
				// In the pages layout, the server learns of the new build
				// from the requests that find a page file replaced, and
				// they wait for it, not from its poll.
				// So that requests keep reading the bucket, the cache
				// keeps nothing.
				poll, cache := 20*time.Millisecond, int64(0)
				if lay == layout.PagesName {
					poll, cache = time.Hour, 1
				}
				attempts := make(chan struct{}, 1)
				s, _ := newServer(t, Options{Source: Bucket(u, b, cache), PollInterval: poll, SwitchTimeout: time.Minute, onAttempt: func(error) {
					select {
					case attempts <- struct{}{}:
					default:
					}
				}})
				switched := make(chan struct{})
				go func() {
					for range attempts {
						if s.Current().Articles == 33 {
							close(switched)
							return
						}
					}
				}()
				t.Cleanup(func() { close(attempts) })
				addr := strings.TrimPrefix(serve(t, s), "http://")

				stop := make(chan struct{})
				var wg sync.WaitGroup
				errs := make(chan error, 4)
				for r := range 4 {
					wg.Go(func() {
						for i := r; ; i++ {
							select {
							case <-stop:
								return
							default:
							}
							target := targets[i%len(targets)]
							got, err := tryExchange(addr, "GET "+target+" HTTP/1.1\r\nHost: example.com\r\n\r\n", "GET")
							if err != nil {
								errs <- err
								return
							}
							got = dateField.ReplaceAllString(got, "\r\nDate: D\r\n")
							if got != answers[0][target] && got != answers[1][target] {
								errs <- fmt.Errorf("GET %s: an answer of neither build:\n%.400q", target, got)
								return
							}
						}
					})
				}
				publishOut(t, b, nw.out)
				select {
				case <-switched:
				case err := <-errs:
					t.Fatal(err)
				case <-time.After(30 * time.Second):
					t.Fatal("the server did not switch to the new build")
				}
				close(stop)
				wg.Wait()
				close(errs)
				for err := range errs {
					t.Fatal(err)
				}
				for _, target := range targets {
					if got := answer(t, addr, "GET", target, ""); got != answers[1][target] {
						t.Fatalf("after the switch, GET %s:\n got %.400q\nwant %.400q", target, got, answers[1][target])
					}
				}
			})
		}
	})
}

// TestBucketStalled stops the bucket's server (SIGSTOP): what the cache
// holds is still answered, a page that needs the bucket is answered 503
// with Retry-After once the read times out, the log says so once, and
// once the bucket answers again, so does the server.
func TestBucketStalled(t *testing.T) {
	v, u, b := versityBucket(t, chunkSite(t).out)
	s, log := newServer(t, Options{Source: Bucket(u, b, 0), FetchTimeout: time.Second, PollInterval: time.Hour})
	addr := strings.TrimPrefix(serve(t, s), "http://")
	cached := listing.Path + "?limit=5"
	if got := answer(t, addr, "GET", cached, ""); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("GET %s: %.200q", cached, got)
	}
	if err := v.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	resumed := false
	resume := func() {
		if !resumed {
			resumed = true
			v.Process.Signal(syscall.SIGCONT)
		}
	}
	t.Cleanup(resume)
	if got := answer(t, addr, "GET", cached, ""); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("bucket stopped, GET %s (in the cache): %.200q", cached, got)
	}
	far := listing.Path + "?limit=1&offset=" + strconv.Itoa(s.cur.Load().main.count-1)
	if as := s.cur.Load().main.asm; as.chunkOf(s.cur.Load().main.count-1) == as.chunkOf(4) {
		t.Fatal("the main listing has one chunk: the test needs two")
	}
	// A HEAD is answered from the index, without reading the chunk, and
	// so is a conditional GET answered 304.
	head := answer(t, addr, "HEAD", far, "")
	tag := etagIn(head)
	if !strings.HasPrefix(head, "HTTP/1.1 200") || tag == "" {
		t.Fatalf("bucket stopped, HEAD %s: %.300q", far, head)
	}
	if got := answer(t, addr, "GET", far, "If-None-Match: "+tag+"\r\n"); !strings.HasPrefix(got, "HTTP/1.1 304") {
		t.Errorf("bucket stopped, GET %s If-None-Match: %.300q", far, got)
	}
	for range 3 {
		start := time.Now()
		got := answer(t, addr, "GET", far, "")
		if !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "\r\nRetry-After: ") {
			t.Fatalf("bucket stopped, GET %s: %.300q", far, got)
		}
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("the 503 took %s, the read's bound is 1s", d)
		}
	}
	if n := strings.Count(log.String(), "the bucket does not answer"); n != 1 {
		t.Errorf("the log says the bucket does not answer %d times, want once:\n%s", n, log.String())
	}
	resume()
	if got := answer(t, addr, "GET", far, ""); !strings.HasPrefix(got, "HTTP/1.1 200") {
		t.Fatalf("bucket back, GET %s: %.300q", far, got)
	}
	if !strings.Contains(log.String(), "the bucket answers again") {
		t.Errorf("log:\n%s", log.String())
	}
}

// TestBucketDeletedChunk deletes a chunk from the bucket: the pages that
// need it are answered 503 with Retry-After (no newer build comes), the
// others as before.
func TestBucketDeletedChunk(t *testing.T) {
	site := chunkSite(t)
	forBuckets(t, func(t *testing.T, k bucketKind) {
		u := k.newBucket(t)
		b := openBucket(t, u)
		publishOut(t, b, site.out)
		s, _ := newServer(t, Options{Source: Bucket(u, b, 0), SwitchTimeout: 50 * time.Millisecond, PollInterval: time.Hour})
		addr := strings.TrimPrefix(serve(t, s), "http://")
		// The chunk of the main listing's last article.
		as := s.cur.Load().main.asm
		k0 := as.chunkOf(s.cur.Load().main.count - 1)
		if k0 == 0 {
			t.Fatal("the main listing has one chunk: the test needs two")
		}
		if err := b.Delete(context.Background(), as.fetch[k0].path); err != nil {
			t.Fatal(err)
		}
		last := listing.Path + "?limit=1&offset=" + strconv.Itoa(s.cur.Load().main.count-1)
		for range 2 {
			got := answer(t, addr, "GET", last, "")
			if !strings.HasPrefix(got, "HTTP/1.1 503") || !strings.Contains(got, "\r\nRetry-After: ") {
				t.Fatalf("GET %s, its chunk deleted: %.300q", last, got)
			}
		}
		if got := answer(t, addr, "GET", listing.Path+"?limit=1", ""); !strings.HasPrefix(got, "HTTP/1.1 200") {
			t.Fatalf("GET the first page: %.300q", got)
		}
	})
}

// TestBucketGone kills the bucket's server: the requests that need it are
// answered 503, and the log says the bucket does not answer once, however
// many requests and checks of the manifest fail, each naming another
// file.
func TestBucketGone(t *testing.T) {
	v, u, b := versityBucket(t, chunkSite(t).out)
	polls := make(chan struct{}, 1)
	s, log := newServer(t, Options{Source: Bucket(u, b, 0), PollInterval: 10 * time.Millisecond, onPoll: func() {
		select {
		case polls <- struct{}{}:
		default:
		}
	}})
	addr := strings.TrimPrefix(serve(t, s), "http://")
	if err := v.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	v.Process.Wait()
	for i := range 20 {
		target := listing.Path + "?limit=1&offset=" + strconv.Itoa(i*7)
		if got := answer(t, addr, "GET", target, ""); !strings.HasPrefix(got, "HTTP/1.1 503") {
			t.Fatalf("bucket gone, GET %s: %.300q", target, got)
		}
	}
	for range 3 {
		<-polls // checks of the manifest that failed too
	}
	if n := strings.Count(log.String(), "the bucket does not answer"); n != 1 {
		t.Errorf("the log says the bucket does not answer %d times, want once:\n%s", n, log.String())
	}
}

// TestBucketFeedDate: the Last-Modified of a collection's feeds is read
// from one of them when a request first needs it; while that feed cannot
// be read, its feeds are answered 503, and once it can, as from the
// build's folder.
func TestBucketFeedDate(t *testing.T) {
	site := bucketSites(t, 30)[layout.ChunksName]
	u := "file://" + filepath.ToSlash(t.TempDir())
	b := openBucket(t, u)
	publishOut(t, b, site.out)
	folder, _ := newServer(t, Options{Source: Folder(site.out)})
	want := strings.TrimPrefix(serve(t, folder), "http://")
	s, _ := newServer(t, Options{Source: Bucket(u, b, 0), SwitchTimeout: 10 * time.Millisecond, PollInterval: time.Hour})
	addr := strings.TrimPrefix(serve(t, s), "http://")
	kept := map[string][]byte{}
	for _, f := range syndication.Formats() {
		p := layout.FeedPath(listing.Dir, f)
		data, err := b.ReadAll(context.Background(), p)
		if err != nil {
			t.Fatal(err)
		}
		kept[p] = data
		if err := b.Delete(context.Background(), p); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range syndication.Formats() {
		for _, method := range []string{"GET", "HEAD"} {
			if got := answer(t, addr, method, listing.Path+f.File, ""); !strings.HasPrefix(got, "HTTP/1.1 503") {
				t.Fatalf("%s %s, the feeds deleted: %.300q", method, f.File, got)
			}
		}
	}
	for p, data := range kept {
		if err := b.WriteAll(context.Background(), p, data, nil); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range syndication.Formats() {
		for _, method := range []string{"GET", "HEAD"} {
			w := answer(t, want, method, listing.Path+f.File, "")
			if got := answer(t, addr, method, listing.Path+f.File, ""); got != w {
				t.Fatalf("%s %s, the feeds back:\n got %.300q\nwant %.300q", method, f.File, got, w)
			}
		}
	}
}

// TestBucketPollUnchanged: the checks of an unchanged manifest read
// nothing: the build New loaded is not loaded again.
func TestBucketPollUnchanged(t *testing.T) {
	site := bucketSites(t, 30)[layout.ChunksName]
	u := "file://" + filepath.ToSlash(t.TempDir())
	b := openBucket(t, u)
	publishOut(t, b, site.out)
	var attempts atomic.Int32
	polls := make(chan struct{}, 1)
	s, _ := newServer(t, Options{Source: Bucket(u, b, 0), PollInterval: 5 * time.Millisecond,
		onAttempt: func(error) { attempts.Add(1) },
		onPoll: func() {
			select {
			case polls <- struct{}{}:
			default:
			}
		}})
	serve(t, s)
	for range 5 {
		<-polls
	}
	if n := attempts.Load(); n != 1 {
		t.Errorf("%d loads, want New's alone", n)
	}
}

// TestBucketNoBuild: a bucket without a build is refused at start, saying
// to publish one.
func TestBucketNoBuild(t *testing.T) {
	u := "file://" + filepath.ToSlash(t.TempDir())
	_, err := New(context.Background(), Options{Source: Bucket(u, openBucket(t, u), 0)})
	if err == nil || !strings.Contains(err.Error(), "feedgen publish") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("New: %v", err)
	}
}

// TestRemoteCache reads bodies through the cache of a server of a bucket:
// it keeps what fits in its size, lets go of the least recently used
// first, reads a body again once let go, and keeps neither a body that
// does not match the manifest (replaced) nor one the bucket lacks.
func TestRemoteCache(t *testing.T) {
	u := "file://" + filepath.ToSlash(t.TempDir())
	b := openBucket(t, u)
	refs := map[string]remoteRef{}
	for _, name := range []string{"a", "b", "c"} {
		data := []byte(strings.Repeat(name, 100))
		if err := b.WriteAll(context.Background(), name, data, nil); err != nil {
			t.Fatal(err)
		}
		refs[name] = remoteRef{path: name, size: 100, sum: sha256.Sum256(data)}
	}
	var log strings.Builder
	r := newRemote(b, 250, time.Second, &log)
	kept := func() string {
		var names []string
		for el := r.lru.Front(); el != nil; el = el.Next() {
			names = append(names, string(el.Value.(*remoteEntry).data[:1]))
		}
		return strings.Join(names, "")
	}
	for _, step := range []struct {
		get, want string // kept, most recently used first
	}{
		{"a", "a"}, {"b", "ba"}, {"a", "ab"}, {"c", "ca"}, {"b", "bc"},
	} {
		data, e, err := r.get(refs[step.get], nil, r.deadline())
		if err != nil || string(data) != strings.Repeat(step.get, 100) {
			t.Fatalf("get %s: %q, %v", step.get, data, err)
		}
		e.release()
		if got := kept(); got != step.want || r.cached() != int64(100*len(step.want)) {
			t.Fatalf("after get %s: kept %q (%d bytes), want %q", step.get, got, r.cached(), step.want)
		}
	}
	bad := refs["a"]
	bad.sum[0]++
	if _, _, err := r.get(bad, nil, r.deadline()); !errors.Is(err, errReplaced) {
		t.Errorf("a body of other bytes: %v, want errReplaced", err)
	}
	if _, _, err := r.get(remoteRef{path: "d", size: 1}, nil, r.deadline()); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a body the bucket lacks: %v, want not exist", err)
	}
	if got := kept(); got != "bc" || len(r.entries) != 2 {
		t.Errorf("kept %q, %d entries; want bc, 2", got, len(r.entries))
	}
	// What the cache let go of is freed once no answer holds it.
	if n := r.mapped.Load(); n != 2*101 {
		t.Errorf("%d bytes of bodies in memory, want the 2 kept", n)
	}
	_, held, err := r.get(refs["b"], nil, r.deadline())
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"a", "c"} {
		_, e, err := r.get(refs[name], nil, r.deadline())
		if err != nil {
			t.Fatal(err)
		}
		e.release()
	}
	if got, n := kept(), r.mapped.Load(); got != "ca" || n != 3*101 {
		t.Errorf("b let go while held: kept %q, %d bytes in memory; want ca and the 3", got, n)
	}
	held.release()
	if n := r.mapped.Load(); n != 2*101 {
		t.Errorf("b released: %d bytes in memory, want the 2 kept", n)
	}
	if log.Len() != 0 {
		t.Errorf("log: %s", log.String())
	}
}

// TestRemoteFSPrefetch: a file read ahead is opened with its bytes, once;
// one the bucket lacks, as not existing; and the load's context ends the
// wait of an Open.
func TestRemoteFSPrefetch(t *testing.T) {
	u := "file://" + filepath.ToSlash(t.TempDir())
	b := openBucket(t, u)
	if err := b.WriteAll(context.Background(), "a/b.json", []byte("[1]"), nil); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	f := newRemoteFS(ctx, newRemote(b, 0, time.Second, io.Discard))
	f.Prefetch([]string{"a/b.json", "a/none.json", "a/b.json"})
	for range 2 {
		data, err := fs.ReadFile(f, "a/b.json")
		if err != nil || string(data) != "[1]" {
			t.Fatalf("a/b.json: %q, %v", data, err)
		}
	}
	if _, err := fs.ReadFile(f, "a/none.json"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a/none.json: %v, want not exist", err)
	}
	if len(f.files) != 2 {
		t.Errorf("%d files read, want 2", len(f.files))
	}
	cancel()
	f.start("a/slow.json") // as if another Open were reading it
	if _, err := f.Open("a/slow.json"); !errors.Is(err, context.Canceled) {
		t.Errorf("Open after the load ended: %v", err)
	}
}
