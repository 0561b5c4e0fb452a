package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/aws/smithy-go"
	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/publish/emulatortest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"github.com/feedgen/feedgen/internal/retry"
	"google.golang.org/api/googleapi"
)

// TestPublishBucketErrors publishes to a versitygw bucket that is not
// there, and with credentials that are wrong, missing or not allowed:
// each is a BucketError of its kind with the service's words, and the
// bucket is left as it was. (An endpoint where nothing listens is an
// Unreachable error, after the AWS SDK's own retries: seconds, so it is
// tested by TestKindOf alone.)
func TestPublishBucketErrors(t *testing.T) {
	v := versitytest.Start(t)
	v.AddUser(t, "reader", "readersecret")
	s := newSite(t, smallOpt)
	url, store := v.NewBucket(t)
	publishDir(t, open(t, url), s.out, testOptions())
	snap := storeSnapshot(t, store)

	tests := []struct {
		name           string
		url            string
		access, secret string
		kind           Kind
		want           string // the start of the message
	}{
		{"missing bucket", v.BucketURL("no-such-bucket"), versitytest.Access, versitytest.Secret, NoBucket,
			"the bucket does not exist (listing articles/: NoSuchBucket: "},
		{"wrong secret", url, versitytest.Access, "wrong", BadCredentials,
			"the bucket's service refused the credentials (listing articles/: SignatureDoesNotMatch: "},
		{"unknown access key", url, "nobody", "nothing", BadCredentials,
			"the bucket's service refused the credentials (listing articles/: InvalidAccessKeyId: "},
		{"no credentials", url, "", "", NoCredentials,
			"no credentials for the bucket were found (finding credentials: "},
		{"denied", url, "reader", "readersecret", Denied,
			"access denied: the credentials may not do this (listing articles/: AccessDenied: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			versitytest.SetAWSEnv(t, tt.access, tt.secret)
			start := time.Now()
			// Credentials are looked for as the bucket is opened.
			bk, err := ParseBucketURL(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			b, err := bk.Open(context.Background(), testOptions())
			if err == nil {
				defer b.Close()
				_, err = Publish(context.Background(), b, os.DirFS(s.out), testOptions())
			}
			var be *BucketError
			if !errors.As(err, &be) || be.Kind != tt.kind || !strings.HasPrefix(err.Error(), tt.want) {
				t.Errorf("got %v, want a BucketError of kind %d: %s…", err, tt.kind, tt.want)
			}
			if d := time.Since(start); d > 3*time.Second {
				t.Errorf("took %s", d)
			}
			sameStore(t, store, snap)
		})
	}
}

// httpError is an error of an HTTP service with a status code, as the
// AWS SDK's response errors are.
type httpError int

func (e httpError) Error() string       { return fmt.Sprintf("status %d", int(e)) }
func (e httpError) HTTPStatusCode() int { return int(e) }

// codeError is a service's error with a code, as smithy.APIError is.
type codeError string

func (e codeError) Error() string        { return string(e) }
func (e codeError) ErrorCode() string    { return string(e) }
func (e codeError) ErrorMessage() string { return "message of " + string(e) }

