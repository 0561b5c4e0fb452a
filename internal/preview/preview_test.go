package preview

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/server"
	"github.com/feedgen/feedgen/internal/testfiles"
)

const previewConfig = "site_url: https://www.example.com\nbase_url: https://api.example.com\nsections: {news: {politics: Politics}}\nauthors: {ivan: {name: Ivan, url: /a/}}\npagination: {default_limit: 2, limits: [2]}\n"

func previewArticle(id, title string) string {
	return "---\nid: " + id + "\ntitle: " + title + "\npublished: 2025-01-0" + id + "T10:00:00\nauthor: ivan\n---\n"
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// eventually polls f until it returns true.
func eventually(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		if f() {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("timed out waiting for %s", what)
}

func TestPreview(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), previewConfig)
	for _, id := range []string{"1", "2", "3"} {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a"+id+".md"), previewArticle(id, "Title "+id))
	}
	var out eventtest.Buffer
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Build:      build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir},
			ConfigPath: filepath.Join(dir, "config.yaml"),
			Server:     server.Options{Addr: "127.0.0.1:0"},
			Out:        &out,
			Ready:      func(a string) { ready <- a },
		})
	}()
	var addr string
	select {
	case addr = <-ready:
	case err := <-done:
		t.Fatalf("preview stopped: %v\n%s", err, out.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("preview did not start:\n%s", out.String())
	}
	url := "http://" + addr + "/articles/"
	page := get(t, url)
	if !strings.Contains(page, `"next":"http://`+addr+`/articles/?limit=2&offset=2"`) {
		t.Errorf("links do not point at the preview: %s", page)
	}

	// An edit shows up.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), previewArticle("3", "Edited title"))
	eventually(t, "the edited title", func() bool { return strings.Contains(get(t, url), "Edited title") })

	// Broken content: errors printed, the last good build still served.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), "---\nid: 2\n---\n")
	eventually(t, "the error report", func() bool { return strings.Contains(out.String(), "the preview keeps the last good build") })
	if !strings.Contains(out.String(), "content/news/politics/a2.md:1: missing required key title") {
		t.Errorf("error not printed as path:line: message:\n%s", out.String())
	}
	if page := get(t, url); !strings.Contains(page, "Edited title") {
		t.Errorf("broken content broke the preview: %s", page)
	}

	// Fixed: one line says so, and the fix is served.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), previewArticle("2", "Fixed title"))
	eventually(t, "the fix", func() bool { return strings.Contains(get(t, url), "Fixed title") })
	eventually(t, "the good-again line", func() bool { return strings.Contains(out.String(), "the site is good again") })

	// A new article shifts every page.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a4.md"), previewArticle("4", "Newest"))
	eventually(t, "the new article", func() bool { return strings.Contains(get(t, url), `"count":4`) })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("preview: %v", err)
	}
}

// preview is a running live preview of a site in a temporary folder.
type preview struct {
	dir, url string
	out      *eventtest.Buffer
	stop     func() error
}

// startPreview writes config (and articles a1..aN) and starts a preview,
// with out as its output folder ("" for none).
func startPreview(t *testing.T, config string, articles int, out string) *preview {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), config)
	for i := 1; i <= articles; i++ {
		id := strconv.Itoa(i)
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a"+id+".md"), previewArticle(id, "Title "+id))
	}
	return runPreview(t, dir, out)
}

// runPreview starts a preview of the site in dir, with out as its output
// folder ("" for none).
func runPreview(t *testing.T, dir, out string) *preview {
	t.Helper()
	p := &preview{dir: dir, out: &eventtest.Buffer{}}
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{
			Build:      build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, OutDir: out},
			ConfigPath: filepath.Join(dir, "config.yaml"),
			Server:     server.Options{Addr: "127.0.0.1:0"},
			Out:        p.out,
			Ready:      func(a string) { ready <- a },
		})
	}()
	stopped := false
	p.stop = func() error {
		if stopped {
			return nil
		}
		stopped = true
		cancel()
		return <-done
	}
	t.Cleanup(func() { p.stop() })
	select {
	case addr := <-ready:
		p.url = "http://" + addr + "/articles/"
	case err := <-done:
		stopped = true // its error is read: stop must not wait for it again
		t.Fatalf("preview stopped: %v\n%s", err, p.out.String())
	case <-time.After(10 * time.Second):
		t.Fatalf("preview did not start:\n%s", p.out.String())
	}
	return p
}

