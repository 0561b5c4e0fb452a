package publish

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/retry"
	"gocloud.dev/blob"
	_ "gocloud.dev/blob/azureblob" // azblob://
	_ "gocloud.dev/blob/gcsblob"   // gs://
)

// Bucket is where a BUCKET_URL says to publish, resolved once: the
// scheme, the bucket, and the folder of the feed in it (the prefix).
// The folder is the URL's path, as aws s3 sync and rclone read
// s3://bucket/feed/, or its prefix= parameter, as gocloud.dev reads it.
type Bucket struct {
	Scheme string // "s3", "gs", "azblob" or "file"
	// Name is the bucket (the container of azblob://); for file://, the
	// folder of the objects, prefix included.
	Name string
	// Prefix is the folder of the feed in the bucket, ending in "/", or
	// "" for its root; always "" for file://, whose folder holds it.
	Prefix string
	// Notes say what publish made of the URL that the URL did not say
	// outright (prefix=feed is the folder feed/): one line each.
	Notes []string

	raw     string     // the URL as given
	host    string     // the URL's host: the bucket
	query   url.Values // its parameters, prefix= left out
	rawBase string     // the URL without its path, query and fragment
	style   *pathStyle // s3:// with an endpoint and no use_path_style
	s3      *s3Params  // s3://: the parameters, read
}

// URLError is a BUCKET_URL that publish refuses before it opens it: the
// message says what to write instead.
type URLError struct{ Err error }

func (e *URLError) Error() string { return e.Err.Error() }
func (e *URLError) Unwrap() error { return e.Err }

func urlErrorf(format string, args ...any) error {
	return &URLError{fmt.Errorf(format, args...)}
}

// Schemes are the BUCKET_URL schemes publish knows.
var Schemes = []string{"azblob", "file", "gs", "s3"}

// ParseBucketURL reads a BUCKET_URL: a *URLError when it is not one, or
// says where to publish in two ways that do not agree.
func ParseBucketURL(raw string) (*Bucket, error) {
	u, err := url.Parse(raw)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, urlErrorf("BUCKET_URL %q is not a URL: %v", raw, err)
	}
	switch {
	case u.Scheme == "":
		return nil, urlErrorf("BUCKET_URL %q has no scheme: write s3://BUCKET?region=REGION, gs://BUCKET, azblob://CONTAINER or file:///PATH", raw)
	case !slices.Contains(Schemes, u.Scheme):
		return nil, urlErrorf("BUCKET_URL %q: unknown scheme %q: feedgen publishes to %s", raw, u.Scheme, schemeList())
	case u.Opaque != "":
		return nil, urlErrorf("BUCKET_URL %q names no bucket: write %s://BUCKET", raw, u.Scheme)
	case u.User != nil:
		return nil, urlErrorf("BUCKET_URL %q holds a user name: credentials come from the environment, never the URL: write %s://%s", raw, u.Scheme, u.Host)
	}
	// The URL without its path, query and fragment, its host as written
	// (a URL with no "//" has none: "s3:" is refused below).
	b := &Bucket{Scheme: u.Scheme, raw: raw, host: u.Host, query: u.Query(), rawBase: u.Scheme + "://" + rawHost(raw)}
	if err := b.onceEach(); err != nil {
		return nil, err
	}
	if u.Scheme == "file" {
		return b, b.parseFile(u)
	}
	if u.Host == "" {
		return nil, urlErrorf("BUCKET_URL %q names no bucket: write %s://BUCKET", raw, u.Scheme)
	}
	b.Name = u.Host
	if err := b.parsePrefix(u); err != nil {
		return nil, err
	}
	if u.Scheme == "s3" {
		if b.s3, err = readS3Params(b.query); err != nil {
			return nil, urlErrorf("BUCKET_URL %q: %v", raw, err)
		}
		if b.style = pathStyleOf(raw, u); b.style != nil {
			if what := b.style.never(); what != "" {
				return nil, urlErrorf("BUCKET_URL '%s': the endpoint is %s, which cannot name the bucket as the host %s.%s (virtual-hosted style, the default): add use_path_style=true, as in '%s'",
					raw, what, b.style.bucket, b.style.host, b.style.fixed)
			}
		}
	}
	return b, nil
}

