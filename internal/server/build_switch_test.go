package server

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"io/fs"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"weak"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// readTree returns every file under dir by slash-separated relative path.
func readTree(t testing.TB, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// waitFor checks cond until it holds or the timeout passes.
func waitFor(t *testing.T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !cond() {
		select {
		case <-deadline.C:
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		case <-tick.C:
		}
	}
}

// followEvents counts what New and FollowBuilds of a server do (see
// Options.onAttempt), for a test to wait on instead of sleeping.
type followEvents struct {
	cond     eventtest.Cond
	attempts int // loads of a build tried
	polls    int // checks of the manifest on the timer
}

// countEvents sets the hooks of opt to count into a new followEvents.
func countEvents(opt *Options) *followEvents {
	e := &followEvents{}
	opt.onAttempt = func(error) { e.cond.Change(func() { e.attempts++ }) }
	opt.onPoll = func() { e.cond.Change(func() { e.polls++ }) }
	return e
}

// counts returns the attempts and polls so far.
func (e *followEvents) counts() (attempts, polls int) {
	e.cond.Read(func() { attempts, polls = e.attempts, e.polls })
	return attempts, polls
}

// waitMore waits until attempts and polls have grown by at least n and
// p since a0 and p0, the counts taken before.
func (e *followEvents) waitMore(t *testing.T, what string, a0, p0, n, p int) {
	t.Helper()
	if !e.await(a0, p0, n, p, 10*time.Second) {
		a, pl := e.counts()
		t.Fatalf("timed out waiting for %s: %d attempts and %d polls, want %d and %d", what, a-a0, pl-p0, n, p)
	}
}

// await is waitMore for any goroutine: false when timeout passed first.
func (e *followEvents) await(a0, p0, n, p int, timeout time.Duration) bool {
	return e.cond.Wait(timeout, func() bool { return e.attempts >= a0+n && e.polls >= p0+p })
}

// followBuilds runs s.FollowBuilds until the test ends, and returns once
// it watches the folder, with its events counted.
func followBuilds(t *testing.T, s *Server) *followEvents {
	t.Helper()
	ev := countEvents(&s.opt) // before FollowBuilds starts: nothing reads them yet
	watching := make(chan struct{})
	s.opt.onWatching = func() { close(watching) }
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.FollowBuilds(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	<-watching
	return ev
}

// TestRebuildRace serves a folder to 64 concurrent clients while 20 builds
// of two different sites are written into it, one after the other. Every
// answer must be 200 and a complete page of exactly one of the two builds,
// its ETag and Content-Length those of its body; the server must end on
// the last build.
func TestRebuildRace(t *testing.T) { rebuildRace(t, func(*Options) {}, func(*Server) {}) }

// rebuildRace is TestRebuildRace, with the server's options changed by
// opt, and the server by set.
func rebuildRace(t *testing.T, opt func(*Options), set func(*Server)) {
	siteA := makeSite(t, corpus.Options{Articles: 30, Limits: []int{5, 20}, Seed: 1})
	siteB := makeSite(t, corpus.Options{Articles: 37, Limits: []int{5, 20}, Seed: 2})
	refs := map[int]map[string][]byte{30: readTree(t, siteA.out), 37: readTree(t, siteB.out)}
	out := t.TempDir()
	siteA.build(t, out)

	o := Options{Source: Folder(out), PollInterval: 50 * time.Millisecond, RetryInterval: 2 * time.Millisecond}
	opt(&o)
	s, log := newServer(t, o)
	set(s)
	url := serve(t, s) // Serve watches the folder
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}}
	defer client.CloseIdleConnections()

	var (
		stop     atomic.Bool
		answers  [2]atomic.Int64 // by build: 30 articles, 37 articles
		failures atomic.Int64
		wg       sync.WaitGroup
	)
	fail := func(format string, args ...any) {
		if failures.Add(1) <= 5 {
			t.Errorf(format, args...)
		}
	}
	for c := range 64 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(c), 1))
			for !stop.Load() {
				limit := []int{5, 20}[rng.IntN(2)]
				offset := rng.IntN(45)
				resp, err := client.Get(url + "/articles/?limit=" + strconv.Itoa(limit) + "&offset=" + strconv.Itoa(offset))
				if err != nil {
					fail("request failed: %v", err)
					return
				}
				body, err := io.ReadAll(resp.Body)
				resp.Body.Close()
				if err != nil || resp.StatusCode != http.StatusOK {
					fail("limit %d offset %d: status %d, error %v", limit, offset, resp.StatusCode, err)
					continue
				}
				sum := sha256.Sum256(body)
				if etag := `"` + hex.EncodeToString(sum[:]) + `"`; resp.Header.Get("Etag") != etag {
					fail("limit %d offset %d: ETag %s is not the body's %s", limit, offset, resp.Header.Get("Etag"), etag)
				}
				if resp.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
					fail("limit %d offset %d: Content-Length %s for %d bytes", limit, offset, resp.Header.Get("Content-Length"), len(body))
				}
				var head struct{ Count int }
				if err := json.Unmarshal(body, &head); err != nil {
					fail("limit %d offset %d: %v: %.200s", limit, offset, err, body)
					continue
				}
				ref, ok := refs[head.Count]
				if !ok {
					fail("limit %d offset %d: count %d is neither build's", limit, offset, head.Count)
					continue
				}
				if head.Count == 30 {
					answers[0].Add(1)
				} else {
					answers[1].Add(1)
				}
				if offset >= head.Count {
					checkEmptyPage(t, body, head.Count, limit, strconv.Itoa(offset))
					continue
				}
				if want := ref["articles/"+strconv.Itoa(limit)+"/"+strconv.Itoa(offset)+".json"]; string(body) != string(want) {
					fail("limit %d offset %d: the page of count %d is not that build's page: %.200s", limit, offset, head.Count, body)
				}
			}
		})
	}

	const rebuilds = 20
	sites := [2]testSite{siteA, siteB}
	for i := 1; i <= rebuilds; i++ {
		sites[i%2].build(t, out)
		// Builds at uneven intervals, some back to back: a jitter, not a
		// wait for anything.
		time.Sleep(time.Duration(rand.IntN(10)) * time.Millisecond)
	}
	last := []int{30, 37}[rebuilds%2]
	waitFor(t, 5*time.Second, "the server to switch to the last build", func() bool { return s.Current().Articles == last })
	// Every client reads on, from the last build, before they stop.
	since := answers[0].Load() + answers[1].Load()
	waitFor(t, 5*time.Second, "answers from the last build", func() bool { return answers[0].Load()+answers[1].Load() >= since+256 })
	stop.Store(true)
	wg.Wait()

	switches := strings.Count(log.String(), "switched to the build")
	t.Logf("%d answers from the 30-article build, %d from the 37-article build, %d switches", answers[0].Load(), answers[1].Load(), switches)
	if switches == 0 || answers[0].Load() == 0 || answers[1].Load() == 0 {
		t.Errorf("got %d switches and answers %d/%d, want both builds served", switches, answers[0].Load(), answers[1].Load())
	}
}

