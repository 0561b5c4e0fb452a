package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	smithyhttp "github.com/aws/smithy-go/transport/http"
	"github.com/feedgen/feedgen/internal/retry"
	"gocloud.dev/gcerrors"
	"google.golang.org/api/googleapi"
)

// Kind is what went wrong with the bucket, for a person.
type Kind int

// Kinds of BucketError.
const (
	Other          Kind = iota
	NoBucket            // the bucket does not exist
	NoCredentials       // the SDK found no credentials
	BadCredentials      // the service refused the credentials
	Denied              // the credentials may not do it
	Unreachable         // the service's address does not answer
	TimedOut            // the service stopped answering (Options.Timeout)
	WrongRegion         // the bucket is in another region than the one asked (BucketError.Region), or none was
)

// BucketError is an error of the bucket's service, made plain: Error says
// what kind it is and what publish was doing, and ends with the service's
// own words.
type BucketError struct {
	Kind Kind
	Op   string // e.g. "listing articles/", "uploading articles/20/0.json"
	Err  error
	// Region is the bucket's region, as the service said it, for
	// WrongRegion: "" when it did not say.
	Region string
}

func (e *BucketError) Error() string {
	var what string
	switch e.Kind {
	case NoBucket:
		what = "the bucket does not exist"
	case NoCredentials:
		what = "no credentials for the bucket were found"
	case BadCredentials:
		what = "the bucket's service refused the credentials"
	case Denied:
		what = "access denied: the credentials may not do this"
	case Unreachable:
		what = "the bucket's service cannot be reached: check the URL's endpoint"
	case WrongRegion:
		what = "no region is set for the bucket"
		if e.Region != "" {
			what = "no region is set for the bucket, which is in " + e.Region
		}
	case TimedOut:
		var se *stallError
		errors.As(e.Err, &se)
		if se.Trickle {
			return fmt.Sprintf("%s: the bucket's service answered slower than %d bytes a second, %s (--timeout sets how long a request may take so)",
				e.Op, retry.DefaultMinRate, retry.Tries(se.Tries))
		}
		if se.Sending {
			return fmt.Sprintf("%s: the bucket's service took nothing more of the request for %v, %s (--timeout sets how long a request may go without progress)",
				e.Op, se.After, retry.Tries(se.Tries))
		}
		if se.Flag == connectFlag {
			return fmt.Sprintf("%s: the bucket's service did not answer for %v, %s (%s sets how long a request may wait for the first byte of an answer)",
				e.Op, se.After, retry.Tries(se.Tries), connectFlag)
		}
		return fmt.Sprintf("%s: the bucket's service did not answer for %v, %s (--timeout sets how long a request may go without an answer)",
			e.Op, se.After, retry.Tries(se.Tries))
	default:
		return e.Op + ": " + detail(e.Err)
	}
	if e.Kind == WrongRegion && e.Region != "" {
		if r := regionAsked(e.Err); r != "" {
			what = "the bucket is in the region " + e.Region + ", not " + r
		}
	}
	return fmt.Sprintf("%s (%s: %s)", what, e.Op, detail(e.Err))
}

func (e *BucketError) Unwrap() error { return e.Err }

// apiError is the error of a service that answered with an error code,
// such as S3's (smithy.APIError).
type apiError interface {
	ErrorCode() string
	ErrorMessage() string
}

// detail is the service's own words for err: an error code and message
// when there is one, else the error less gocloud's prefix.
func detail(err error) string {
	var ae apiError
	if errors.As(err, &ae) && ae.ErrorCode() != "" {
		if msg := ae.ErrorMessage(); msg != "" && msg != ae.ErrorCode() {
			return ae.ErrorCode() + ": " + msg
		}
		return ae.ErrorCode()
	}
	return gcloudPrefix.ReplaceAllString(err.Error(), "")
}

// gcloudPrefix is what gocloud.dev/blob writes before a service's error.
var gcloudPrefix = regexp.MustCompile(`^blob (\(key "[^"]*"\) )?\(code=\w+\): `)

// explain classifies err, the error of op on the bucket; a cancelled
// context's error is kept as it is.
func explain(op string, err error) error {
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	be := &BucketError{Kind: kindOf(err), Op: op, Err: err}
	if be.Kind == WrongRegion {
		be.Region = regionOf(err)
	}
	return be
}

