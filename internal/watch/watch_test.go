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

	"github.com/feedgen/feedgen/internal/testfiles"
)

// recorder runs a watch and records each call's changed paths.
type recorder struct {
	mu    sync.Mutex
	calls [][]string
	hook  func() // runs inside each call
	dir   string
}

func (r *recorder) fn(ctx context.Context, changed []string) {
	r.mu.Lock()
	var rel []string // nil for nil: anything may have changed
	for _, c := range changed {
		p, _ := filepath.Rel(r.dir, c)
		rel = append(rel, p)
	}
	r.calls = append(r.calls, rel)
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook()
	}
}

// blockFirstCall makes the next call wait inside Func: entered is closed
// when it starts, and it returns once release is closed.
func (r *recorder) blockFirstCall() (entered, release chan struct{}) {
	entered, release = make(chan struct{}), make(chan struct{})
	var once sync.Once
	r.mu.Lock()
	r.hook = func() {
		once.Do(func() {
			close(entered)
			<-release
		})
	}
	r.mu.Unlock()
	return entered, release
}

func (r *recorder) snapshot() [][]string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([][]string(nil), r.calls...)
}

// start watches content/ and config.yaml under a new temporary site.
func start(t *testing.T) (*recorder, string) {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: x\n")
	testfiles.WriteFile(t, filepath.Join(dir, "content", "news", "politics", "a.md"), "a")
	r := &recorder{dir: dir}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Paths: []string{filepath.Join(dir, "content"), filepath.Join(dir, "config.yaml")},
			Quiet: 30 * time.Millisecond, Func: r.fn, Ready: func() { close(ready) },
		})
	}()
	<-ready
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r, dir
}

// waitCalls waits until at least n calls happened and the watch is quiet.
func waitCalls(t *testing.T, r *recorder, n int) [][]string {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if len(r.snapshot()) >= n {
			time.Sleep(150 * time.Millisecond) // let any extra call show up
			return r.snapshot()
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatalf("got %d calls, want %d: %v", len(r.snapshot()), n, r.snapshot())
	return nil
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
	// mkdir -p and write at once.
	testfiles.WriteFile(t, filepath.Join(dir, "content/a/b/c/d.md"), "d")
	time.Sleep(100 * time.Millisecond)
	testfiles.WriteFile(t, filepath.Join(dir, "content/a/b/c/d.md"), "d2")
	calls = waitCalls(t, r, 3)
	if !contains(calls[2:], "content/a/b/c/d.md") {
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
	time.Sleep(200 * time.Millisecond)
	if calls := r.snapshot(); len(calls) != 0 {
		t.Errorf("ignored changes gave calls: %v", calls)
	}
}

func TestBurst(t *testing.T) {
	r, dir := start(t)
	began := time.Now()
	for i := range 500 {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics", "burst"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+itoa(i)+".md"), "x")
	}
	// A steady stream of changes gives a call every MaxWait (500ms by
	// default) at most: on a loaded machine, writing the burst may take
	// longer than that.
	took := time.Since(began)
	waitCalls(t, r, 1)
	time.Sleep(300 * time.Millisecond)
	calls := r.snapshot()
	if want := 2 + int(took/(500*time.Millisecond)); len(calls) > want {
		t.Errorf("500 files written in %s gave %d calls, want at most %d", took, len(calls), want)
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
	deadline := time.Now().Add(2 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after shutdown, %d before", n, before)
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
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		for _, c := range r.snapshot()[1:] {
			if c == nil {
				return
			}
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Errorf("no call said that events were lost: %d calls", len(r.snapshot()))
}

// TestRelativePaths watches "config.yaml" and "content" relative to the
// current folder, as feedgen serve --watch does by default.
func TestRelativePaths(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "a")
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	t.Chdir(dir)
	r := &recorder{dir: "."}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Paths: []string{"config.yaml", "content"}, Func: r.fn, Ready: func() { close(ready) }})
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