// TestFollowBuilds follows a served folder through a new build, a
// failed build and a build that is caught half written.
func TestFollowBuilds(t *testing.T) {
	siteA := makeSite(t, corpus.Options{Articles: 60, Limits: []int{5, 20}, Seed: 1})
	siteB := makeSite(t, corpus.Options{Articles: 75, Limits: []int{5, 20}, Seed: 2})
	out := t.TempDir()
	siteA.build(t, out)
	s, log := newServer(t, Options{Source: Folder(out), PollInterval: 30 * time.Millisecond, RetryInterval: 5 * time.Millisecond})
	if got, want := log.String(), "loaded the build of 2026-11-01T12:00:00Z (60 articles, 121 pages, "; !strings.HasPrefix(got, want) {
		t.Errorf("got log %q, want it to start with %q", got, want)
	}
	ev := followBuilds(t, s)
	count := func() int {
		var p struct{ Count int }
		json.Unmarshal(readBody(t, request(s, "GET", "/articles/", nil)), &p)
		return p.Count
	}

	// A new build: switched to, said once.
	siteB.build(t, out)
	waitFor(t, 5*time.Second, "the switch to the 75-article build", func() bool { return count() == 75 })
	if got := strings.Count(log.String(), "switched to the build of 2026-11-01T12:00:00Z (75 articles, 151 pages, "); got != 1 {
		t.Errorf("got %d switch lines, want 1; log:\n%s", got, log.String())
	}

	// A failed build writes nothing: the server stays, silent.
	before := log.String()
	testfiles.Replace(t, filepath.Join(siteB.dir, "content", "news", "politics", "zz-bad.md"), "---\nid: 1\ntitle: Bad\npublished: someday\n---\n")
	if _, err := siteB.buildInto(out); err == nil {
		t.Fatal("the broken build succeeded")
	}
	a, p := ev.counts()
	ev.waitMore(t, "two checks of the manifest after the failed build", a, p, 0, 2)
	if count() != 75 || log.String() != before {
		t.Errorf("after a failed build: count %d, log %q; want 75 and no new line", count(), strings.TrimPrefix(log.String(), before))
	}

	// A build caught half written: its manifest is there, one of its
	// pages is not yet. The server keeps the old build, says why once,
	// and switches when the page arrives.
	half := t.TempDir()
	siteA.build(t, half)
	files := readTree(t, half)
	const late = "articles/5/0.json"
	for p, data := range files {
		if p != late && p != manifest.Name {
			testfiles.Replace(t, filepath.Join(out, p), string(data))
		}
	}
	testfiles.Replace(t, filepath.Join(out, manifest.Name), string(files[manifest.Name]))
	defer func() {
		if t.Failed() {
			t.Logf("log:\n%s", log.String())
		}
	}()
	waitFor(t, 5*time.Second, "the server to notice the half-written build", func() bool {
		return strings.Contains(log.String(), "not switching builds: "+late+": ") && strings.Contains(log.String(), "; still serving the build of 2026-11-01T12:00:00Z (75 articles")
	})
	a, p = ev.counts()
	ev.waitMore(t, "several retries", a, p, 3, 0)
	if got := count(); got != 75 {
		t.Errorf("got count %d while the build is half written, want 75", got)
	}
	if n := strings.Count(log.String(), "not switching builds"); n != 1 {
		t.Errorf("got %d lines about the half-written build, want 1", n)
	}
	testfiles.Replace(t, filepath.Join(out, late), string(files[late]))
	waitFor(t, 5*time.Second, "the switch to the completed build", func() bool { return count() == 60 })
	if got := strings.Count(log.String(), "switched to the build of 2026-11-01T12:00:00Z (60 articles"); got != 1 {
		t.Errorf("got %d switch lines, want 1; log:\n%s", got, log.String())
	}
}