// explainList is explain for the listing of articles/, where "not found"
// can only mean that the bucket is missing.
func explainList(err error) error {
	err = explain("listing "+Prefix, err)
	var be *BucketError
	if errors.As(err, &be) && be.Kind == Other && gcerrors.Code(be.Err) == gcerrors.NotFound {
		be.Kind = NoBucket
	}
	return err
}

// stallError is an attempt that made no progress for a while: its
// context was cancelled with it (see try).
type stallError = retry.StallError

// errRaced is a listing that found an object gone between two of its
// steps (a bucket on disk that another process writes): tried again.
var errRaced = errors.New("an object changed while the bucket was listed")

// kindOf classifies err.
func kindOf(err error) Kind {
	if se := (*stallError)(nil); errors.As(err, &se) {
		return TimedOut
	}
	if regionOf(err) != "" || strings.Contains(err.Error(), "region is required") || strings.Contains(err.Error(), "A region must be set") {
		return WrongRegion
	}
	var ae apiError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "NoSuchBucket", "ContainerNotFound":
			return NoBucket
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AuthorizationHeaderMalformed", "ExpiredToken",
			"InvalidToken", "TokenRefreshRequired", "InvalidClientTokenId", "AuthenticationFailed",
			"XAdminUserNotFound": // versitygw's InvalidAccessKeyId
			return BadCredentials
		case "AccessDenied", "AllAccessDisabled", "Forbidden", "AuthorizationFailure", "AuthorizationPermissionMismatch":
			return Denied
		}
	}
	msg := err.Error()
	for _, s := range []string{"get credentials", "failed to retrieve credentials", "could not find default credentials", "no credentials"} {
		if strings.Contains(msg, s) {
			return NoCredentials
		}
	}
	if gcerrors.Code(err) == gcerrors.PermissionDenied {
		return Denied
	}
	var oe *net.OpError
	if errors.As(err, &oe) && oe.Op == "dial" {
		return Unreachable
	}
	return Other
}

// The region of a bucket, as S3 (and S3-compatible services) say it when
// a request was signed for another one: in an AuthorizationHeaderMalformed
// error ("the region 'us-east-1' is wrong; expecting 'eu-west-1'"), or the
// x-amz-bucket-region header of a PermanentRedirect (301) or of another
// answer that names it.
var (
	regionExpected = regexp.MustCompile(`region ['"]([^'"]*)['"] is wrong; expecting ['"]([a-z0-9-]+)['"]`)
	regionCodes    = map[string]bool{"AuthorizationHeaderMalformed": true, "PermanentRedirect": true, "IllegalLocationConstraintException": true, "AuthorizationQueryParametersError": true, "MovedPermanently": true}
)

// regionOf returns the bucket's region as the service said it in err, ""
// when it did not say.
func regionOf(err error) string {
	if m := regionExpected.FindStringSubmatch(err.Error()); m != nil {
		return m[2]
	}
	var re *smithyhttp.ResponseError
	if !errors.As(err, &re) || re.Response == nil || re.Response.Response == nil {
		return ""
	}
	region := re.Response.Header.Get("X-Amz-Bucket-Region")
	var ae apiError
	if region != "" && (re.HTTPStatusCode() == http.StatusMovedPermanently || errors.As(err, &ae) && regionCodes[ae.ErrorCode()]) {
		return region
	}
	return ""
}

// regionAsked returns the region a request was signed for, as the
// service's error says it: "" when it does not.
func regionAsked(err error) string {
	if m := regionExpected.FindStringSubmatch(err.Error()); m != nil && m[1] != "" {
		return m[1]
	}
	return ""
}

// isNotFound reports whether err says that an object does not exist.
func isNotFound(err error) bool {
	return err != nil && gcerrors.Code(err) == gcerrors.NotFound
}

