package importer

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/server"
)

// testLog is a Log that writes to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Helper()
	l.t.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}

// buildSite builds the site whose config.yaml is in fsys (on disk at root,
// or "" for a site that is not) into out, at the time now.
func buildSite(t testing.TB, fsys fs.FS, root, out string, now time.Time) *build.Result {
	t.Helper()
	res, err := build.New(build.Options{
		FS:         fsys,
		ConfigName: "config.yaml",
		Root:       root,
		OutDir:     out,
		Now:        func() time.Time { return now },
		Quiet:      true,
	}).Build(context.Background())
	if err != nil {
		t.Fatalf("building %s:\n%v", root, err)
	}
	return res
}

// serve serves the build in dir with the real server, on a free port of
// the loopback, until the test ends, and returns its listing's URL.
func serve(t testing.TB, dir string) string {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	s, err := server.New(ctx, server.Options{Source: server.Folder(dir)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, ln) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serving %s: %v", dir, err)
		}
	})
	return "http://" + ln.Addr().String() + listing.Path
}

// mainPages returns the pages of the main listing in a build's output
// folder, by path: articles/index.json and articles/<limit>/<offset>.json.
func mainPages(t testing.TB, out string) map[string][]byte {
	t.Helper()
	pages := map[string][]byte{}
	err := filepath.WalkDir(filepath.Join(out, listing.Dir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, err := filepath.Rel(out, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if k, ok := listing.ParsePageKey(rel); !ok || k.Dir != listing.Dir {
			return nil // a filtered collection's page
		}
		data, err := os.ReadFile(p)
		pages[rel] = data
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return pages
}

// comparePages checks that two builds have the same pages of the main
// listing, byte for byte, and returns how many.
func comparePages(t testing.TB, want, got map[string][]byte) int {
	t.Helper()
	same := 0
	for _, p := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[p]
		switch {
		case !ok:
			t.Errorf("%s: missing from the rebuilt site", p)
		case !bytes.Equal(g, want[p]):
			t.Errorf("%s differs:\ngot  %s\nwant %s", p, short(firstDiff(g, want[p])), short(firstDiff(want[p], g)))
		default:
			same++
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("%s: in the rebuilt site only", p)
		}
	}
	return same
}

// firstDiff returns a from a little before where it differs from b.
func firstDiff(a, b []byte) []byte {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	return a[max(0, i-20):]
}
