package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// maxPageBytes bounds the body of one page: a service without a maximum
// page size would otherwise send its whole listing at once, and more.
const maxPageBytes = 1 << 30

// fetcher makes the requests of one import: one at a time per worker, no
// two starting closer than the delay, each failed one tried again after a
// growing wait.
type fetcher struct {
	client     *http.Client
	userAgent  string
	retries    int
	backoff    time.Duration
	maxBackoff time.Duration
	delay      time.Duration
	log        io.Writer

	mu   sync.Mutex
	next time.Time // the earliest start of the next request

	requests atomic.Int64
}

func newFetcher(opt Options) *fetcher {
	return &fetcher{
		client:     opt.Client,
		userAgent:  opt.UserAgent,
		retries:    opt.Retries,
		backoff:    opt.Backoff,
		maxBackoff: opt.MaxBackoff,
		delay:      opt.Delay,
		log:        opt.Log,
	}
}

// statusError is an answer other than 200.
type statusError struct {
	code   int
	status string
	after  time.Duration // Retry-After, when given
}

func (e *statusError) Error() string { return "status " + e.status }

// retryable reports whether a request that failed with err may succeed
// when tried again.
func retryable(err error) bool {
	var se *statusError
	if errors.As(err, &se) {
		return se.code >= 500 || se.code == http.StatusTooManyRequests || se.code == http.StatusRequestTimeout
	}
	var ne *notJSONError
	var te *tooLargeError
	return !errors.As(err, &ne) && !errors.As(err, &te) // network errors, cut bodies
}

// tooLargeError is an answer over maxPageBytes.
type tooLargeError struct{}

func (*tooLargeError) Error() string {
	return fmt.Sprintf("the answer is over %d bytes: too large for one page", maxPageBytes)
}

// notJSONError is an answer that is not JSON, by its Content-Type.
type notJSONError struct{ contentType string }

func (e *notJSONError) Error() string {
	return fmt.Sprintf("answered Content-Type %q, not the listing's JSON", e.contentType)
}

// get returns the body of the 200 answer to a GET of u, trying again after
// network errors, 5xx, 408 and 429 answers. The error names u.
func (f *fetcher) get(ctx context.Context, u string) ([]byte, error) {
	wait := f.backoff
	for try := 0; ; try++ {
		body, err := f.once(ctx, u)
		if err == nil {
			return body, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if !retryable(err) || try >= f.retries {
			if try > 0 {
				return nil, fmt.Errorf("%s: %w (tried %d times)", u, err, try+1)
			}
			return nil, fmt.Errorf("%s: %w", u, err)
		}
		d := wait
		var se *statusError
		if errors.As(err, &se) && se.after > d {
			d = se.after
		}
		d = min(d, f.maxBackoff)
		fmt.Fprintf(f.log, "%s: %v: trying again in %v\n", u, err, d)
		t := time.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
		wait = min(2*wait, f.maxBackoff)
	}
}

// once makes one request, after the polite delay.
func (f *fetcher) once(ctx context.Context, u string) ([]byte, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", f.userAgent)
	f.requests.Add(1)
	resp, err := f.client.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		return nil, ue.Err // the caller names the URL
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // keep the connection
		return nil, &statusError{code: resp.StatusCode, status: resp.Status, after: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != "application/json" {
			return nil, &notJSONError{ct}
		}
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxPageBytes+1))
	if err != nil {
		return nil, fmt.Errorf("reading the answer: %w", err)
	}
	if len(body) > maxPageBytes {
		return nil, &tooLargeError{}
	}
	return body, nil
}

// wait blocks until the request may start: delay after the start of the
// one before.
func (f *fetcher) wait(ctx context.Context) error {
	if f.delay <= 0 {
		return nil
	}
	f.mu.Lock()
	now := time.Now()
	start := now
	if f.next.After(now) {
		start = f.next
	}
	f.next = start.Add(f.delay)
	f.mu.Unlock()
	if d := start.Sub(now); d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
	}
	return nil
}

// retryAfter reads a Retry-After header given in seconds; 0 otherwise.
func retryAfter(s string) time.Duration {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return time.Duration(min(n, 3600)) * time.Second
}