func TestPreviewChanges(t *testing.T) {
	p := startPreview(t, previewConfig, 3, "")
	a3 := filepath.Join(p.dir, "content/news/politics/a3.md")

	// An atomic save, as most editors do it: a temporary file renamed over.
	tmp := filepath.Join(p.dir, "content/news/politics/.a3.md.swp")
	testfiles.WriteFile(t, tmp, previewArticle("3", "Saved atomically"))
	if err := os.Rename(tmp, a3); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the atomic save", func() bool { return strings.Contains(get(t, p.url), "Saved atomically") })

	// The config: a category's display name shows in every article of it.
	testfiles.WriteFile(t, filepath.Join(p.dir, "config.yaml"), strings.Replace(previewConfig, "politics: Politics", "politics: Politique", 1))
	eventually(t, "the config change", func() bool { return strings.Contains(get(t, p.url), `"category":"Politique"`) })

	// A deleted article leaves every page.
	if err := os.Remove(a3); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion", func() bool { return strings.Contains(get(t, p.url), `"count":2,`) })

	// A new folder with an article in it: watched, and its article listed.
	testfiles.WriteFile(t, filepath.Join(p.dir, "config.yaml"), strings.Replace(previewConfig, "sections: {news: {politics: Politics}}", "sections: {news: {politics: Politics, world: World}}", 1))
	eventually(t, "the new category", func() bool { return strings.Contains(p.out.String(), "config.yaml") })
	testfiles.WriteFile(t, filepath.Join(p.dir, "content/news/world/w9.md"), previewArticle("9", "From a new folder"))
	eventually(t, "the article in a new folder", func() bool { return strings.Contains(get(t, p.url), "From a new folder") })

	// One line per rebuild, none about the server switching.
	for _, line := range strings.Split(strings.TrimSpace(p.out.String()), "\n") {
		if !strings.HasPrefix(line, "built in ") && !strings.HasPrefix(line, "rebuilt after ") && !strings.HasPrefix(line, "previewing on ") {
			t.Errorf("unexpected output line %q", line)
		}
	}
}

// TestPreviewWritesNoFiles checks that a preview without an output folder
// writes none (not even the config's output_dir), and one with --out
// writes the pages it serves.
func TestPreviewWritesNoFiles(t *testing.T) {
	p := startPreview(t, previewConfig, 3, "")
	if _, err := os.Stat(filepath.Join(p.dir, "public")); !os.IsNotExist(err) {
		t.Errorf("the preview wrote output_dir: %v", err)
	}

	out := filepath.Join(t.TempDir(), "preview")
	q := startPreview(t, previewConfig, 3, out)
	data, err := os.ReadFile(filepath.Join(out, "articles", "index.json"))
	if err != nil {
		t.Fatal(err)
	}
	if got := get(t, q.url); got != string(data) {
		t.Errorf("served %q, but %s holds %q", got, out, data)
	}
}

func TestPreviewBrokenConfigAtStart(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: https://x\nbase_url: relative\n")
	err := Run(context.Background(), Options{
		Build:      build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir},
		ConfigPath: filepath.Join(dir, "config.yaml"),
		Server:     server.Options{Addr: "127.0.0.1:0"},
	})
	if err == nil || !strings.Contains(err.Error(), "base_url") {
		t.Errorf("got %v, want the config error", err)
	}
}