func TestTransient(t *testing.T) {
	tests := []struct {
		err  error
		want bool
	}{
		{nil, false},
		{context.Canceled, false},
		{fmt.Errorf("put: %w", context.Canceled), false},
		{httpError(500), true},
		{httpError(503), true},
		{httpError(429), true},
		{httpError(404), false},
		{httpError(403), false},
		// Cloud Storage's JSON API (the client retries none of an upload
		// without a precondition: publish's uploads).
		{&googleapi.Error{Code: 503, Message: "Backend Error"}, true},
		{fmt.Errorf("upload: %w", &googleapi.Error{Code: 500}), true},
		{&googleapi.Error{Code: 408}, true},
		{&googleapi.Error{Code: 400}, false},
		{&googleapi.Error{Code: 401}, false},
		{codeError("SlowDown"), true},
		{codeError("InternalError"), true},
		{codeError("NoSuchBucket"), false},
		{codeError("SignatureDoesNotMatch"), false},
		{fmt.Errorf("read: %w", io.ErrUnexpectedEOF), true},
		{&net.OpError{Op: "read", Err: syscall.ECONNRESET}, true},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, false},
		// A bucket on disk: a syscall.Errno is a net.Error too.
		{&os.PathError{Op: "mkdir", Path: "/srv/feed/articles", Err: syscall.ENOTDIR}, false},
		{&os.PathError{Op: "open", Path: "/srv/feed/articles/20/0.json", Err: syscall.EACCES}, false},
		{&os.PathError{Op: "open", Path: "/srv/feed/articles/20/0.json", Err: syscall.EMFILE}, true},
		{errors.New("get credentials: failed to refresh cached credentials"), false},
		{errors.New("something else"), false},
	}
	for _, tt := range tests {
		if got := Transient(tt.err); got != tt.want {
			t.Errorf("Transient(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

func TestRetry(t *testing.T) {
	tests := []struct {
		name      string
		failures  int   // calls that fail before one succeeds
		err       error // their error
		retries   int
		wantCalls int
		wantErr   bool
	}{
		{"success", 0, nil, 2, 1, false},
		{"transient, then success", 2, httpError(503), 2, 3, false},
		{"transient every time", 10, httpError(500), 2, 3, true},
		{"throttled every time", 10, httpError(503), 2, 8, true},
		{"not transient", 10, httpError(403), 2, 1, true},
		{"no retries", 10, httpError(503), 0, 1, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			calls := 0
			err := retryTest(context.Background(), tt.retries, time.Microsecond, 0, func(context.Context, func(int)) error {
				calls++
				if calls <= tt.failures {
					return tt.err
				}
				return nil
			})
			if calls != tt.wantCalls || (err != nil) != tt.wantErr {
				t.Errorf("got %d calls, error %v; want %d calls, error %v", calls, err, tt.wantCalls, tt.wantErr)
			}
		})
	}
	t.Run("cancelled while waiting", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		calls := 0
		start := time.Now()
		time.AfterFunc(20*time.Millisecond, cancel)
		err := retryTest(ctx, 5, time.Hour, 0, func(context.Context, func(int)) error { calls++; return httpError(503) })
		if calls != 1 || err == nil || time.Since(start) > 10*time.Second {
			t.Errorf("got %d calls, error %v after %s; want 1 call and its error at once", calls, err, time.Since(start))
		}
	})
}

// TestRetryThrottled: a service that throttles (SlowDown, 503, 429,
// RequestLimitExceeded, TooManyRequests) is tried up to 8 times, waiting
// 4 times the backoff, then twice as long each time, with jitter, up to
// 20 s; another transient failure 3 times, waiting the backoff, doubled.
// Each new try is said. The waits are the policy's sleeper's: none real.
func TestRetryThrottled(t *testing.T) {
	const backoff = 250 * time.Millisecond
	throttle := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 16 * time.Second, 20 * time.Second, 20 * time.Second}
	tests := []struct {
		name  string
		err   error
		waits []time.Duration // the longest of each wait: each is at least half
	}{
		{"SlowDown", codeError("SlowDown"), throttle},
		{"503", httpError(503), throttle},
		{"429", httpError(429), throttle},
		{"RequestLimitExceeded", codeError("RequestLimitExceeded"), throttle},
		{"TooManyRequests", codeError("TooManyRequests"), throttle},
		{"500", httpError(500), []time.Duration{backoff, 2 * backoff}},
		{"InternalError", codeError("InternalError"), []time.Duration{backoff, 2 * backoff}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var (
				waits []time.Duration
				said  strings.Builder
			)
			pol := policy{retries: DefaultRetries, backoff: backoff, notices: &retry.Notices{W: &said, Clock: func() time.Time { return time.Unix(int64(len(waits))*10, 0) }},
				sleeper: func(_ context.Context, d time.Duration) error { waits = append(waits, d); return nil }}
			calls := 0
			err := pol.retry(context.Background(), "uploading x", 0, func(context.Context, func(int)) error { calls++; return tt.err })
			if err != tt.err || calls != len(tt.waits)+1 {
				t.Fatalf("got %d calls, error %v; want %d calls", calls, err, len(tt.waits)+1)
			}
			for i, d := range waits {
				if w := tt.waits[i]; d < w/2 || d > w {
					t.Errorf("wait %d: %v, want %v to %v", i+1, d, w/2, w)
				}
			}
			lines := strings.Split(strings.TrimSuffix(said.String(), "\n"), "\n")
			if len(lines) != len(tt.waits) || !strings.HasSuffix(lines[0], fmt.Sprintf("(try 1 of %d); trying again", calls)) {
				t.Errorf("said %q, want %d lines", said.String(), len(tt.waits))
			}
		})
	}
	t.Run("no retries", func(t *testing.T) {
		calls := 0
		pol := policy{backoff: backoff, sleeper: func(context.Context, time.Duration) error { t.Error("waited"); return nil }}
		pol.retry(context.Background(), "x", 0, func(context.Context, func(int)) error { calls++; return httpError(503) })
		if calls != 1 {
			t.Errorf("%d calls with no retries, want 1", calls)
		}
	})
}