// onceEach refuses a parameter given twice: which one would hold (the
// SDKs read the first) is not said, and a prefix= or endpoint= added to
// a URL that had one already would write elsewhere than meant.
func (b *Bucket) onceEach() error {
	keys := slices.Sorted(maps.Keys(b.query))
	for _, key := range keys {
		if vals := b.query[key]; len(vals) > 1 {
			return urlErrorf("BUCKET_URL %q gives %s= %d times (%s): which one holds is not said: give it once, as in '%s' or '%s'",
				b.raw, key, len(vals), strings.Join(vals, ", "), keepOne(b.raw, key, 0), keepOne(b.raw, key, len(vals)-1))
		}
	}
	return nil
}

// keepOne returns the URL raw with the n-th parameter key (from 0) as
// written, and no other of that key.
func keepOne(raw, key string, n int) string {
	base, query, _ := strings.Cut(raw, "?")
	query, frag, hasFrag := strings.Cut(query, "#")
	var parts []string
	i := 0
	for part := range strings.SplitSeq(query, "&") {
		k, _, _ := strings.Cut(part, "=")
		if part != "" && unescape(k) == key {
			if i++; i-1 != n {
				continue
			}
		}
		if part != "" {
			parts = append(parts, part)
		}
	}
	s := base + "?" + strings.Join(parts, "&")
	if hasFrag {
		s += "#" + frag
	}
	return s
}

// rawHost returns the host of raw as written (u.Host may be decoded): ""
// when raw has no "//".
func rawHost(raw string) string {
	_, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		rest = rest[:i]
	}
	return rest
}

// parsePrefix reads the folder of the feed in a bucket of a cloud: the
// URL's path, or its prefix= parameter; both when they agree.
func (b *Bucket) parsePrefix(u *url.URL) error {
	var fromPath string
	if p := strings.TrimPrefix(u.Path, "/"); p != "" {
		clean, ok := folderOf(p)
		if !ok {
			return urlErrorf("BUCKET_URL %q: the path %q is not a folder of the bucket: write a folder, as in %s", b.raw, u.Path, b.with("", "feed/"))
		}
		fromPath = clean
	}
	fromParam, given := b.query.Get("prefix"), b.query.Has("prefix")
	b.query.Del("prefix")
	if given && fromParam != "" {
		clean, ok := folderOf(fromParam)
		if !ok {
			return urlErrorf("BUCKET_URL %q: prefix=%s is not a folder of the bucket: write a folder, as in %s", b.raw, fromParam, b.with("", "feed/"))
		}
		if !strings.HasSuffix(fromParam, "/") {
			b.Notes = append(b.Notes, fmt.Sprintf("prefix=%s is the folder %s of the bucket (its objects %smanifest.json, %sarticles/…): write prefix=%s to say so",
				fromParam, clean, clean, clean, clean))
		}
		fromParam = clean
	}
	switch {
	case fromPath != "" && given && fromParam != fromPath:
		with := "prefix=" + fromParam
		if fromParam == "" {
			with = "an empty prefix="
		}
		return urlErrorf("BUCKET_URL %q names the folder of the feed twice, differently: %s in its path, and %s: write %s, or %s",
			b.raw, fromPath, with, b.with(fromPath, ""), b.with(fromParam, ""))
	case fromPath != "":
		b.Prefix = fromPath
	default:
		b.Prefix = fromParam
	}
	return nil
}

// folderOf returns p as a folder of a bucket, ending in "/": p is
// "feed", "feed/" or "a/b/", with no empty, "." or ".." part.
func folderOf(p string) (string, bool) {
	trimmed := strings.TrimSuffix(p, "/")
	if trimmed == "" {
		return "", false
	}
	for part := range strings.SplitSeq(trimmed, "/") {
		if part == "" || part == "." || part == ".." {
			return "", false
		}
	}
	return trimmed + "/", true
}

// parseFile reads a file:// URL: the folder, and a prefix= in it.
func (b *Bucket) parseFile(u *url.URL) error {
	switch u.Host {
	case "", ".", "localhost":
	default:
		return urlErrorf("BUCKET_URL %q: %q is read as a host name, not as a folder: write file:///%s%s (three slashes: an absolute path) or file://./%s%s (a relative one)",
			b.raw, u.Host, u.Host, u.Path, u.Host, u.Path)
	}
	if u.Path == "" || u.Path == "/" && u.Host == "." {
		return urlErrorf("BUCKET_URL %q names no folder: write file:///PATH (an absolute path)", b.raw)
	}
	for key := range b.query {
		if key != "prefix" {
			return urlErrorf("BUCKET_URL %q: file:// takes no parameter %q: write file:///PATH", b.raw, key)
		}
	}
	b.Name = filepath.Clean(BucketFolder(u))
	if p := b.query.Get("prefix"); p != "" {
		clean, ok := folderOf(p)
		if !ok {
			return urlErrorf("BUCKET_URL %q: prefix=%s is not a folder: write file:///PATH/FOLDER", b.raw, p)
		}
		b.Name = filepath.Join(b.Name, filepath.FromSlash(clean))
	}
	b.query.Del("prefix")
	return nil
}

