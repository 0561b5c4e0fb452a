package content

import (
	"runtime"
	"runtime/metrics"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
)

// TestHugeFirstParagraph loads an article whose body is one paragraph of
// 30 MB with inline markup (the probe's case: 25 MB took 1.46 GB in the
// markdown parser, 200 MB 7.5 GB): it is refused with its size and line,
// without parsing it; the heap grows by about the file's bytes, not
// sixty times them. A long body whose first paragraph is short is parsed
// up to it, and gives the paragraph a whole parse gives.
func TestHugeFirstParagraph(t *testing.T) {
	const name, p = "news/politics/a.md", "content/news/politics/a.md"
	head := "---\nid: 1\ntitle: Hello\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n"
	huge := head + strings.Repeat("word *emphasis* [link](/u) `code` ", 30<<20/36) + "\n"
	var err error
	grew := heapGrowth(t, func() { _, err = load(t, map[string]string{name: huge}) })
	var dl diag.List
	want := p + ":7: the first paragraph is 29.7 MB, more than the 1.0 MB read for an announcement: write announcement: in the front matter, or start the body with a shorter paragraph"
	if !asDiag(err, &dl) || len(dl) != 1 || dl[0].String() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
	if limit := uint64(3 * len(huge)); grew > limit {
		t.Errorf("the heap grew by %d bytes for a file of %d", grew, len(huge))
	}
	t.Logf("a file of %d bytes: the heap grew by at most %d", len(huge), grew)

	long := head + "A *short* first paragraph.\n\n" + strings.Repeat("More text of the body.\n\n", 2<<20/24)
	site, err := load(t, map[string]string{name: long})
	if err != nil {
		t.Fatal(err)
	}
	if got := site.Articles[0].Announcement; got != "A short first paragraph." {
		t.Errorf("announcement %q", got)
	}
	// With an announcement in the front matter, the body is not read.
	ann := strings.Replace(huge, "author: ivan\n", "author: ivan\nannouncement: Given.\n", 1)
	if site, err := load(t, map[string]string{name: ann}); err != nil || site.Articles[0].Announcement != "Given." {
		t.Errorf("with an announcement: %v", err)
	}
}

func asDiag(err error, dl *diag.List) bool {
	l, ok := err.(diag.List)
	*dl = l
	return ok
}

// heapGrowth returns by how much the heap's live objects grew at most
// while f ran, sampled every millisecond.
func heapGrowth(t *testing.T, f func()) uint64 {
	t.Helper()
	runtime.GC()
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	base := s[0].Value.Uint64()
	var peak atomic.Uint64
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
		for {
			metrics.Read(s)
			if v := s[0].Value.Uint64(); v > base && v-base > peak.Load() {
				peak.Store(v - base)
			}
			select {
			case <-done:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	f()
	close(done)
	<-stopped
	return peak.Load()
}
