package server

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestNamedPipes puts named pipes in a build's folder, where a page, an
// index (its root, a leaf), a chunk and the manifest go. Opening one blocks until a writer
// comes, and a server blocked there would neither start nor stop: the
// server never opens a file that is not a regular file. A page's is a
// page that does not match the manifest (503 until the next build, which
// replaces it); the manifest's is refused, saying what to do. Over page
// files and from memory (descriptorsOnly changes nothing here: both read
// through the same open).
func TestNamedPipes(t *testing.T) {
	const wait = 5 * time.Second
	start := func(t *testing.T, out string) (*Server, *eventtest.Buffer, error) {
		var log eventtest.Buffer
		type started struct {
			s   *Server
			err error
		}
		r := eventtest.Returns(t, wait, "New", func() started {
			s, err := New(context.Background(), Options{Source: Folder(out), Log: &log, StartTimeout: time.Millisecond})
			return started{s, err}
		})
		return r.s, &log, r.err
	}
	t.Run("page", func(t *testing.T) {
		s := makeSite(t, corpus.Options{Articles: 12, Limits: []int{5, 20}, Seed: 1})
		testfiles.FIFO(t, filepath.Join(s.out, "articles/5/5.json"))
		srv, log, err := start(t, s.out)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(log.String(), "1 page of the build of 2026-11-01T12:00:00Z does not match its manifest (a build died or is being written, or it changed since): articles/5/5.json; answering 503 for it until a build rewrites it") {
			t.Errorf("log:\n%s", log)
		}
		if resp := request(srv, http.MethodGet, "/articles/?limit=5&offset=5", nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("the page of a named pipe: %d, want 503", resp.StatusCode)
		}
		if resp := request(srv, http.MethodGet, "/articles/?limit=5&offset=0", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("another page: %d, want 200", resp.StatusCode)
		}
	})
	t.Run("chunks", func(t *testing.T) {
		s := chunkSite(t)
		ix := readIndex(t, s.out, listing.Dir)
		// The leaf of a section's index.
		m := readManifest(t, s.out)
		var section listing.Param
		for _, c := range m.Collections {
			if len(c.Params) == 1 && c.Params[0].Key == "section" && c.Count > 0 {
				section = c.Params[0]
			}
		}
		data, err := os.ReadFile(filepath.Join(s.out, chunk.IndexPath(listing.CollectionDir([]listing.Param{section}))))
		if err != nil {
			t.Fatal(err)
		}
		root, err := chunk.ParseRoot(data)
		if err != nil {
			t.Fatal(err)
		}
		leaf := root.Leaves[0].Path
		last := ix.Chunks[len(ix.Chunks)-1].Path
		testfiles.FIFO(t, filepath.Join(s.out, last))
		tag := firstTag(t, s)
		testfiles.FIFO(t, filepath.Join(s.out, chunk.IndexPath(listing.CollectionDir([]listing.Param{{Key: "tag", Value: tag}}))))
		testfiles.FIFO(t, filepath.Join(s.out, leaf))
		srv, log, err := start(t, s.out)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{last, leaf} {
			if !strings.Contains(log.String(), p) {
				t.Errorf("log does not name %s:\n%s", p, log)
			}
		}
		if resp := request(srv, http.MethodGet, "/articles/?section="+section.Value, nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a page of the leaf that is a named pipe: %d, want 503", resp.StatusCode)
		}
		if resp := request(srv, http.MethodGet, "/articles/?limit=5&offset=145", nil); resp.StatusCode != http.StatusServiceUnavailable {
			t.Errorf("a page of the chunk that is a named pipe: %d, want 503", resp.StatusCode)
		}
		if resp := request(srv, http.MethodGet, "/articles/?limit=5", nil); resp.StatusCode != http.StatusOK {
			t.Errorf("a page of other chunks: %d, want 200", resp.StatusCode)
		}
	})
	t.Run("manifest", func(t *testing.T) {
		s := makeSite(t, corpus.Options{Articles: 3, Limits: []int{5}, Seed: 1})
		testfiles.FIFO(t, filepath.Join(s.out, "manifest.json"))
		_, _, err := start(t, s.out)
		want := s.out + ": reading manifest: " + filepath.Join(s.out, "manifest.json") + " is not a regular file (a named pipe): remove it and run feedgen build --clean"
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %q", err, want)
		}
	})
}
