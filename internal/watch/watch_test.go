package watch

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// recorder runs a watch and records each call's changed paths.
type recorder struct {
	dir     string // the paths are recorded relative to it
	markDir string // a folder watched too, for the markers of settle

	cond   eventtest.Cond // guards the fields below; each call changes them
	calls  [][]string     // each call's paths, but the markers'; no call that named only markers
	marked int            // the highest marker a call named
	hook   func()         // runs inside each call

	markers int // the markers settle wrote (the test's goroutine only)
}

// newRecorder returns a recorder that records paths relative to dir.
func newRecorder(t *testing.T, dir string) *recorder {
	return &recorder{dir: dir, markDir: t.TempDir()}
}

// markerPrefix starts the names of settle's markers.
const markerPrefix = "settled-"

func (r *recorder) fn(ctx context.Context, changed []string) {
	var hook func()
	r.cond.Change(func() { hook = r.record(changed) })
	if hook != nil {
		hook()
	}
}

// record records a call's changed paths, and returns the hook to run.
func (r *recorder) record(changed []string) func() {
	var rel []string // nil for nil: anything may have changed
	for _, c := range changed {
		if name := filepath.Base(c); filepath.Dir(c) == r.markDir && strings.HasPrefix(name, markerPrefix) {
			n, _ := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(name, markerPrefix), ".md"))
			r.marked = max(r.marked, n)
			continue
		}
		p, err := filepath.Rel(r.dir, c)
		if err != nil {
			p = c
		}
		rel = append(rel, p)
	}
	if changed == nil || len(rel) > 0 {
		r.calls = append(r.calls, rel)
	}
	return r.hook
}

// await waits until cond, called with the recorder locked, is true, or
// timeout passes; it reports whether cond became true. It waits for
// calls, not for time: cond is checked again at each call.
func (r *recorder) await(timeout time.Duration, cond func() bool) bool {
	return r.cond.Wait(timeout, cond)
}

// blockFirstCall makes the next call wait inside Func: entered is closed
// when it starts, and it returns once release is closed.
func (r *recorder) blockFirstCall() (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.cond.Change(func() {
		r.hook = func() {
			once.Do(func() {
				close(entered)
				<-release
			})
		}
	})
	return entered, release
}

func (r *recorder) snapshot() (calls [][]string) {
	r.cond.Read(func() { calls = append([][]string(nil), r.calls...) })
	return calls
}

// start watches content/ and config.yaml under a new temporary site.
func start(t *testing.T) (*recorder, string) {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: x\n")
	testfiles.WriteFile(t, filepath.Join(dir, "content", "news", "politics", "a.md"), "a")
	return watchPaths(t, dir, "content", "config.yaml"), dir
}

// settle returns the calls once the watch has handled every change made
// before it. It writes a marker file, in a folder watched beside the
// paths under test, and waits for the call that names it: the kernel
// queues a watch's events in the order of the changes, and the watch
// reads them in that order, so that whatever call a change made before
// gives is that call or one before it. The markers are left out of the
// calls (and a call that named only the marker).
//
// A test that checks that something did not happen (no call, no second
// call, no path) checks the calls settle returns: it cannot pass for
// having looked too early.
func settle(t *testing.T, r *recorder) [][]string {
	t.Helper()
	r.markers++
	n := r.markers
	testfiles.WriteFile(t, filepath.Join(r.markDir, markerPrefix+strconv.Itoa(n)+".md"), "")
	if !r.await(10*time.Second, func() bool { return r.marked >= n }) {
		t.Fatalf("no call named marker %d within 10s: calls %v", n, r.snapshot())
	}
	return r.snapshot()
}

// waitCalls waits for n calls, then settles (see settle) and returns the
// calls: any other call the changes made so far give is among them.
func waitCalls(t *testing.T, r *recorder, n int) [][]string {
	t.Helper()
	if !r.await(10*time.Second, func() bool { return len(r.calls) >= n }) {
		t.Fatalf("got %d calls within 10s, want %d: %v", len(r.snapshot()), n, r.snapshot())
	}
	return settle(t, r)
}