// Transient reports whether err may go away if the operation is tried
// again: the service was busy or failed inside, or the connection broke.
func Transient(err error) bool {
	if se := (*stallError)(nil); errors.As(err, &se) {
		return true
	}
	if err == nil || errors.Is(err, context.Canceled) {
		return false
	}
	if errors.Is(err, errRaced) || errors.Is(err, io.EOF) {
		return true // a file of the bucket read while another process wrote it
	}
	switch gcerrors.Code(err) {
	case gcerrors.Internal, gcerrors.ResourceExhausted, gcerrors.DeadlineExceeded:
		return true
	case gcerrors.NotFound, gcerrors.PermissionDenied, gcerrors.InvalidArgument, gcerrors.FailedPrecondition,
		gcerrors.Unimplemented, gcerrors.AlreadyExists, gcerrors.Canceled:
		return false
	}
	if kindOf(err) != Other {
		return false
	}
	status := 0
	var hs interface{ HTTPStatusCode() int }
	var ge *googleapi.Error // Cloud Storage's JSON API
	switch {
	case errors.As(err, &hs):
		status = hs.HTTPStatusCode()
	case errors.As(err, &ge):
		status = ge.Code
	}
	if status != 0 {
		return status == http.StatusTooManyRequests || status == http.StatusRequestTimeout || status >= 500
	}
	var ae apiError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "SlowDown", "RequestTimeout", "InternalError", "ServiceUnavailable", "Throttling", "ThrottlingException",
			"RequestLimitExceeded", "TooManyRequests", "TooManyRequestsException", "RequestThrottled", "ServerBusy":
			return true
		}
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		// A syscall.Errno is a net.Error too: a disk's ENOTDIR or EACCES
		// (a bucket on disk) does not go away.
		if errno, ok := ne.(syscall.Errno); ok {
			return errno.Temporary() || errno.Timeout() || errno == syscall.EPIPE
		}
		return true
	}
	return errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

// connectFlag is the flag of feedgen publish that sets
// Options.ConnectTimeout, for messages.
const connectFlag = "--connect-timeout"

// policy is how a request is tried: how many more times after a
// transient failure, after how long, how long an attempt may wait for the
// first byte of its answer and then go without progress, and where each
// new try is said.
type policy struct {
	retries int
	backoff time.Duration
	connect time.Duration  // for the first byte of the answer; 0: no bound but timeout
	timeout time.Duration  // without progress; 0: none
	notices *retry.Notices // nil: nothing said
	// sleeper waits d, or until ctx is done (its error then); a timer
	// when nil.
	sleeper func(ctx context.Context, d time.Duration) error
}

// A service that throttles (S3's SlowDown, 503, 429) is tried more, and
// waited for longer, than one that failed: throttleRetries more times
// (when retries allow any), waiting throttleFactor times backoff (with
// jitter), then twice as long each time, up to throttleMax. With the
// defaults: 8 tries, over up to a minute and a half.
const (
	throttleRetries = 7
	throttleFactor  = 4
	throttleMax     = 20 * time.Second
)

// throttled reports whether err is a service asking for fewer requests.
func throttled(err error) bool {
	var ae apiError
	if errors.As(err, &ae) {
		switch ae.ErrorCode() {
		case "SlowDown", "Throttling", "ThrottlingException", "RequestLimitExceeded", "TooManyRequests",
			"TooManyRequestsException", "RequestThrottled", "ServerBusy", "ServiceUnavailable":
			return true
		}
	}
	var hs interface{ HTTPStatusCode() int }
	if errors.As(err, &hs) {
		c := hs.HTTPStatusCode()
		return c == http.StatusTooManyRequests || c == http.StatusServiceUnavailable
	}
	return gcerrors.Code(err) == gcerrors.ResourceExhausted
}

// policy returns the policy of the publish's requests.
func (p *publisher) policy() policy { return p.opt.policy(p.notices) }

// policy returns the policy of requests made with o (defaults applied),
// said to n.
func (o Options) policy(n *retry.Notices) policy {
	return policy{retries: o.Retries, backoff: o.Backoff, connect: o.ConnectTimeout, timeout: o.Timeout, notices: n, sleeper: o.sleep}
}

// retry runs op, the request what (e.g. "listing articles/"), as the
// publish's policy says (see policy.retry).
func (p *publisher) retry(ctx context.Context, what string, op func(ctx context.Context, kick func(n int)) error) error {
	return p.policy().retry(ctx, what, 0, op)
}