// with returns the URL with the folder prefix in its path ("" for
// none), the parameters of s3 (less prefix=) and its fragment as given,
// and prefix= set to param when it is not "".
func (b *Bucket) with(prefix, param string) string {
	s := b.rawBase + "/" + prefix
	_, query, _ := strings.Cut(b.raw, "?")
	query, frag, hasFrag := strings.Cut(query, "#")
	if !strings.Contains(b.raw, "?") {
		_, frag, hasFrag = strings.Cut(b.raw, "#")
	}
	var parts []string
	for part := range strings.SplitSeq(query, "&") {
		if key, _, _ := strings.Cut(part, "="); part != "" && unescape(key) != "prefix" {
			parts = append(parts, part)
		}
	}
	if param != "" {
		parts = append(parts, "prefix="+param)
	}
	if len(parts) > 0 {
		s += "?" + strings.Join(parts, "&")
	}
	if hasFrag {
		s += "#" + frag
	}
	return s
}

// WithParam returns the URL as given with the parameter key set to
// value: in place of the first one of that key, else added at the end.
func (b *Bucket) WithParam(key, value string) string { return withParam(b.raw, key, value) }

func withParam(raw, key, value string) string {
	base, query, _ := strings.Cut(raw, "?")
	query, frag, hasFrag := strings.Cut(query, "#")
	if !strings.Contains(raw, "?") {
		base, frag, hasFrag = strings.Cut(raw, "#")
	}
	set := key + "=" + strings.ReplaceAll(url.QueryEscape(value), "%2F", "/")
	var parts []string
	done := false
	for part := range strings.SplitSeq(query, "&") {
		k, _, _ := strings.Cut(part, "=")
		switch {
		case part == "":
		case unescape(k) != key:
			parts = append(parts, part)
		case !done:
			parts, done = append(parts, set), true
		}
	}
	if !done {
		parts = append(parts, set)
	}
	s := base + "?" + strings.Join(parts, "&")
	if hasFrag {
		s += "#" + frag
	}
	return s
}

func unescape(s string) string {
	if u, err := url.QueryUnescape(s); err == nil {
		return u
	}
	return s
}

func schemeList() string {
	var b strings.Builder
	for i, s := range Schemes {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(s + "://")
	}
	return b.String()
}

// String describes where publish writes, as the URL says it, for a
// person: "bucket feed, prefix news/ (s3, endpoint http://127.0.0.1:9000,
// region us-east-1)", or "folder /srv/www/feed (file)". An s3:// URL
// without region= has the "region from the environment" (AWS_REGION,
// ~/.aws/config), which Open finds.
func (b *Bucket) String() string {
	if b.Scheme == "file" {
		return "folder " + b.Name + " (file)"
	}
	what := "bucket"
	if b.Scheme == "azblob" {
		what = "container"
	}
	prefix := "no prefix"
	if b.Prefix != "" {
		prefix = "prefix " + b.Prefix
	}
	details := b.Scheme
	if b.s3 != nil {
		if b.s3.endpoint != "" {
			details += ", endpoint " + b.s3.endpoint
		}
		if b.s3.region != "" {
			details += ", region " + b.s3.region
		} else {
			details += ", region from the environment"
		}
	}
	return fmt.Sprintf("%s %s, %s (%s)", what, b.Name, prefix, details)
}

