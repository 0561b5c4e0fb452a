package rules

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestNamedPipes puts named pipes in place of an index's root, of a leaf
// and of a chunk of a chunks build that each assembling target answers
// from: the pages that need them answer 503 at once, as feedgen serve's
// do (it refuses a file that is not a regular file), and the server
// answers every request after them. njs opens files blocking, in the worker, which serves every
// other request: an open of a pipe no writer opens would hang them all.
func TestNamedPipes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		start func(*testing.T) startFunc
	}{
		{"nginx-njs", startNginxNJS},
		{"cloudflare", startWorkerd},
		{"netlify", startNetlifyEdge},
	} {
		t.Run(tc.name, func(t *testing.T) { checkNamedPipes(t, tc.name, tc.start(t)) })
	}
}

func checkNamedPipes(t *testing.T, target string, start startFunc) {
	site, s := copyChunkSite(t)
	base := startTarget(t, target, s, start)
	public := filepath.Join(site, "public")
	ix, _ := readTree(t, public, listing.Dir)
	_, news := readTree(t, public, listing.CollectionDir([]listing.Param{{Key: "section", Value: "news"}}))
	testfiles.FIFO(t, filepath.Join(public, ix.Chunks[len(ix.Chunks)-1].Path))
	testfiles.FIFO(t, filepath.Join(public, chunk.IndexPath(listing.CollectionDir([]listing.Param{{Key: "tag", Value: "API"}}))))
	testfiles.FIFO(t, filepath.Join(public, news.Leaves[0].Path))
	client := &http.Client{Timeout: 3 * time.Second}
	for range 3 { // more than one: a blocked worker would hang the next
		for _, target := range []string{"/articles/?limit=1&offset=65", "/articles/?limit=3&tag=API", "/articles/?section=news"} {
			resp, err := client.Get(base + target)
			if err != nil {
				t.Fatalf("%s: %v (blocked opening a named pipe?)", target, err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusServiceUnavailable {
				t.Errorf("%s: %d, want 503", target, resp.StatusCode)
			}
		}
		if got := ask(t, base, request{method: "GET", target: "/articles/?limit=1"}); got.status != 200 {
			t.Errorf("a page whose files are there: %d", got.status)
		}
	}
}