// TestPublishThrottled publishes to versitygw behind a stand-in that
// answers 503 SlowDown to the first requests of a kind, as S3 does to a
// client that goes too fast: the publish is tried again, longer than for
// another failure, says so, and finishes.
func TestPublishThrottled(t *testing.T) {
	v := versitytest.Start(t)
	url, _ := v.NewBucket(t)
	const slowDowns = 5 // more than the tries of another failure
	refuse := &refuser{n: slowDowns, match: func(r *http.Request) bool { return r.Method == http.MethodPut },
		contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>`}
	srv := startStandIn(t, v.Endpoint, false, refuse.intercept)
	var mu sync.Mutex // guards waits
	url = strings.Replace(url, "endpoint="+v.Endpoint, "endpoint="+srv.URL, 1)
	s := newSite(t, smallOpt)
	b := open(t, url)
	var said strings.Builder
	var waits []time.Duration
	opt := lockOptions(url, "")
	opt.Workers, opt.Backoff, opt.Notices = 1, DefaultBackoff, &said
	opt.sleep = func(_ context.Context, d time.Duration) error {
		mu.Lock()
		defer mu.Unlock()
		waits = append(waits, d)
		return nil
	}
	res := publishDir(t, b, s.out, opt)
	mu.Lock()
	defer mu.Unlock()
	if res.Uploaded != len(readManifest(t, s.out).Files)+1 {
		t.Errorf("uploaded %d", res.Uploaded)
	}
	if n := refuse.count(); n != slowDowns || len(waits) < slowDowns {
		t.Errorf("refused %d requests, waited %d times; want %d", n, len(waits), slowDowns)
	}
	if !strings.Contains(said.String(), "SlowDown: Please reduce your request rate. (try 5 of 8); trying again") {
		t.Errorf("said %q, want the fifth try said", said.String())
	}
	if slices.Max(waits) < 4*time.Second {
		t.Errorf("waits %v: none as long as a throttled fifth try's", waits)
	}
}

// TestRetryStalled checks the timeout of an attempt: one that makes no
// progress is stopped and tried again, and the last one's error says how
// long and how many times; one that makes progress however long it takes
// is not stopped.
func TestRetryStalled(t *testing.T) {
	calls := 0
	err := retryTest(context.Background(), 2, time.Microsecond, 30*time.Millisecond, func(ctx context.Context, _ func(int)) error {
		calls++
		<-ctx.Done() // a service that stopped answering
		return ctx.Err()
	})
	var se *stallError
	if !errors.As(err, &se) || se.Tries != 3 || calls != 3 {
		t.Fatalf("got %v after %d calls, want a stall after 3", err, calls)
	}
	be := explain("uploading articles/20/0.json", err)
	if got, want := be.Error(), "uploading articles/20/0.json: the bucket's service did not answer for 30ms, tried 3 times (--timeout sets how long a request may go without an answer)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}

	err = retryTest(context.Background(), 0, time.Microsecond, time.Second, func(ctx context.Context, kick func(n int)) error {
		for range 30 { // 1.5 s in all, never a second without progress
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(50 * time.Millisecond):
				kick(64 << 10)
			}
		}
		return nil
	})
	if err != nil {
		t.Errorf("an attempt that made progress: %v", err)
	}

	// A byte every 10 ms, for ever: progress, but a trickle.
	err = retryTest(context.Background(), 0, time.Microsecond, 200*time.Millisecond, func(ctx context.Context, kick func(int)) error {
		for {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(10 * time.Millisecond):
				kick(1)
			}
		}
	})
	if !errors.As(err, &se) || !se.Trickle {
		t.Fatalf("a trickle: got %v", err)
	}
	if got, want := explain("reading manifest.json", err).Error(), "reading manifest.json: the bucket's service answered slower than 1024 bytes a second, tried once (--timeout sets how long a request may take so)"; got != want {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

func TestKindOf(t *testing.T) {
	tests := []struct {
		err  error
		want Kind
	}{
		{codeError("NoSuchBucket"), NoBucket},
		{codeError("ContainerNotFound"), NoBucket},
		{codeError("InvalidAccessKeyId"), BadCredentials},
		{codeError("AccessDenied"), Denied},
		{errors.New("operation error S3: ListObjectsV2, get identity: get credentials: failed to refresh cached credentials"), NoCredentials},
		{errors.New("google: could not find default credentials"), NoCredentials},
		{&net.OpError{Op: "dial", Err: syscall.ECONNREFUSED}, Unreachable},
		{httpError(500), Other},
	}
	for _, tt := range tests {
		if got := kindOf(tt.err); got != tt.want {
			t.Errorf("kindOf(%v) = %d, want %d", tt.err, got, tt.want)
		}
	}
}

// TestRegionOf: the bucket's region, as S3 and S3-compatible services say
// it when a request was signed for another region (or for none): in the
// message of AuthorizationHeaderMalformed, or in the x-amz-bucket-region
// header of a redirect. Such an error is WrongRegion, not a credentials
// problem.
func TestRegionOf(t *testing.T) {
	answer := func(status int, region string, err error) error {
		resp := &http.Response{StatusCode: status, Header: http.Header{}}
		if region != "" {
			resp.Header.Set("X-Amz-Bucket-Region", region)
		}
		return &smithyhttp.ResponseError{Response: &smithyhttp.Response{Response: resp}, Err: err}
	}
	apiErr := func(code, msg string) error { return &smithy.GenericAPIError{Code: code, Message: msg} }
	tests := []struct {
		err    error
		region string
		kind   Kind
		text   string // explain's message, "" not to check
	}{
		{answer(400, "", apiErr("AuthorizationHeaderMalformed", `The authorization header is malformed; the region "" is wrong; expecting "us-east-1"`)), "us-east-1", WrongRegion,
			`no region is set for the bucket, which is in us-east-1 (listing articles/: AuthorizationHeaderMalformed: The authorization header is malformed; the region "" is wrong; expecting "us-east-1")`},
		{answer(400, "eu-west-1", apiErr("AuthorizationHeaderMalformed", "The authorization header is malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1'")), "eu-west-1", WrongRegion,
			"the bucket is in the region eu-west-1, not us-east-1 (listing articles/: AuthorizationHeaderMalformed: The authorization header is malformed; the region 'us-east-1' is wrong; expecting 'eu-west-1')"},
		{answer(301, "ap-south-1", apiErr("PermanentRedirect", "The bucket you are attempting to access must be addressed using the specified endpoint.")), "ap-south-1", WrongRegion, ""},
		{answer(301, "ap-south-1", errors.New("MovedPermanently")), "ap-south-1", WrongRegion, ""},
		{errors.New("operation error S3: ListObjectsV2, failed to resolve service endpoint, endpoint rule error, A region must be set when sending requests to S3."), "", WrongRegion,
			"no region is set for the bucket (listing articles/: operation error S3: ListObjectsV2, failed to resolve service endpoint, endpoint rule error, A region must be set when sending requests to S3.)"},
		// The header on another error is not a region error.
		{answer(403, "eu-west-1", apiErr("AccessDenied", "Access Denied")), "", Denied, ""},
		{answer(404, "eu-west-1", apiErr("NoSuchBucket", "The specified bucket does not exist")), "", NoBucket, ""},
	}
	for _, tt := range tests {
		if got := regionOf(tt.err); got != tt.region {
			t.Errorf("regionOf(%v) = %q, want %q", tt.err, got, tt.region)
		}
		var be *BucketError
		if err := explain("listing articles/", tt.err); !errors.As(err, &be) || be.Kind != tt.kind || be.Region != tt.region {
			t.Errorf("explain(%v) = %#v, want kind %d, region %q", tt.err, err, tt.kind, tt.region)
		} else if tt.text != "" && err.Error() != tt.text {
			t.Errorf("got %q\nwant %q", err.Error(), tt.text)
		}
	}
}

// TestAskRegion opens s3:// URLs without a region, whose bucket's region
// publish asks the service for: an endpoint where nothing listens is said
// as such (not as a missing region, which adding one would not cure), and
// one that does not answer as a timeout after --connect-timeout, each try
// said; both within a second.
func TestAskRegion(t *testing.T) {
	versitytest.SetAWSEnv(t, "key", "secret")
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := l.Addr().String()
	l.Close()
	silent, err := net.Listen("tcp", "127.0.0.1:0") // takes connections, never answers
	if err != nil {
		t.Fatal(err)
	}
	defer silent.Close()
	go func() {
		var held []net.Conn
		defer func() {
			for _, c := range held {
				c.Close()
			}
		}()
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			held = append(held, c)
		}
	}()
	tests := []struct {
		name     string
		endpoint string
		kind     Kind
		want     string // the message, a regexp
		said     string // the notices, a regexp
		connect  time.Duration
	}{
		// A refusal comes at once: a long connect bound keeps a loaded
		// machine's slow scheduling from taking it for silence.
		{"refused", closed, Unreachable, `^the bucket's service cannot be reached: check the URL's endpoint \(finding the bucket's region: .*connection refused\)$`, `^$`, 10 * time.Second},
		{"silent", silent.Addr().String(), TimedOut,
			`^finding the bucket's region: the bucket's service did not answer for 200ms, tried 2 times \(--connect-timeout sets how long a request may wait for the first byte of an answer\)$`,
			`^finding the bucket's region: no answer for 200ms \(try 1 of 2\); trying again\n$`, 200 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bk, err := ParseBucketURL("s3://feed?endpoint=http://" + tt.endpoint + "&use_path_style=true")
			if err != nil {
				t.Fatal(err)
			}
			var said strings.Builder
			opt := Options{ConnectTimeout: tt.connect, Retries: 1, Backoff: time.Millisecond, Notices: &said}
			start := time.Now()
			_, err = bk.Open(context.Background(), opt)
			var be *BucketError
			if !errors.As(err, &be) || be.Kind != tt.kind || !regexp.MustCompile(tt.want).MatchString(err.Error()) {
				t.Errorf("got %v, want a BucketError of kind %v: %s", err, tt.kind, tt.want)
			}
			if !regexp.MustCompile(tt.said).MatchString(said.String()) {
				t.Errorf("said %q, want %s", said.String(), tt.said)
			}
			if took := time.Since(start); took > 2*time.Second {
				t.Errorf("took %v", took)
			}
		})
	}
}

