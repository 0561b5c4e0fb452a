package rules

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/server"
)

// TestChunksServeAnswers builds the sample in the chunks layout and asks
// feedgen serve on it every request of the shared table: each answer
// (status, the contract's headers, body) is feedgen serve's on the pages
// layout, which every target is held to. A limit that the pages layout
// does not pre-render is answered too.
func TestChunksServeAnswers(t *testing.T) {
	dir := t.TempDir()
	if err := os.CopyFS(dir, feedgen.Sample()); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "config.yaml")
	data, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	chunked := strings.Replace(string(data), "\n  offsets: all\n", "\n  layout: chunks\n", 1)
	if chunked == string(data) {
		t.Fatal("the sample's config has no offsets: all line to replace")
	}
	if err := os.WriteFile(cfg, []byte(chunked), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "public")
	now := func() time.Time { return time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC) }
	if _, err := build.New(build.Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, OutDir: out, Now: now, Generator: "feedgen test"}).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	srv, err := server.New(ctx, server.Options{Source: server.Folder(out), Log: t.Output()})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ctx, ln)
	base := "http://" + ln.Addr().String()
	beyond := 0
	for _, r := range requests {
		want, got := ask(t, refBase, r), ask(t, base, r)
		if want.status == 404 && got.status == 200 && strings.HasPrefix(got.body, `{"count":66,`) && !prerendered(r.target) {
			beyond++ // a limit the pages layout does not pre-render: answered
			continue
		}
		if d := want.diff(got); d != "" {
			t.Errorf("%s %s (%s): %s", r.method, r.target, r.class, d)
		}
	}
	if beyond == 0 {
		t.Errorf("no request of the table asks for a limit that is not pre-rendered")
	}
	got := ask(t, base, request{method: "GET", target: "/articles/?limit=7&offset=3"})
	if got.status != 200 || !strings.HasPrefix(got.body, `{"count":66,"next":"https://api.example.com/articles/?limit=7&offset=10","previous":"https://api.example.com/articles/?limit=7","results":[{`) {
		t.Errorf("?limit=7&offset=3: %d %.200s", got.status, got.body)
	}
}

// prerendered reports whether the query of target names only limits
// that the sample pre-renders (20, 50, 100), or none.
func prerendered(target string) bool {
	_, q, _ := strings.Cut(target, "?")
	for _, kv := range strings.Split(q, "&") {
		if v, ok := strings.CutPrefix(kv, "limit="); ok && v != "20" && v != "50" && v != "100" {
			return false
		}
	}
	return true
}
