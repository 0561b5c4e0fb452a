package importer

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// front puts a server in front of the listing at target that answers the
// n-th request itself when answer says so, and passes the others on.
func front(t testing.TB, target string, answer func(n int, w http.ResponseWriter, r *http.Request) bool) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !answer(int(n.Add(1)-1), w, r) {
			proxy.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL + listing.Path
}

// hardBuild builds a hard corpus and returns its output folder.
func hardBuild(t testing.TB, opt corpus.Options) string {
	t.Helper()
	src := t.TempDir()
	testfiles.Write(t, src, corpus.HardFiles(opt))
	out := t.TempDir()
	buildSite(t, os.DirFS(src), src, out, corpus.HardNow)
	return out
}

// TestRetries imports through a server that fails each page's first
// requests in a different way (503, 500, a connection closed without an
// answer, 429), and holds the first page it answers of those read at once
// until another page is asked: every page is read in the end, and the
// rebuilt site is the same bytes.
func TestRetries(t *testing.T) {
	orig := hardBuild(t, corpus.Options{Articles: 60, Seed: 4, Limits: []int{5, 10}})
	var mu sync.Mutex
	tries := map[string]int{}
	held := ""                   // the query of the answer held
	asked := make(chan struct{}) // closed when another page is asked meanwhile
	u := front(t, serve(t, orig), func(n int, w http.ResponseWriter, r *http.Request) bool {
		mu.Lock()
		tries[r.URL.RawQuery]++
		try := tries[r.URL.RawQuery]
		if held != "" && r.URL.RawQuery != held {
			select {
			case <-asked:
			default:
				close(asked)
			}
		}
		// The pages after the first two (the bare URL's, the largest
		// limit's) are read several at a time (Options.Workers): the
		// first of them to be answered waits until another is asked, so
		// that retries and answers overlap.
		hold := try > 3 && held == "" && strings.Contains(r.URL.RawQuery, "offset=")
		if hold {
			held = r.URL.RawQuery
		}
		mu.Unlock()
		switch try {
		case 1:
			http.Error(w, "busy", http.StatusServiceUnavailable)
		case 2:
			if hj, ok := w.(http.Hijacker); ok {
				conn, _, err := hj.Hijack()
				if err == nil {
					conn.Close()
				}
			}
		case 3:
			if n%2 == 0 {
				http.Error(w, "oops", http.StatusInternalServerError)
				return true
			}
			w.Header().Set("Retry-After", "1")
			http.Error(w, "slow down", http.StatusTooManyRequests)
		default:
			if hold {
				select {
				case <-asked:
				case <-time.After(10 * time.Second):
					t.Errorf("no other page asked in 10s while %s was answered: the pages are not read at once", r.URL.RawQuery)
				}
			}
			return false
		}
		return true
	})
	s := roundTrip(t, u, orig, corpus.HardNow, Options{Backoff: time.Millisecond, MaxBackoff: 5 * time.Millisecond})
	// Four tries a page, or three where the client's transport tried a
	// closed connection again itself.
	if s.Requests < 3*s.Pages || s.Requests > 4*s.Pages {
		t.Errorf("got %d requests, want three or four for each of %d pages", s.Requests, s.Pages)
	}
}

// TestRetriesGiveUp checks that a service that keeps failing stops the
// import, saying so.
func TestRetriesGiveUp(t *testing.T) {
	d := &dynamic{def: 2, max: 2, articles: fixed(), answer: func(_ int, w http.ResponseWriter, _ *http.Request) bool {
		http.Error(w, "down", http.StatusBadGateway)
		return true
	}}
	u := d.start(t)
	_, err := Import(context.Background(), Options{URL: u, Retries: 2, Backoff: time.Millisecond, Log: testLog{t}})
	if want := u + ": status 502 Bad Gateway (tried 3 times)"; err == nil || err.Error() != want {
		t.Fatalf("got error %v, want %s", err, want)
	}
	if got := d.requests.Load(); got != 3 {
		t.Errorf("got %d requests, want 3", got)
	}
}

// TestRetryAfter checks that a 429's Retry-After is waited for, up to
// MaxBackoff.
func TestRetryAfter(t *testing.T) {
	d := &dynamic{def: 2, max: 2, articles: fixed(listingOf(art(1))...), answer: func(n int, w http.ResponseWriter, _ *http.Request) bool {
		if n > 0 {
			return false
		}
		w.Header().Set("Retry-After", "1")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return true
	}}
	start := time.Now()
	_, err := Import(context.Background(), Options{URL: d.start(t), Backoff: time.Millisecond, MaxBackoff: 200 * time.Millisecond, Now: func() time.Time { return refuseNow }, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	if took := time.Since(start); took < 200*time.Millisecond || took > 900*time.Millisecond {
		t.Errorf("took %v, want the 200ms that MaxBackoff leaves of Retry-After's second", took)
	}
}

// TestDelay checks that requests start no closer than Delay, across
// workers.
func TestDelay(t *testing.T) {
	var arts []*content.Article
	for i := range 12 {
		arts = append(arts, art(int64(i+1)))
	}
	var mu sync.Mutex
	var starts []time.Time
	d := &dynamic{def: 2, max: 2, articles: fixed(listingOf(arts...)...), answer: func(int, http.ResponseWriter, *http.Request) bool {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return false
	}}
	const delay = 20 * time.Millisecond
	s, err := Import(context.Background(), Options{URL: d.start(t), Delay: delay, Workers: 4, Now: func() time.Time { return refuseNow }, Log: testLog{t}})
	if err != nil {
		t.Fatal(err)
	}
	if s.Requests != 7 || len(starts) != 7 {
		t.Fatalf("got %d requests (%d answered), want 7: the bare page, the largest, then 5 more pages of 2", s.Requests, len(starts))
	}
	// The client starts request k no sooner than k delays after the first;
	// the server may see one a little late, so the span is what counts.
	if span, want := starts[len(starts)-1].Sub(starts[0]), time.Duration(len(starts)-2)*delay; span < want {
		t.Errorf("%d requests came in %v, want %v at least", len(starts), span, want)
	}
}

// TestListingChangesOnce imports a listing that changes while it is read
// (its count grows after the first requests): it is read again, and the
// site is that of the second reading.
func TestListingChangesOnce(t *testing.T) {
	before := serve(t, hardBuild(t, corpus.Options{Articles: 40, Seed: 5, Limits: []int{5, 10}}))
	after := hardBuild(t, corpus.Options{Articles: 41, Seed: 5, Limits: []int{5, 10}})
	afterURL, _ := url.Parse(serve(t, after))
	beforeURL, _ := url.Parse(before)
	proxyBefore := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: "http", Host: beforeURL.Host})
	u := front(t, afterURL.String(), func(n int, w http.ResponseWriter, r *http.Request) bool {
		if n < 3 {
			proxyBefore.ServeHTTP(w, r)
			return true
		}
		return false
	})
	s := roundTrip(t, u, after, corpus.HardNow, Options{})
	if s.Count != 39 {
		t.Errorf("got count %d, want 39: the listing as it became", s.Count)
	}
}