// TestThrottleHint: a publish that failed on throttling says to publish
// again with fewer workers, with the command; any other error, nothing.
func TestThrottleHint(t *testing.T) {
	b, err := ParseBucketURL("s3://bkt/feed/?region=us-east-1")
	if err != nil {
		t.Fatal(err)
	}
	want := "the service kept refusing requests as too many (throttling) with --workers 16: publish again with fewer at once, as in feedgen publish --workers 4 's3://bkt/feed/?region=us-east-1'"
	for _, tt := range []struct {
		err     error
		workers int
		want    string
	}{
		{explain("uploading articles/20/42.json", codeError("SlowDown")), 16, want},
		{fmt.Errorf("x: %w", httpError(429)), 16, want},
		{codeError("SlowDown"), 2, "the service kept refusing requests as too many (throttling) with --workers 2: publish again with fewer at once, as in feedgen publish --workers 1 's3://bkt/feed/?region=us-east-1'"},
		{codeError("InternalError"), 16, ""},
		{httpError(403), 16, ""},
		{nil, 16, ""},
	} {
		if got := b.ThrottleHint(tt.err, tt.workers); got != tt.want {
			t.Errorf("ThrottleHint(%v, %d) = %q, want %q", tt.err, tt.workers, got, tt.want)
		}
	}
}