// Open opens the bucket. A bucket on disk (file://) must exist. The
// requests opening makes (an s3:// bucket whose region is not known asks
// the service for it) are tried as opt says of a publish's (its retries,
// timeouts and notices; see Options). The Bucket is left as it is.
func (b *Bucket) Open(ctx context.Context, opt Options) (*blob.Bucket, error) {
	opt = opt.withDefaults()
	var (
		bucket *blob.Bucket
		err    error
	)
	switch b.Scheme {
	case "file":
		bucket, err = OpenFolder(b.Name)
	case "s3":
		bucket, err = b.openS3(ctx, opt.policy(&retry.Notices{W: opt.Notices, Clock: opt.Clock}), opt.Workers)
	default:
		u := &url.URL{Scheme: b.Scheme, Host: b.host, RawQuery: b.query.Encode()}
		if b.Scheme == "gs" {
			bucket, err = b.openGCS(ctx, u, opt.Workers)
		} else {
			bucket, err = b.openAzure(ctx, u, opt.Workers)
		}
	}
	if err != nil {
		var ue *URLError
		var be *BucketError
		if errors.As(err, &ue) || errors.As(err, &be) {
			return nil, err
		}
		msg := err.Error()
		if strings.Contains(msg, "unknown query parameter") || strings.Contains(msg, "invalid value for") || strings.Contains(msg, "invalid query parameter") {
			return nil, urlErrorf("BUCKET_URL %q: %v", b.raw, err)
		}
		return nil, fmt.Errorf("opening %s: %w", b.raw, err)
	}
	if b.Prefix != "" && b.Scheme != "file" {
		bucket = blob.PrefixedBucket(bucket, b.Prefix)
	}
	return bucket, nil
}

// pathStyle is what publish knows of an s3:// BUCKET_URL with an endpoint
// and no use_path_style: the SDK then names the bucket as a host name of
// the endpoint (virtual-hosted style, BUCKET.HOST), which an S3-compatible
// server at an IP address, at localhost or behind a name of its own
// (minio, in a compose file) does not answer.
type pathStyle struct {
	bucket string // the URL's bucket
	host   string // the endpoint's host, without its port
	fixed  string // the URL with use_path_style=true added
}

// pathStyleOf returns the pathStyle of a BUCKET_URL, nil when it is not an
// s3:// URL with an endpoint that leaves use_path_style (or its older
// name s3ForcePathStyle) out.
func pathStyleOf(raw string, u *url.URL) *pathStyle {
	if u.Scheme != "s3" {
		return nil
	}
	q := u.Query()
	endpoint := q.Get("endpoint")
	if endpoint == "" || q.Has("use_path_style") || q.Has("s3ForcePathStyle") || q.Has("hostname_immutable") {
		return nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint // as the SDK reads a bare host:port
	}
	e, err := url.Parse(endpoint)
	if err != nil || e.Hostname() == "" {
		return nil
	}
	return &pathStyle{bucket: u.Host, host: e.Hostname(), fixed: withParam(raw, "use_path_style", "true")}
}

// never says why the bucket can never be a host name of the endpoint: its
// host is an IP address, or localhost. "" when it may be.
func (p *pathStyle) never() string {
	switch {
	case net.ParseIP(p.host) != nil:
		return "an IP address"
	case strings.EqualFold(p.host, "localhost"):
		return "localhost"
	}
	return ""
}

// virtualHost reports whether err is the failed lookup of the bucket as a
// host name of the endpoint.
func (p *pathStyle) virtualHost(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && strings.EqualFold(strings.TrimSuffix(de.Name, "."), p.bucket+"."+p.host)
}

// Hint says what the person can do about err, an error of a publish to
// the bucket, when there is something to say: "" when not.
func (b *Bucket) Hint(err error, getenv func(string) string) string {
	if getenv == nil {
		getenv = os.Getenv
	}
	var hints []string
	var be *BucketError
	if errors.As(err, &be) {
		switch {
		case be.Kind == WrongRegion && be.Region != "":
			hints = append(hints, fmt.Sprintf("the bucket is in the region %s: add region=%s to the URL, as in '%s', or set AWS_REGION=%s",
				be.Region, be.Region, b.WithParam("region", be.Region), be.Region))
		case be.Kind == WrongRegion:
			hints = append(hints, fmt.Sprintf("add region=REGION to the URL (the bucket's region), as in '%s', or set AWS_REGION", b.WithParam("region", "us-east-1")))
		case be.Kind == NoCredentials:
			hints = append(hints, credentialsLookedFor(b.Scheme, getenv))
		case be.Kind == BadCredentials || be.Kind == Denied:
			hints = append(hints, credentialsHint(b.Scheme))
		}
	}
	if hint := b.badRequestHint(err, getenv); hint != "" {
		hints = append(hints, hint)
	}
	if b.style != nil && b.style.virtualHost(err) {
		hints = append(hints, fmt.Sprintf("the bucket was looked for at the host %s.%s (virtual-hosted style, the default); for a server that takes the bucket in the path, add use_path_style=true: '%s'",
			b.style.bucket, b.style.host, b.style.fixed))
	}
	return strings.Join(slices.DeleteFunc(hints, func(s string) bool { return s == "" }), "\n")
}

