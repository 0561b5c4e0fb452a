// Package importer moves a live article listing onto feedgen (docs/contract.md §11):
// it reads every page of a service's /articles/ over HTTP and turns them
// into a site, config.yaml and content/<section>/<section_slug>/<slug>.md,
// whose build answers those pages byte for byte.
//
// It keeps only what it can keep exact. Every article is turned into front
// matter, and the site is read back with feedgen's own config and content
// loaders and rendered with its own encoder before anything is written:
// each article must encode to the bytes the service sent, and each page
// read to the page the service answered. What cannot (a URL that does not
// fit {site_url}/{section}/{section_slug}/{slug}/, a slug that cannot be a
// file name, two articles on one path, a value the service writes in a way
// feedgen does not, ...) is refused, with the article's id or the page's
// URL.
//
// The files, one job each:
//
//   - importer.go: Options, Import and the Site it returns.
//   - fetch.go: HTTP requests: retries with backoff, the polite delay.
//   - page.go: reading a page and its articles from the service's JSON.
//   - crawl.go: finding the page sizes and reading every page.
//   - convert.go: articles into a site: site_url, sections, authors,
//     front matter values, and the refusals.
//   - yaml.go: config.yaml and front matter, written with yaml.v3 nodes.
//   - verify.go: reading the site back and comparing it with the service.
//   - write.go: writing the site into an empty folder, all or nothing.
package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/layout"
)

// Defaults of Options.
const (
	DefaultWorkers    = 4
	DefaultRetries    = 4
	DefaultBackoff    = 500 * time.Millisecond
	DefaultMaxBackoff = 30 * time.Second
	DefaultTimezone   = "UTC"
	// DefaultTimeout is how long a request may go without an answer.
	DefaultTimeout = 30 * time.Second
	// DefaultMaxRequests bounds the requests of an import: a listing of
	// 10 million articles at 100 a page.
	DefaultMaxRequests = 100_000
	// DefaultMaxBytes bounds the memory of an import: about 200,000
	// articles of 500 bytes.
	DefaultMaxBytes = 1 << 30
)

// What an import holds of an article after the crawl, besides the bytes
// of its page: its JSON as read, its values, its front matter, the article
// read back and its JSON as the feed encodes it. Measured at the peak (the
// feed made, before the pages are compared) after a collection: 1.8 kB and
// 5.7 times its JSON's size; TestImportMemory holds the import's heap to
// it. About 5 kB for an article of 500 bytes.
const (
	articleCost = 2 << 10
	copyCost    = 6
)

// MemoryLimit is the soft memory limit of a process that imports with
// MaxBytes maxBytes (runtime/debug.SetMemoryLimit): the import holds at most
// about maxBytes, and the garbage collector runs as the heap nears it
// rather than letting it grow to twice what is held. memoryHeadroom is
// for the runtime's own memory and the other goroutines of the process.
func MemoryLimit(maxBytes int64) int64 {
	if maxBytes <= 0 {
		return math.MaxInt64
	}
	return maxBytes + memoryHeadroom
}

const memoryHeadroom = 64 << 20

// Options say what to import and how politely.
type Options struct {
	// URL is the service's listing, e.g. https://api.example.com/articles/.
	URL string
	// Client makes the requests; nil is http.DefaultClient's like.
	Client *http.Client
	// Timeout is how long one request may go without progress (no
	// headers, no bytes of the body) before it is stopped and tried
	// again. 0 is DefaultTimeout; negative, none.
	Timeout time.Duration
	// MaxRequests bounds the requests the import makes, retries included:
	// a listing whose count and page size need more is refused before
	// its pages are read. 0 is DefaultMaxRequests; negative, no bound.
	MaxRequests int
	// MaxBytes bounds the memory of the import: the bytes of the pages it
	// holds (it keeps every page, to compare it with the rebuilt site) and
	// is reading, and what it makes of their articles (about articleCost
	// and copyCost times its size an article). A listing whose count
	// tells that it needs more is refused after its first pages. 0 is
	// DefaultMaxBytes; negative, no bound.
	MaxBytes int64
	// UserAgent is sent with every request; "" sends "feedgen-import".
	UserAgent string
	// Workers is how many pages are read at once; 0 is DefaultWorkers.
	Workers int
	// Delay is the least time between the starts of two requests, across
	// workers.
	Delay time.Duration
	// Retries is how many times a failed request is tried again (network
	// errors, 5xx, 408, 429); 0 is DefaultRetries, negative none.
	Retries int
	// Backoff is the wait before the first retry; it doubles on each
	// retry, up to MaxBackoff. A Retry-After header is honoured up to
	// MaxBackoff too. 0 takes the defaults.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// Timezone is written in config.yaml; the service's published times
	// are kept as written and must be valid, and not in the future, in it.
	// "" is DefaultTimezone.
	Timezone string
	// Layout is pagination.layout written in config.yaml: "chunks" (the
	// default, as feedgen new site writes: every page size up to the
	// service's max limit at every offset, as the service answers, put
	// together per request) or "pages" (a file per page).
	Layout string
	// Limits are page sizes to pre-render besides the service's default
	// and max limit (the listing cannot show which others a site uses),
	// with Layout "pages".
	Limits []int
	// Offsets is the offsets mode written in config.yaml with Layout
	// "pages": "all" (every offset, as the service answers; the default)
	// or "aligned".
	Offsets string
	// KeepGoing leaves out what cannot be kept exact, reported in
	// Site.Refused, instead of failing.
	KeepGoing bool
	// Now is the clock: an article published after it (in Timezone) would
	// be left out of a build as scheduled. nil is time.Now.
	Now func() time.Time
	// Progress, when set, is called with the articles read so far and the
	// count, from several goroutines.
	Progress func(done, total int)
	// Log receives notices: retries, guesses; nil discards them.
	Log io.Writer
}

