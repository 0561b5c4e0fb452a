package importer

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/heaptest"
)

// hostileArticle is one valid article of a hostile listing.
const hostileArticle = `{"id":1,"title":"T","url":"https://www.example.com/news/politics/t/","category":"Politics","category_url":"https://www.example.com/news/politics/","announcement":"","tags":"","pageviews":0,"comments_count":0,"img_big":"","img_big_2x":"","img_small":"","img_small_2x":"","author_name":"A","author_url":"https://www.example.com/a/","published":"2020-01-01T00:00:00"}`

// hugeCountHandler answers every page of a listing that claims 2^40
// articles and links its pages one article at a time (the probe's case: the
// import built a page object per offset up front, and reached 22 GB).
func hugeCountHandler(requests *atomic.Int64) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		off, _ := strconv.Atoi(r.URL.Query().Get("offset"))
		prev := "null"
		if off > 0 {
			prev = fmt.Sprintf(`"http://%s/articles/?limit=1&offset=%d"`, r.Host, off-1)
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"count":%d,"next":"http://%s/articles/?limit=1&offset=%d","previous":%s,"results":[%s]}`,
			int64(1)<<40, r.Host, off+1, prev, hostileArticle)
	}
}

// TestImportHugeCount checks that a listing whose count and page size
// need more requests than the import may make is refused at once, after
// the few requests that tell them, with the flag that raises the bound.
func TestImportHugeCount(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(hugeCountHandler(&requests))
	defer srv.Close()
	var s *Site
	var err error
	grew := heaptest.Growth(func() {
		s, err = Import(context.Background(), Options{URL: srv.URL + "/articles/", Log: testLog{t}})
	})
	if err == nil || !strings.Contains(err.Error(), "the listing has 1099511627776 articles at 1 a page: 1099511627775 requests, more than") ||
		!strings.Contains(err.Error(), "pass a larger --max-requests") {
		t.Fatalf("got %v, %v; want the refusal of 2^40 requests", s, err)
	}
	if n := requests.Load(); n > 6 {
		t.Errorf("%d requests before the refusal", n)
	}
	if grew > 16<<20 {
		t.Errorf("the heap grew by %d bytes", grew)
	}
	// With no bound on requests, the pages are asked for one by one as
	// workers are free, and the bound on bytes stops the import.
	grew = heaptest.Growth(func() {
		s, err = Import(context.Background(), Options{URL: srv.URL + "/articles/", MaxRequests: -1, MaxBytes: 256 << 10, Log: testLog{t}})
	})
	if err == nil || !strings.Contains(err.Error(), "(--max-bytes)") {
		t.Fatalf("no bound on requests: got %v, want the bound on bytes", err)
	}
	if grew > 64<<20 {
		t.Errorf("no bound on requests: the heap grew by %d bytes", grew)
	}
}

// TestImportMaxRequests checks the bound on requests made while reading:
// a listing that fits it by its count, but whose pages fail and are tried
// again, stops when the bound is reached.
func TestImportMaxRequests(t *testing.T) {
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("offset") != "" {
			requests.Add(1)
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"count":5,"next":"http://%s/articles/?limit=1&offset=1","previous":null,"results":[%s]}`, r.Host, hostileArticle)
	}))
	defer srv.Close()
	_, err := Import(context.Background(), Options{URL: srv.URL + "/articles/", MaxRequests: 20, Retries: 100, Backoff: time.Microsecond, Log: testLog{t}})
	if err == nil || !strings.Contains(err.Error(), "the import made 20 requests, its limit (--max-requests)") {
		t.Fatalf("got %v, want the bound on requests", err)
	}
}

// TestImportMaxBytes serves bodies that never end, to every worker at
// once (the probe's case: four huge bodies held 3.7 GB): the import stops
// when the bytes it holds reach its bound, and its heap stays near it.
func TestImportMaxBytes(t *testing.T) {
	chunk := strings.Repeat(hostileArticle+",", 100)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"count":1,"next":null,"previous":null,"results":[`)
		for r.Context().Err() == nil {
			if _, err := w.Write([]byte(chunk)); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	const bound = 8 << 20
	var err error
	grew := heaptest.Growth(func() {
		_, err = Import(context.Background(), Options{URL: srv.URL + "/articles/", MaxBytes: bound, Workers: 4, Log: testLog{t}})
	})
	if err == nil || !strings.Contains(err.Error(), "the pages read add up to more than 8.4 MB, the import's limit (--max-bytes)") {
		t.Fatalf("got %v, want the bound on bytes", err)
	}
	if grew > 4*bound {
		t.Errorf("the heap grew by %d bytes, bound %d", grew, bound)
	}
}

// TestImportStalled serves a listing that stops answering: with headers
// and no body, and with no headers at all. Each request is stopped after
// the timeout and tried again, then the import fails, saying so.
func TestImportStalled(t *testing.T) {
	for _, headers := range []bool{false, true} {
		t.Run(fmt.Sprintf("headers=%v", headers), func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				if headers {
					w.Header().Set("Content-Type", "application/json")
					w.Write([]byte(`{"count":`))
					w.(http.Flusher).Flush()
				}
				<-r.Context().Done() // until the client gives up
			}))
			defer srv.Close()
			start := time.Now()
			_, err := Import(context.Background(), Options{URL: srv.URL + "/articles/", Timeout: 100 * time.Millisecond, Retries: 2,
				Backoff: time.Millisecond, Log: testLog{t}})
			if err == nil || !strings.Contains(err.Error(), "no answer for 100ms (--timeout sets how long a request may go without one) (tried 3 times)") {
				t.Fatalf("got %v, want a timeout", err)
			}
			if n := requests.Load(); n != 3 {
				t.Errorf("%d requests, want 3", n)
			}
			if d := time.Since(start); d > 10*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestImportCancelled cancels an import that waits on a stalled service:
// it returns at once.
func TestImportCancelled(t *testing.T) {
	started := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case started <- struct{}{}:
		default:
		}
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, err := Import(ctx, Options{URL: srv.URL + "/articles/", Log: testLog{t}})
		done <- err
	}()
	<-started
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the import did not stop")
	}
}

// TestImportTrickle serves a page a byte at a time, for ever (the
// probe's case: each byte reset the timeout, and the import ran on): an
// answer slower than 1 kB/s past the timeout fails like a stalled one.
func TestImportTrickle(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		for r.Context().Err() == nil {
			w.Write([]byte(" "))
			w.(http.Flusher).Flush()
			select {
			case <-r.Context().Done():
			case <-time.After(10 * time.Millisecond):
			}
		}
	}))
	defer srv.Close()
	start := time.Now()
	_, err := Import(context.Background(), Options{URL: srv.URL + "/articles/", Timeout: 200 * time.Millisecond, Retries: 1,
		Backoff: time.Millisecond, Log: testLog{t}})
	if err == nil || !strings.Contains(err.Error(), "an answer slower than 1024 bytes a second after 200ms") {
		t.Fatalf("got %v, want a trickle refused", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("took %v", d)
	}
}