// retry runs op, and runs it again while it fails with a transient error,
// up to retries more times, waiting backoff (with jitter), then twice as
// long each time; while the service throttles, more times and longer
// (see throttleRetries). Each new try is said, naming what and why (see
// retry.Policy). An attempt that goes connect without a first byte of its
// answer (once its request is sent), or timeout without progress, is
// stopped, and counts as a transient failure (see try; extra is for a
// request the HTTP client does not report). It returns op's last error.
func (pol policy) retry(ctx context.Context, what string, extra time.Duration, op func(ctx context.Context, kick func(n int)) error) error {
	rp := retry.Policy{
		Retries:   pol.retries,
		Backoff:   pol.backoff,
		Jitter:    true,
		Transient: Transient,
		Throttled: throttled,
		Throttle:  retry.Throttle{Retries: throttleRetries, Factor: throttleFactor, Max: throttleMax},
		Notices:   pol.notices,
		Why:       why,
		Silent:    func(err error) bool { return errors.Is(err, errRaced) },
		Sleep:     pol.sleeper,
	}
	return rp.Do(ctx, what, func(ctx context.Context, _ int) error { return pol.try(ctx, what, extra, op) })
}

// why says in a few words why a try failed.
func why(err error) string {
	if se := (*stallError)(nil); errors.As(err, &se) {
		return se.Error()
	}
	return firstLine(detail(err))
}

// uploadRate is the slowest a request's body is taken to go once the HTTP
// client has sent it: the first byte of the answer may come connect and
// a second per uploadRate bytes of the body after that, for the bytes the
// client's socket and the network still hold.
const uploadRate = 64 << 10

// try runs op once with a context that is cancelled, with a *stallError,
// when a request of op waits connect for the first byte of its answer
// (after its body is sent; connect is timeout when that is shorter, or
// connect is 0), or goes timeout without progress (bytes of its body
// sent, bytes of its answer), or has taken longer than timeout at less
// than retry.DefaultMinRate (see retry.Detector). The HTTP client of the
// bucket reports its requests to the watch in the context (see watch); on
// a bucket on disk, op calls kick with the bytes of an answer as they
// come in, and an upload reports the bytes it writes. Until the HTTP
// client reports a request (it never does on a bucket on disk), the
// first bound is connect plus extra: the time an upload's body takes to
// go, unseen. A bound of 0 or less is none. An answer that stops for
// connect after its first byte is said, as is what try waits for.
func (pol policy) try(ctx context.Context, what string, extra time.Duration, op func(ctx context.Context, kick func(n int)) error) error {
	first, flag := pol.timeout, "--timeout"
	if pol.connect > 0 && (first <= 0 || pol.connect < first) {
		first, flag = pol.connect, connectFlag
	}
	if first <= 0 {
		return op(ctx, func(int) {})
	}
	ctx, d := retry.Detect(ctx, retry.Stall{After: first + extra, Flag: flag, Timeout: pol.timeout, TimeoutFlag: "--timeout"})
	defer d.Stop()
	var (
		mu   sync.Mutex
		said bool // the stall was said
	)
	var quiet *time.Timer // says that an answer stopped, after its first byte
	if pol.connect > 0 && pol.timeout > pol.connect {
		quiet = time.AfterFunc(time.Hour, func() {
			mu.Lock()
			defer mu.Unlock()
			if !said && ctx.Err() == nil {
				said = true
				pol.notices.Say("%s: the answer stopped %v ago; waiting up to %v for more (--timeout)", what, pol.connect, pol.timeout)
			}
		})
		quiet.Stop()
		defer quiet.Stop()
	}
	w := &watch{
		start: func() {
			mu.Lock()
			defer mu.Unlock()
			if quiet != nil {
				quiet.Stop()
			}
			d.Arm(first, flag, false)
		},
		sending: func(n int) {
			d.Arm(pol.timeout, "--timeout", true)
			d.Count(n)
		},
		sent: func(n int) {
			d.Arm(first+time.Duration(n/uploadRate)*time.Second, flag, false)
		},
		answer: func(n int) {
			mu.Lock()
			defer mu.Unlock()
			if quiet != nil {
				quiet.Reset(pol.connect)
			}
			d.Progress(n)
		},
	}
	err := op(withWatch(ctx, w), func(n int) {
		if !w.client.Load() {
			w.answer(n)
		}
	})
	return d.Err(ctx, err)
}

// kicking calls kick with the bytes of every read of r: a download's body
// as it comes in.
type kicking struct {
	r    io.Reader
	kick func(n int)
}

func (k kicking) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	if n > 0 {
		k.kick(n)
	}
	return n, err
}
