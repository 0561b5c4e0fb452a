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

	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/retry"
)

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
	timeout    time.Duration  // an attempt with no progress for this long is stopped
	notices    *retry.Notices // each new try of a request

	mu   sync.Mutex
	next time.Time // the earliest start of the next request

	requests    atomic.Int64
	maxRequests int64
	// held is the bytes of the bodies read and kept, and being read:
	// never more than maxBytes.
	held     atomic.Int64
	maxBytes int64
}

func newFetcher(opt Options) *fetcher {
	return &fetcher{
		client:      opt.Client,
		userAgent:   opt.UserAgent,
		retries:     opt.Retries,
		backoff:     opt.Backoff,
		maxBackoff:  opt.MaxBackoff,
		delay:       opt.Delay,
		timeout:     opt.Timeout,
		notices:     &retry.Notices{W: opt.Log},
		maxRequests: int64(opt.MaxRequests),
		maxBytes:    opt.MaxBytes,
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
	var le *limitError
	return !errors.As(err, &ne) && !errors.As(err, &le) // network errors, cut or stalled bodies
}

// limitError is an import that reached one of its bounds: it stops.
type limitError struct{ msg string }

func (e *limitError) Error() string { return e.msg }

// stallSays is what the import says of a stall: what --timeout sets.
func stallSays(se *retry.StallError) string {
	if se.Trickle {
		return fmt.Sprintf("an answer slower than %d bytes a second after %v (--timeout sets how long a request may take so)", se.MinRate, se.After)
	}
	return fmt.Sprintf("no answer for %v (--timeout sets how long a request may go without one)", se.After)
}

// notJSONError is an answer that is not JSON, by its Content-Type.
type notJSONError struct{ contentType string }

func (e *notJSONError) Error() string {
	return fmt.Sprintf("answered Content-Type %q, not the listing's JSON", e.contentType)
}

// get returns the body of the 200 answer to a GET of u, trying again after
// network errors, 5xx, 408 and 429 answers. The error names u.
func (f *fetcher) get(ctx context.Context, u string) ([]byte, error) {
	var (
		body  []byte
		tries int
	)
	err := f.policy().Do(ctx, u, func(ctx context.Context, try int) error {
		tries = try
		var err error
		body, err = f.once(ctx, u)
		return err
	})
	switch se := (*retry.StallError)(nil); {
	case err == nil:
		return body, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case errors.As(err, &se):
		err = errors.New(stallSays(se))
	}
	if tries > 1 {
		return nil, fmt.Errorf("%s: %w (%s)", u, err, retry.Tries(tries))
	}
	return nil, fmt.Errorf("%s: %w", u, err)
}

// policy is how the import's requests are tried: again after a failure
// that may go away, waiting backoff, twice as long each time (or as long
// as the service asks), up to maxBackoff.
func (f *fetcher) policy() retry.Policy {
	return retry.Policy{
		Retries:    f.retries,
		Backoff:    f.backoff,
		MaxBackoff: f.maxBackoff,
		Transient:  retryable,
		After: func(err error) time.Duration {
			var se *statusError
			if errors.As(err, &se) {
				return se.after
			}
			return 0
		},
		Notices: f.notices,
	}
}

// once makes one request, after the polite delay. It is stopped when it
// goes f.timeout without progress (no headers, or no bytes of the body),
// or past it, comes in slower than retry.DefaultMinRate.
func (f *fetcher) once(ctx context.Context, u string) ([]byte, error) {
	if err := f.wait(ctx); err != nil {
		return nil, err
	}
	if n := f.requests.Add(1); f.maxRequests > 0 && n > f.maxRequests {
		return nil, &limitError{fmt.Sprintf("the import made %d requests, its limit (--max-requests): pass a larger --max-requests to import a listing this large", f.maxRequests)}
	}
	ctx, d := retry.Detect(ctx, retry.Stall{After: f.timeout, Flag: "--timeout", Timeout: f.timeout, TimeoutFlag: "--timeout"})
	defer d.Stop()
	body, err := f.do(ctx, u, d.Progress)
	return body, d.Err(ctx, err)
}

// do makes the request of once.
func (f *fetcher) do(ctx context.Context, u string, kick func(n int)) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", listing.ContentType)
	req.Header.Set("User-Agent", f.userAgent)
	resp, err := f.client.Do(req)
	var ue *url.Error
	if errors.As(err, &ue) {
		return nil, ue.Err // the caller names the URL
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	kick(0)
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // keep the connection
		return nil, &statusError{code: resp.StatusCode, status: resp.Status, after: retryAfter(resp.Header.Get("Retry-After"))}
	}
	if ct := resp.Header.Get("Content-Type"); ct != "" {
		mt, _, err := mime.ParseMediaType(ct)
		if err != nil || mt != listing.ContentType {
			return nil, &notJSONError{ct}
		}
	}
	return f.readBody(resp.Body, kick)
}

// readBody reads a body, counting its bytes against maxBytes as they come
// in: the bodies an import keeps, and those it is reading, never hold
// more. The bytes of a body that fails are given back.
func (f *fetcher) readBody(r io.Reader, kick func(n int)) ([]byte, error) {
	var (
		body  []byte
		taken int64
		buf   [32 << 10]byte
	)
	for {
		n, err := r.Read(buf[:])
		if n > 0 {
			kick(n)
			if held := f.held.Add(int64(n)); f.maxBytes > 0 && held > f.maxBytes {
				f.held.Add(-taken - int64(n))
				return nil, &limitError{fmt.Sprintf("the pages read add up to more than %s, the import's limit (--max-bytes): pass a larger --max-bytes to import a listing this large", human.Bytes(f.maxBytes))}
			}
			taken += int64(n)
			body = append(body, buf[:n]...)
		}
		if err == io.EOF {
			return body, nil
		}
		if err != nil {
			f.held.Add(-taken)
			return nil, fmt.Errorf("reading the answer: %w", err)
		}
	}
}

// hold counts n more bytes against maxBytes: what the import will make of
// a page read.
func (f *fetcher) hold(n int64) error {
	if held := f.held.Add(n); f.maxBytes > 0 && held > f.maxBytes {
		return &limitError{fmt.Sprintf("the pages read and what the import makes of their articles (about %s an article and %d times its JSON) add up to more than %s, the import's limit (--max-bytes): pass a larger --max-bytes to import a listing this large",
			human.Bytes(articleCost), copyCost, human.Bytes(f.maxBytes))}
	}
	return nil
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
		return retry.Sleep(ctx, d)
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