func contains(calls [][]string, path string) bool {
	for _, c := range calls {
		for _, p := range c {
			if p == path {
				return true
			}
		}
	}
	return false
}

func TestChanges(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, dir string)
		want   string // a path (relative to the site) among the changes
	}{
		{"edit", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "edited")
		}, "content/news/politics/a.md"},
		{"create", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/b.md"), "b")
		}, "content/news/politics/b.md"},
		{"delete", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "content/news/politics/a.md"))
		}, "content/news/politics/a.md"},
		{"rename", func(t *testing.T, dir string) {
			os.Rename(filepath.Join(dir, "content/news/politics/a.md"), filepath.Join(dir, "content/news/politics/c.md"))
		}, "content/news/politics/c.md"},
		{"atomic save", func(t *testing.T, dir string) {
			tmp := filepath.Join(dir, "content/news/politics/.a.md.tmp123")
			testfiles.WriteFile(t, tmp, "saved")
			os.Rename(tmp, filepath.Join(dir, "content/news/politics/a.md"))
		}, "content/news/politics/a.md"},
		{"truncate then write", func(t *testing.T, dir string) {
			f, _ := os.OpenFile(filepath.Join(dir, "content/news/politics/a.md"), os.O_WRONLY|os.O_TRUNC, 0)
			f.WriteString("new")
			f.Close()
		}, "content/news/politics/a.md"},
		{"config", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: y\n")
		}, "config.yaml"},
		{"delete folder", func(t *testing.T, dir string) {
			os.RemoveAll(filepath.Join(dir, "content/news"))
		}, "content/news"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, dir := start(t)
			tt.change(t, dir)
			calls := waitCalls(t, r, 1)
			if !contains(calls, tt.want) {
				t.Errorf("calls %v do not name %s", calls, tt.want)
			}
			if len(calls) != 1 {
				t.Errorf("%d calls, want 1: %v", len(calls), calls)
			}
		})
	}
}

func TestNewNestedFolderWithFiles(t *testing.T) {
	r, dir := start(t)
	// Build the folder elsewhere and move it in: its files exist before
	// the watch can see the folder.
	staging := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(staging, "sport", "football", "x.md"), "x")
	if err := os.Rename(filepath.Join(staging, "sport"), filepath.Join(dir, "content", "sport")); err != nil {
		t.Fatal(err)
	}
	waitCalls(t, r, 1)
	// The new folders are watched now: an edit inside them is seen.
	testfiles.WriteFile(t, filepath.Join(dir, "content/sport/football/x.md"), "edited")
	calls := waitCalls(t, r, 2)
	if !contains(calls[1:], "content/sport/football/x.md") {
		t.Errorf("edit in a new folder not seen: %v", calls)
	}
	// mkdir -p and write at once: once the watch has handled that, it
	// watches the new folders, and an edit in them is seen.
	testfiles.WriteFile(t, filepath.Join(dir, "content/a/b/c/d.md"), "d")
	calls = settle(t, r)
	if !contains(calls[2:], "content/a") {
		t.Fatalf("new deep folder not seen: %v", calls)
	}
	n := len(calls)
	testfiles.WriteFile(t, filepath.Join(dir, "content/a/b/c/d.md"), "d2")
	calls = waitCalls(t, r, n+1)
	if !contains(calls[n:], "content/a/b/c/d.md") {
		t.Errorf("edit in a new deep folder not seen: %v", calls)
	}
}

func TestIgnored(t *testing.T) {
	r, dir := start(t)
	for _, name := range []string{".a.md.swp", "a.md~", "4913", "_draft.md", ".#a.md"} {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics", name), "x")
	}
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/_drafts/x.md"), "x")
	testfiles.WriteFile(t, filepath.Join(dir, "public/articles/index.json"), "{}") // the output folder beside config.yaml
	testfiles.WriteFile(t, filepath.Join(dir, "notes.txt"), "x")
	// settle returns once the watch has handled the changes above: any
	// call they gave is among the calls it returns.
	if calls := settle(t, r); len(calls) != 0 {
		t.Errorf("ignored changes gave calls: %v", calls)
	}
}