func (o Options) withDefaults() Options {
	if o.Client == nil {
		o.Client = &http.Client{}
	}
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		o.Timeout = 0
	}
	switch {
	case o.MaxRequests == 0:
		o.MaxRequests = DefaultMaxRequests
	case o.MaxRequests < 0:
		o.MaxRequests = 0
	}
	switch {
	case o.MaxBytes == 0:
		o.MaxBytes = DefaultMaxBytes
	case o.MaxBytes < 0:
		o.MaxBytes = 0
	}
	if o.UserAgent == "" {
		o.UserAgent = "feedgen-import"
	}
	if o.Layout == "" {
		o.Layout = layout.ChunksName
	}
	if o.Workers <= 0 {
		o.Workers = DefaultWorkers
	}
	switch {
	case o.Retries == 0:
		o.Retries = DefaultRetries
	case o.Retries < 0:
		o.Retries = 0
	}
	if o.Backoff <= 0 {
		o.Backoff = DefaultBackoff
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxBackoff
	}
	if o.Timezone == "" {
		o.Timezone = DefaultTimezone
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return o
}

// Site is an imported site, not yet written (see Write).
type Site struct {
	// Files are config.yaml and content/<section>/<section_slug>/<slug>.md,
	// by slash-separated path.
	Files map[string][]byte

	SiteURL, BaseURL       string
	DefaultLimit, MaxLimit int
	Count                  int // the service's count
	Articles               int // articles written
	Sections, Categories   int
	Authors                int // keys of authors
	InlineAuthors          int // articles with an inline author
	// Pages is how many pages the service answered were compared with
	// the rebuilt site, byte for byte (0 when articles were left out).
	Pages int
	// Requests is how many HTTP requests were made, retries included.
	Requests int
	// Refused is what was left out with KeepGoing: one diagnostic per
	// article (Path "article ID") or page (Path its URL).
	Refused diag.List
	// Layout is pagination.layout written in config.yaml.
	Layout string
	// Estimate is the size of the build's pages (layout: pages, with the
	// offsets mode written in config.yaml) or chunks (layout: chunks).
	Estimate int64

	held int64 // the bytes counted against Options.MaxBytes
}

// Import reads the listing at opt.URL and returns the site that reproduces
// it. What cannot be kept exact comes back as a diag.List error, unless
// opt.KeepGoing, when it is left out and listed in Site.Refused. Network
// and HTTP failures, after retries, are errors.
func Import(ctx context.Context, opt Options) (*Site, error) {
	opt = opt.withDefaults()
	listURL, err := ListURL(opt.URL)
	if err != nil {
		return nil, err
	}
	f := newFetcher(opt)
	read, err := crawl(ctx, f, listURL, opt)
	if err != nil {
		return nil, err
	}
	s, err := convert(ctx, read, opt)
	if err != nil {
		return nil, err
	}
	s.Requests = int(f.requests.Load())
	s.held = f.held.Load()
	if len(s.Refused) > 0 && !opt.KeepGoing {
		return nil, s.Refused
	}
	return s, nil
}

// ListURL checks the address of a listing, and returns it as requests are
// made of it: an http(s) URL whose path ends in /articles/ (a missing
// final slash is added), with no query or fragment.
func ListURL(s string) (*url.URL, error) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%q is not an http(s) URL: give the listing's address, e.g. https://api.example.com/articles/", s)
	}
	if u.RawQuery != "" || u.ForceQuery || u.Fragment != "" {
		return nil, fmt.Errorf("%q has a query or fragment: give the listing's address alone, e.g. %s://%s/articles/", s, u.Scheme, u.Host)
	}
	if strings.HasSuffix(u.Path, "/articles") {
		u.Path += "/"
		u.RawPath = ""
	}
	if !strings.HasSuffix(u.Path, "/articles/") {
		return nil, fmt.Errorf("%q is not a listing's address: it ends in /articles/, e.g. %s://%s/articles/", s, u.Scheme, u.Host)
	}
	return u, nil
}

// errChanged is the listing changing while it is read.
var errChanged = errors.New("the listing changed while it was read")
