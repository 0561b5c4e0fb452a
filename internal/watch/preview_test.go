package watch

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/server"
)

// syncBuffer is a bytes.Buffer safe for the preview's goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

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
	mustWrite(t, filepath.Join(dir, "config.yaml"), previewConfig)
	for _, id := range []string{"1", "2", "3"} {
		mustWrite(t, filepath.Join(dir, "content/news/politics/a"+id+".md"), previewArticle(id, "Title "+id))
	}
	var out syncBuffer
	ready := make(chan string, 1)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- Preview(ctx, PreviewOptions{
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
	mustWrite(t, filepath.Join(dir, "content/news/politics/a3.md"), previewArticle("3", "Edited title"))
	eventually(t, "the edited title", func() bool { return strings.Contains(get(t, url), "Edited title") })

	// Broken content: errors printed, the last good build still served.
	mustWrite(t, filepath.Join(dir, "content/news/politics/a2.md"), "---\nid: 2\n---\n")
	eventually(t, "the error report", func() bool { return strings.Contains(out.String(), "the preview keeps the last good build") })
	if !strings.Contains(out.String(), "content/news/politics/a2.md:1: missing required key title") {
		t.Errorf("error not printed as path:line: message:\n%s", out.String())
	}
	if page := get(t, url); !strings.Contains(page, "Edited title") {
		t.Errorf("broken content broke the preview: %s", page)
	}

	// Fixed: one line says so, and the fix is served.
	mustWrite(t, filepath.Join(dir, "content/news/politics/a2.md"), previewArticle("2", "Fixed title"))
	eventually(t, "the fix", func() bool { return strings.Contains(get(t, url), "Fixed title") })
	eventually(t, "the good-again line", func() bool { return strings.Contains(out.String(), "the site is good again") })

	// A new article shifts every page.
	mustWrite(t, filepath.Join(dir, "content/news/politics/a4.md"), previewArticle("4", "Newest"))
	eventually(t, "the new article", func() bool { return strings.Contains(get(t, url), `"count":4`) })

	cancel()
	if err := <-done; err != nil {
		t.Errorf("preview: %v", err)
	}
}