// badRequestHint says what to check when an S3 service refused a
// request as malformed (400, which a HEAD request, the first a publish
// makes, gives no reason for): a region= other than the bucket's, which
// an S3-compatible server may refuse that way, or a bucket name that S3
// cannot have.
func (b *Bucket) badRequestHint(err error, getenv func(string) string) string {
	var hs interface{ HTTPStatusCode() int }
	if b.Scheme != "s3" || !errors.As(err, &hs) || hs.HTTPStatusCode() != http.StatusBadRequest || kindOf(err) != Other {
		return ""
	}
	region := "the region from the environment"
	switch {
	case b.s3 != nil && b.s3.region != "":
		region = "region=" + b.s3.region
	case getenv("AWS_REGION") != "":
		region = "AWS_REGION=" + getenv("AWS_REGION")
	}
	return fmt.Sprintf("the service refused the request as malformed (400 Bad Request): check that the bucket %s is in %s (for an S3-compatible server, the region it is set up with; 'aws s3api get-bucket-location --bucket %s' says it), and that its name is one S3 allows (3 to 63 lowercase letters, digits, dots and hyphens)",
		b.Name, region, b.Name)
}

// ThrottleHint says, when err is a service's refusal to take more
// requests (S3's SlowDown, 503, 429) that outlasted the publish's
// tries, to publish again with fewer workers than the workers it had:
// "" for any other error.
func (b *Bucket) ThrottleHint(err error, workers int) string {
	if err == nil || !throttled(err) {
		return ""
	}
	fewer := max(1, workers/4)
	return fmt.Sprintf("the service kept refusing requests as too many (throttling) with --workers %d: publish again with fewer at once, as in feedgen publish --workers %d '%s'",
		workers, fewer, b.raw)
}

// credentialsHint says where each cloud's SDK looks for credentials, and
// what publishing needs.
func credentialsHint(scheme string) string {
	switch scheme {
	case "s3":
		return "S3 credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the profile AWS_PROFILE names in ~/.aws; publishing needs s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject"
	case "gs":
		return "Google Cloud credentials come from GOOGLE_APPLICATION_CREDENTIALS (a key file) or gcloud auth application-default login; publishing needs the Storage Object Admin role on the bucket"
	case "azblob":
		return "Azure credentials come from AZURE_STORAGE_ACCOUNT with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, AZURE_STORAGE_CONNECTION_STRING, or az login"
	}
	return ""
}

// credentialsLookedFor says where the SDK of the scheme looked for
// credentials and found none, as the environment getenv reads says.
func credentialsLookedFor(scheme string, getenv func(string) string) string {
	if scheme != "s3" {
		return credentialsHint(scheme)
	}
	keys := "not set"
	switch {
	case getenv("AWS_ACCESS_KEY_ID") != "" && getenv("AWS_SECRET_ACCESS_KEY") == "":
		keys = "AWS_SECRET_ACCESS_KEY not set"
	case getenv("AWS_ACCESS_KEY_ID") == "" && getenv("AWS_SECRET_ACCESS_KEY") != "":
		keys = "AWS_ACCESS_KEY_ID not set"
	}
	file := func(env, name string) string {
		if p := getenv(env); p != "" {
			return p
		}
		return filepath.Join(getenv("HOME"), ".aws", name)
	}
	profile := getenv("AWS_PROFILE")
	if profile == "" {
		profile = "default"
	}
	files := []string{file("AWS_SHARED_CREDENTIALS_FILE", "credentials"), file("AWS_CONFIG_FILE", "config")}
	var found []string
	for _, f := range files {
		if _, err := os.Stat(f); err == nil {
			found = append(found, f)
		}
	}
	where := fmt.Sprintf("%s and %s (neither exists)", files[0], files[1])
	if len(found) > 0 {
		where = strings.Join(found, " and ") + " (it has no keys there)"
	}
	imds := "the EC2 instance metadata service (IMDS: no role found)"
	if strings.EqualFold(getenv("AWS_EC2_METADATA_DISABLED"), "true") {
		imds = "the EC2 instance metadata service (IMDS: not asked, AWS_EC2_METADATA_DISABLED=true)"
	}
	return fmt.Sprintf("S3 credentials were looked for in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (%s), in the profile %s of %s, and in %s: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE to a profile of ~/.aws/credentials",
		keys, profile, where, imds)
}