// TestNewErrors checks that a folder without a usable build is refused,
// with a message that says why. (A build whose pages do not all match its
// manifest is served in part: see TestServeKilledBuild.)
func TestNewErrors(t *testing.T) {
	badFormat := t.TempDir()
	os.WriteFile(filepath.Join(badFormat, manifest.Name), []byte(`{"format":99}`), 0o644)
	missing := t.TempDir()
	tests := []struct {
		name, dir, want string
	}{
		{"no folder", filepath.Join(t.TempDir(), "nope"), "opening output folder"},
		{"no manifest", missing, "no build here (no manifest.json): run feedgen build first"},
		{"bad manifest", badFormat, "manifest format 99 is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(context.Background(), Options{Source: Folder(tt.dir), StartTimeout: 50 * time.Millisecond, RetryInterval: 10 * time.Millisecond})
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("got error %v, want one saying %q", err, tt.want)
			}
		})
	}
}

// TestNewWaitsForBuild starts a server on a folder whose build is being
// written: it waits until the build is complete.
func TestNewWaitsForBuild(t *testing.T) {
	siteA := makeSite(t, corpus.Options{Articles: 10, Limits: []int{5}, Seed: 1})
	page := filepath.Join(siteA.out, "articles", "5", "3.json")
	data, err := os.ReadFile(page)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(page)
	unlock := holdBuildLock(t, siteA.out)
	opt := Options{Source: Folder(siteA.out), RetryInterval: 10 * time.Millisecond, PollInterval: 20 * time.Millisecond}
	ev := countEvents(&opt)
	go func() {
		// The build completes once New has found it incomplete twice
		// (or, should it not try, after 10 s: the test then fails below).
		ev.await(0, 0, 2, 0, 10*time.Second)
		os.WriteFile(page, data, 0o644)
		unlock()
	}()
	s, err := New(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Current(); got.Articles != 10 || got.Unavailable != 0 {
		t.Errorf("got %d articles, %d pages unavailable; want 10, 0", got.Articles, got.Unavailable)
	}
}

// TestOldBuildReleased checks that a build the server switched away from
// is unreachable once its answers are done, so that its memory is freed.
func TestOldBuildReleased(t *testing.T) {
	siteA := makeSite(t, corpus.Options{Articles: 10, Limits: []int{5}, Seed: 1})
	siteB := makeSite(t, corpus.Options{Articles: 12, Limits: []int{5}, Seed: 2})
	out := t.TempDir()
	siteA.build(t, out)
	s, _ := newServer(t, Options{Source: Folder(out)})
	readBody(t, request(s, "GET", "/articles/", nil))
	old := weak.Make(s.cur.Load())
	siteB.build(t, out)
	if switched, err := s.Reload(); !switched || err != nil {
		t.Fatalf("Reload: got %v, %v; want a switch", switched, err)
	}
	runtime.GC()
	if old.Value() != nil {
		t.Error("the old build is still reachable after the switch")
	}
	if got := s.Current().Articles; got != 12 {
		t.Errorf("got %d articles, want 12", got)
	}
}