// TestBadRequestHint: versitygw refuses a request signed for another
// region than its own with a bare 400 (the first request of a dry run
// is a HEAD, with no body to say why): the hint says to check region=
// and the bucket's name. Other errors get none.
func TestBadRequestHint(t *testing.T) {
	v := versitytest.Start(t)
	url, _ := v.NewBucket(t)
	url = strings.Replace(url, "region=us-east-1", "region=eu-west-1", 1)
	bk, err := ParseBucketURL(url)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bk.Open(context.Background(), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := newSite(t, smallOpt)
	opt := testOptions()
	opt.DryRun = true
	_, err = Publish(context.Background(), b, os.DirFS(s.out), opt)
	if err == nil {
		t.Fatal("a dry run with the wrong region: no error")
	}
	want := "the service refused the request as malformed (400 Bad Request): check that the bucket " + bk.Name + " is in region=eu-west-1 (for an S3-compatible server, the region it is set up with; 'aws s3api get-bucket-location --bucket " + bk.Name + "' says it), and that its name is one S3 allows (3 to 63 lowercase letters, digits, dots and hyphens)"
	if got := bk.Hint(err, func(string) string { return "" }); got != want {
		t.Errorf("%v: hint %q, want %q", err, got, want)
	}
	for _, err := range []error{explain("listing articles/", httpError(403)), explain("x", httpError(500)), errors.New("other")} {
		if got := bk.Hint(err, func(string) string { return "" }); strings.Contains(got, "400") {
			t.Errorf("%v: hint %q", err, got)
		}
	}
}

// TestPublishGCSTransient publishes to fake-gcs-server behind a stand-in
// that answers 503 to the first uploads of pages, as Cloud Storage does
// in a moment of trouble: the storage client tries none of them again (an
// upload without a precondition is not idempotent to it), publish's
// retry policy does, says so, and the bucket ends up the build. (Before,
// publish took a googleapi.Error for permanent and stopped at the first.)
func TestPublishGCSTransient(t *testing.T) {
	gcs := emulatortest.GCS(t)
	url, _ := gcs.NewBucket(t)
	const failures = 2 // of the first page: DefaultRetries
	refuse := &refuser{n: failures, match: func(r *http.Request) bool {
		return strings.HasPrefix(r.URL.Path, "/upload/") && strings.HasPrefix(r.URL.Query().Get("name"), "articles/")
	}, contentType: "application/json", body: `{"error":{"code":503,"message":"Backend Error","errors":[{"message":"Backend Error","reason":"backendError"}]}}`}
	srv := startStandIn(t, "http://"+gcs.Endpoint, true, refuse.intercept)
	t.Setenv("STORAGE_EMULATOR_HOST", srv.Addr)
	s := newSite(t, smallOpt)
	b := open(t, url)
	var said strings.Builder
	opt := lockOptions(url, "")
	opt.Workers, opt.Notices = 1, &said
	opt.sleep = func(context.Context, time.Duration) error { return nil }
	res := publishDir(t, b, s.out, opt)
	if n := refuse.count(); n != failures {
		t.Errorf("refused %d uploads, want %d", n, failures)
	}
	if res.Uploaded != len(readManifest(t, s.out).Files)+1 {
		t.Errorf("uploaded %d", res.Uploaded)
	}
	if !strings.Contains(said.String(), "trying again") {
		t.Errorf("said %q, want a try again said", said.String())
	}
	checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
}