func TestBurst(t *testing.T) {
	// A steady stream of changes gives a call every MaxWait (500ms by
	// default) at most, and one when it stops: more calls come only where
	// it paused for Quiet. A loaded machine may pause the writes, or the
	// watch's reading of them, for 30ms (start's Quiet); rarely for 200ms.
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "content", "news", "politics", "a.md"), "a")
	r := watchQuiet(t, dir, 200*time.Millisecond, "content")
	began := time.Now()
	for i := range 500 {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics", "burst"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i)+".md"), "x")
	}
	wrote := time.Since(began)
	// Until every call the burst gives: on a loaded machine, writing it
	// and reading its events may take longer than MaxWait.
	calls := settle(t, r)
	took := time.Since(began)
	if want := 2 + int(took/(500*time.Millisecond)); len(calls) > want {
		t.Errorf("500 files written in %s, seen in %s, gave %d calls, want at most %d", wrote, took, len(calls), want)
	}
	n := 0
	for _, c := range calls {
		n += len(c)
	}
	if n < 500 {
		t.Errorf("calls named %d paths, want 500", n)
	}
}

func itoa(i int) string {
	return strings.TrimLeft(string([]byte{byte('0' + i/100%10), byte('0' + i/10%10), byte('0' + i%10)}), "")
}

func TestChangeDuringCallNotLost(t *testing.T) {
	r, dir := start(t)
	entered, release := r.blockFirstCall()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "1")
	<-entered
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/b.md"), "during")
	close(release)
	calls := waitCalls(t, r, 2)
	if !contains(calls[1:], "content/news/politics/b.md") {
		t.Errorf("change during a call lost: %v", calls)
	}
}

func TestNoGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	ready := make(chan struct{})
	go func() {
		done <- Run(ctx, Options{Paths: []string{dir}, Func: func(context.Context, []string) {}, Ready: func() { close(ready) }})
	}()
	<-ready
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	// Go tells no goroutine's end: the goroutine that ran Run, and
	// fsnotify's reader once it has said that it is done (Close waits for
	// that), may be counted a moment longer. The count is checked until it
	// is back, for 2s at most.
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Second)
	for n := runtime.NumGoroutine(); n > before; n = runtime.NumGoroutine() {
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("%d goroutines 2s after shutdown, %d before", n, before)
		}
	}
}

// TestEventsLost overflows the kernel's event queue while a call runs:
// the next call says that anything may have changed (nil), rather than
// naming only the changes that were not lost.
func TestEventsLost(t *testing.T) {
	r, dir := start(t)
	entered, release := r.blockFirstCall()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "1")
	<-entered
	// Two events a file (create, write): more than the 16384 the kernel
	// queues by default while nothing reads them.
	cat := filepath.Join(dir, "content/news/politics")
	for i := range 9000 {
		if err := os.WriteFile(filepath.Join(cat, "f"+strconv.Itoa(i)+".md"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	close(release)
	waitLost(t, r)
}

// waitLost waits for a call, after the first, that says that events were
// lost (nil).
func waitLost(t *testing.T, r *recorder) {
	t.Helper()
	lost := func() bool {
		for i, c := range r.calls {
			if i > 0 && c == nil {
				return true
			}
		}
		return false
	}
	if !r.await(10*time.Second, lost) {
		t.Fatalf("no call said within 10s that events were lost: %d calls", len(r.snapshot()))
	}
}

// TestRelativePaths watches "config.yaml" and "content" relative to the
// current folder, as feedgen serve --watch does by default.
func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "a")
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	t.Chdir(dir)
	r := newRecorder(t, ".")
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Paths: []string{"config.yaml", "content", r.markDir}, Func: r.fn, Ready: func() { close(ready) }})
	}()
	defer func() {
		cancel()
		<-done
	}()
	<-ready
	testfiles.WriteFile(t, "config.yaml", "b")
	if calls := waitCalls(t, r, 1); !contains(calls, "config.yaml") {
		t.Errorf("calls %v do not name config.yaml", calls)
	}
	testfiles.WriteFile(t, "content/news/politics/a.md", "b")
	if calls := waitCalls(t, r, 2); !contains(calls[1:], "content/news/politics/a.md") {
		t.Errorf("calls %v do not name the article", calls)
	}
}