func TestPreviewNoGoroutineLeft(t *testing.T) {
	before := runtime.NumGoroutine()
	p := startPreview(t, previewConfig, 3, "")
	get(t, p.url)
	http.DefaultClient.CloseIdleConnections()
	if err := p.stop(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<16)
		t.Errorf("%d goroutines after the preview stopped, %d before:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}

func TestDescribe(t *testing.T) {
	dir := t.TempDir()
	a := filepath.Join(dir, "a.md")
	testfiles.WriteFile(t, a, "x")
	gone := filepath.Join(dir, "sedX1y2Z3") // sed -i's temporary file, renamed away
	tests := []struct {
		changed []string
		want    string
	}{
		{[]string{a, gone}, filepath.ToSlash(a)},
		{[]string{gone}, filepath.ToSlash(gone)},
		{[]string{filepath.Join(dir, "deleted.md")}, filepath.ToSlash(filepath.Join(dir, "deleted.md"))},
		{[]string{a, a, a, a, a}, strings.Repeat(filepath.ToSlash(a)+", ", 3) + "2 more"},
	}
	for _, tt := range tests {
		if got := describe(tt.changed); got != tt.want {
			t.Errorf("describe(%q) = %q, want %q", tt.changed, got, tt.want)
		}
	}
}

// TestPreviewScheduled checks that an article scheduled a moment ahead
// appears when it is due, with no other change, and that the preview's
// line says what is left out until then.
func TestPreviewScheduled(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), previewConfig)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a1.md"), previewArticle("1", "Now"))
	due := time.Now().Add(1500 * time.Millisecond).UTC().Truncate(time.Second).Add(time.Second)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"),
		"---\nid: 2\ntitle: Scheduled\npublished: "+due.Format("2006-01-02T15:04:05")+"\nauthor: ivan\n---\n")

	p := runPreview(t, dir, "")
	if got := get(t, p.url); strings.Contains(got, "Scheduled") {
		t.Fatalf("the scheduled article is listed before it is due: %.200s", got)
	}
	eventually(t, "the line about the scheduled article", func() bool {
		return strings.Contains(p.out.String(), "1 scheduled left out (next at "+due.Format(time.RFC3339)+")")
	})
	eventually(t, "the scheduled article when due", func() bool { return strings.Contains(get(t, p.url), "Scheduled") })
	if time.Now().Before(due) {
		t.Errorf("listed at %s, before it was due at %s", time.Now().Format(time.RFC3339Nano), due.Format(time.RFC3339))
	}
}

// TestPreviewChunks previews a site of the chunks layout: any limit is
// answered, and edits, new and deleted articles show up as with pages.
func TestPreviewChunks(t *testing.T) {
	config := strings.Replace(previewConfig, "limits: [2]}", "limits: [2], max_limit: 50, layout: chunks}", 1)
	p := startPreview(t, config, 9, "")
	if page := get(t, p.url+"?limit=7&offset=1"); !strings.Contains(page, `"next":"http://`) || strings.Count(page, `"id":`) != 7 {
		t.Fatalf("?limit=7&offset=1: %s", page)
	}
	testfiles.WriteFile(t, filepath.Join(p.dir, "content/news/politics/a3.md"), previewArticle("3", "Edited title"))
	eventually(t, "the edited title", func() bool { return strings.Contains(get(t, p.url+"?limit=50"), "Edited title") })
	testfiles.WriteFile(t, filepath.Join(p.dir, "content/news/politics/a0.md"), strings.Replace(previewArticle("10", "Newest"), "2025-01-010", "2025-02-01", 1))
	eventually(t, "the new article", func() bool { return strings.Contains(get(t, p.url+"?limit=1"), "Newest") })
	if err := os.Remove(filepath.Join(p.dir, "content/news/politics/a5.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the deletion", func() bool { return strings.Contains(get(t, p.url+"?limit=3&offset=8"), `"count":9,`) })
	if !strings.Contains(p.out.String(), "files written") {
		t.Errorf("the preview's lines say pages, not files:\n%s", p.out.String())
	}
}
