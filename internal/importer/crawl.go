package importer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
)

// hugeLimit is the limit asked to learn the service's maximum: it answers
// with its max_limit in the links, or this when it has none.
const hugeLimit = 1_000_000_000

// seedDefaultLimit is the default page size the seed documents: taken
// when the service's links cannot show it.
const seedDefaultLimit = 20

// listingRead is what was read of a listing.
type listingRead struct {
	listURL      *url.URL
	baseURL      string // as the links show it
	defaultLimit int
	maxLimit     int
	count        int
	articles     []*article // in the listing's order
	pages        []*page    // every page read, each with its limit and offset
	problems     diag.List  // what cannot be kept exact, by page URL
}

// crawl reads every page of the listing at its largest page size. A
// listing that changes while it is read is read once more; a second change
// is an error.
func crawl(ctx context.Context, f *fetcher, listURL *url.URL, opt Options) (*listingRead, error) {
	r, err := crawlOnce(ctx, f, listURL, opt)
	if errors.Is(err, errChanged) {
		fmt.Fprintf(opt.Log, "%v: reading it again\n", err)
		r, err = crawlOnce(ctx, f, listURL, opt)
		if errors.Is(err, errChanged) {
			return nil, fmt.Errorf("%w, also when read again: import it when it is not being edited", err)
		}
	}
	return r, err
}

// pageURL returns the address of the listing's page for the query of limit
// and offset; 0 leaves a parameter out.
func pageURL(listURL *url.URL, limit, offset int) string {
	u := *listURL
	var q []string
	if limit > 0 {
		q = append(q, "limit="+strconv.Itoa(limit))
	}
	if offset > 0 {
		q = append(q, "offset="+strconv.Itoa(offset))
	}
	u.RawQuery = strings.Join(q, "&")
	return u.String()
}

// fetchPage gets and reads the page at u, asked with offset off.
func fetchPage(ctx context.Context, f *fetcher, u string, off int) (*page, error) {
	data, err := f.get(ctx, u)
	if err != nil {
		return nil, err
	}
	p, err := parsePage(u, data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", u, &answerError{err})
	}
	p.off = off
	return p, nil
}

// madeOf is what the import will hold for the articles of page p after the
// crawl, besides the page's bytes (counted as they are read): about
// articleCost an article and copyCost times its JSON.
func madeOf(p *page) int64 {
	n := int64(len(p.results)) * articleCost
	for _, a := range p.results {
		n += int64(copyCost * len(a))
	}
	return n
}

// memoryOf is about what an import of count articles holds, when they
// are the size of those of page p: their pages' bytes and what is made of
// them.
func memoryOf(p *page, count int) int64 {
	if len(p.results) == 0 {
		return 0
	}
	per := (int64(len(p.raw)) + madeOf(p)) / int64(len(p.results))
	if int64(count) > math.MaxInt64/per {
		return math.MaxInt64
	}
	return int64(count) * per
}

// sizeFlag writes n as a value of --max-bytes, rounded up: 230MB, 12GB.
func sizeFlag(n int64) string {
	if n < 10e9 {
		return strconv.FormatInt((n+1e6-1)/1e6, 10) + "MB"
	}
	return strconv.FormatInt((n+1e9-1)/1e9, 10) + "GB"
}

// contradiction says how page p, at offset p.off, contradicts a listing of
// count articles in pages of size, or "": it holds more articles than
// those leave (or, exact, another number), or its next link has another
// limit than size.
func contradiction(p *page, size, count int, exact bool) string {
	want := max(0, min(size, count-p.off))
	switch {
	case len(p.results) > want || (exact && len(p.results) != want):
		return fmt.Sprintf("it holds %d articles where count %d in pages of %d leaves %d at offset %d", len(p.results), count, size, want, p.off)
	case p.next == "":
		return ""
	}
	if l, ok := parseLink(p.next); ok && l.limit != size {
		return fmt.Sprintf("its next link %s has limit=%d where pages are of %d", p.next, l.limit, size)
	}
	return ""
}

// contradicts is the error of a page that contradicts the listing, as
// contradiction says.
func contradicts(p *page, what, as string) error {
	return fmt.Errorf("%s: the listing contradicts %s: %s; stopped: feedgen imports a listing whose pages agree with their count and links: fix the service's pagination, or import another address", p.url, as, what)
}

// parsedLink is a link of a page: {base}/articles/?limit=L[&offset=O].
type parsedLink struct {
	base      string
	limit     int
	offset    int
	hasOffset bool
}

// parseLink reads a link of the listing, as the service writes it: its
// base URL, then /articles/?limit=L, then &offset=O or not, in canonical
// decimals.
func parseLink(s string) (parsedLink, bool) {
	i := strings.LastIndex(s, "/articles/?")
	if i < 0 {
		return parsedLink{}, false
	}
	l := parsedLink{base: s[:i]}
	q := s[i+len("/articles/?"):]
	lim, off, hasOff := strings.Cut(q, "&")
	v, ok := strings.CutPrefix(lim, "limit=")
	if !ok {
		return parsedLink{}, false
	}
	if l.limit, ok = decimal(v); !ok || l.limit == 0 {
		return parsedLink{}, false
	}
	if hasOff {
		v, ok := strings.CutPrefix(off, "offset=")
		if !ok {
			return parsedLink{}, false
		}
		if l.offset, ok = decimal(v); !ok {
			return parsedLink{}, false
		}
		l.hasOffset = true
	}
	return l, true
}

// decimal reads a canonical non-negative decimal of at most 18 digits.
func decimal(s string) (int, bool) {
	if s == "" || len(s) > 18 || (len(s) > 1 && s[0] == '0') {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// pageSize learns the effective limit of a request from the links of its
// page p (offset 0): next when there is one; else the previous link of the
// same request with offset=1, fetched. It returns the base URL the links
// show too, and the probe page, if fetched. A probe the service answers
// 404 (it pre-renders only some offsets) gives 0.
func pageSize(ctx context.Context, f *fetcher, listURL *url.URL, p *page, limit int) (size int, base string, probe *page, err error) {
	if p.next != "" {
		l, ok := parseLink(p.next)
		if !ok || !l.hasOffset || l.offset != l.limit {
			return 0, "", nil, fmt.Errorf(`%s: not the listing's JSON: "next" is %q, not {base_url}/articles/?limit=L&offset=L`, p.url, p.next)
		}
		return l.limit, l.base, nil, nil
	}
	probe, err = fetchPage(ctx, f, pageURL(listURL, limit, 1), 1)
	var se *statusError
	if errors.As(err, &se) && se.code == http.StatusNotFound {
		return 0, "", nil, nil
	}
	if err != nil {
		return 0, "", nil, err
	}
	l, ok := parseLink(probe.previous)
	if !ok || l.hasOffset {
		return 0, "", nil, fmt.Errorf(`%s: not the listing's JSON: "previous" is %q, not {base_url}/articles/?limit=L`, probe.url, probe.previous)
	}
	return l.limit, l.base, probe, nil
}

// crawlOnce reads the listing once: the page of the bare URL (the default
// limit), the page of a huge limit (the max limit), then every page of the
// max limit, several at a time.
func crawlOnce(ctx context.Context, f *fetcher, listURL *url.URL, opt Options) (*listingRead, error) {
	r := &listingRead{listURL: listURL}
	f.held.Store(0) // the pages of a crawl before are dropped
	bare, base, err := r.readDefault(ctx, f, opt)
	if err != nil {
		return nil, err
	}
	huge, probe, base2, read, err := r.readMax(ctx, f, opt)
	if err != nil {
		return nil, err
	}
	switch {
	case base == "" && base2 == "":
		base = strings.TrimSuffix(pageURL(listURL, 0, 0), "/articles/")
		fmt.Fprintf(opt.Log, "%s: no link shows the base URL: taking %s\n", bare.url, base)
	case base == "":
		base = base2
	case base2 != "" && base2 != base:
		return nil, fmt.Errorf("%s: its links start with %s, those of %s with %s: one base_url cannot give both", huge.url, base2, bare.url, base)
	}
	r.baseURL = base
	if bare.count != huge.count {
		return nil, fmt.Errorf("%w (count %d on %s, then %d on %s)", errChanged, bare.count, bare.url, huge.count, huge.url)
	}
	r.count = huge.count

	// huge is the page (read, 0): the first of those read. The others
	// are requested one by one as workers are free: a listing that claims
	// a huge count costs nothing before it is refused.
	n := 1 + (r.count-1)/read
	if r.count == 0 {
		n = 1
	}
	if err := r.budget(f, opt, huge, probe, read, n); err != nil {
		return nil, err
	}
	var done progressCounter
	done.add(opt.Progress, len(huge.results), r.count)
	rest, problems, err := readPages(ctx, f, n-1, func(i int) *page {
		off := (i + 1) * read
		return &page{url: pageURL(listURL, read, off), limit: read, off: off}
	}, opt, r.count, huge, &done)
	if err != nil {
		return nil, err
	}
	r.problems = append(r.problems, problems...)
	if probe != nil {
		r.pages = append(r.pages, probe)
	}
	if err := r.collect(ctx, append([]*page{huge}, rest...), read); err != nil {
		return nil, err
	}
	return r, nil
}

// readDefault reads the page of the bare URL and learns the default
// limit from it, and the base URL its links show ("" when none does).
func (r *listingRead) readDefault(ctx context.Context, f *fetcher, opt Options) (bare *page, base string, err error) {
	bare, err = fetchPage(ctx, f, pageURL(r.listURL, 0, 0), 0)
	if err != nil {
		return nil, "", err
	}
	def, base, probe, err := pageSize(ctx, f, r.listURL, bare, 0)
	if err != nil {
		return nil, "", err
	}
	if def == 0 {
		def = seedDefaultLimit
		fmt.Fprintf(opt.Log, "%s: no link shows the default page size: taking %d, as the seed documents\n", bare.url, def)
	} else if what := contradiction(bare, def, bare.count, true); what != "" {
		return nil, "", contradicts(bare, what, "itself")
	}
	bare.limit = def
	r.defaultLimit = def
	r.pages = append(r.pages, bare)
	if probe != nil {
		probe.limit = def
		r.pages = append(r.pages, probe)
	}
	return bare, base, nil
}

// readMax reads the page of a huge limit and learns the max limit from
// it: huge, its probe (see pageSize), the base URL its links show, and
// the page size the listing is read at.
func (r *listingRead) readMax(ctx context.Context, f *fetcher, opt Options) (huge, probe *page, base string, read int, err error) {
	def := r.defaultLimit
	huge, err = fetchPage(ctx, f, pageURL(r.listURL, hugeLimit, 0), 0)
	if err != nil {
		return nil, nil, "", 0, err
	}
	most, base, probe, err := pageSize(ctx, f, r.listURL, huge, hugeLimit)
	if err != nil {
		return nil, nil, "", 0, err
	}
	if most != 0 {
		if what := contradiction(huge, most, huge.count, true); what != "" {
			return nil, nil, "", 0, contradicts(huge, what, "itself")
		}
	}
	// read is the page size pages are read at: most, unless the service
	// has none.
	switch {
	case most == 0:
		most = max(def, len(huge.results))
		fmt.Fprintf(opt.Log, "%s: no link shows the maximum page size: taking %d\n", huge.url, most)
	case most >= hugeLimit:
		r.problems.Add(huge.url, 0, fmt.Sprintf("the service has no maximum page size (it answered limit=%d with %d of its %s, and links of limit=%d): feedgen pre-renders fixed page sizes; taking max_limit %d",
			hugeLimit, len(huge.results), human.Plural(huge.count, "article"), most, def))
		most, read = def, hugeLimit
	case most < def:
		r.problems.Add(huge.url, 0, fmt.Sprintf("the maximum page size %d is below the default %d: feedgen needs default_limit <= max_limit", most, def))
		most = def
	}
	r.maxLimit = most
	if read == 0 {
		read = most
	}
	huge.limit = most
	if probe != nil {
		probe.limit = most
	}
	return huge, probe, base, read, nil
}

// budget refuses a listing of n pages of read articles that needs more
// requests or memory than the import may use, and holds the memory of
// the pages read so far (r's, huge and probe).
func (r *listingRead) budget(f *fetcher, opt Options, huge, probe *page, read, n int) error {
	if left := int64(opt.MaxRequests) - f.requests.Load(); opt.MaxRequests > 0 && int64(n-1) > left {
		return fmt.Errorf("%s: the listing has %d articles at %d a page: %d requests, more than the %d the import may still make (--max-requests %d): pass a larger --max-requests to import it",
			huge.url, r.count, read, n-1, max(left, 0), opt.MaxRequests)
	}
	if need := memoryOf(huge, r.count); opt.MaxBytes > 0 && need > opt.MaxBytes {
		return fmt.Errorf("%s: the listing has %s: an import of them holds about %s (%s an article), more than the %s it may (--max-bytes): pass --max-bytes %s to import it",
			huge.url, human.Plural(r.count, "article"), human.Bytes(need), human.Bytes(need/int64(r.count)), human.Bytes(opt.MaxBytes), sizeFlag(need+need/10))
	}
	for _, p := range append(slices.Clone(r.pages), huge, probe) {
		if p == nil {
			continue
		}
		if err := f.hold(madeOf(p)); err != nil {
			return fmt.Errorf("%s: %w", p.url, err)
		}
	}
	return nil
}

// collect takes the articles of pages, read at read a page: a page of
// the wrong length, or an article that cannot be read or is on a page
// twice, is a problem; one on two pages, a listing that changed.
func (r *listingRead) collect(ctx context.Context, pages []*page, read int) error {
	seen := make(map[int64]string, min(r.count, 1<<20))
	for _, p := range pages {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.raw == nil {
			continue // not read: a problem already
		}
		r.pages = append(r.pages, p)
		if want := min(read, r.count-p.off); len(p.results) != want {
			r.problems.Add(p.url, 0, fmt.Sprintf("%d articles on the page, want %d of count %d", len(p.results), want, r.count))
		}
		for n := range p.results {
			a, err := parseArticle(p, n)
			if err != nil {
				r.problems.Add(p.url, 0, err.Error())
				continue
			}
			if other, dup := seen[a.ID]; dup {
				if other != p.url {
					return fmt.Errorf("%w (article %d on %s and on %s)", errChanged, a.ID, other, p.url)
				}
				r.problems.Add(p.url, 0, fmt.Sprintf("article %d is on the page twice", a.ID))
				continue
			}
			seen[a.ID] = p.url
			r.articles = append(r.articles, a)
		}
	}
	return nil
}

// progressCounter counts the articles read, for Options.Progress.
type progressCounter struct {
	mu sync.Mutex
	n  int
}

func (c *progressCounter) add(progress func(done, total int), n, total int) {
	if progress == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n += n
	progress(c.n, total)
}

// readPages fetches the n pages that mk makes, opt.Workers at a time,
// each made as it is sent to a worker, and returns those sent, in order.
// A page that cannot be read is a problem; a page whose count is not count
// means the listing changed (errChanged); a page that contradicts the
// first (more articles than asked, a next link of another limit), or a
// bound of the import reached, stops it.
func readPages(ctx context.Context, f *fetcher, n int, mk func(i int) *page, opt Options, count int, first *page, done *progressCounter) ([]*page, diag.List, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu    sync.Mutex
		fatal error
		wg    sync.WaitGroup
		pages []*page
	)
	todo := make(chan *page)
	for range min(opt.Workers, max(n, 1)) {
		wg.Go(func() {
			for p := range todo {
				got, err := fetchPage(ctx, f, p.url, p.off)
				var stop error // what ends the import
				switch {
				case err == nil:
					stop = agrees(f, got, p.limit, count, first)
				case errors.As(err, new(*limitError)) || !answered(err):
					stop = err // a bound reached, or the service is down: no use going on
				}
				mu.Lock()
				switch {
				case ctx.Err() != nil:
				case stop != nil:
					if fatal == nil {
						fatal = stop
					}
					cancel()
				case err == nil:
					limit := p.limit
					*p = *got
					p.limit = limit
				default:
					p.problem = strings.TrimPrefix(err.Error(), p.url+": ")
				}
				mu.Unlock()
				if err == nil && stop == nil {
					done.add(opt.Progress, len(got.results), count)
				}
			}
		})
	}
send:
	for i := range n {
		p := mk(i)
		select {
		case todo <- p:
			pages = append(pages, p)
		case <-ctx.Done():
			break send
		}
	}
	close(todo)
	wg.Wait()
	if fatal != nil {
		return nil, nil, fatal
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	var problems diag.List // in the order of the listing, whatever order they came in
	for _, p := range pages {
		if p.problem != "" {
			problems.Add(p.url, 0, p.problem)
		}
	}
	return pages, problems, nil
}

// agrees checks page p, of those read at limit, against the listing's
// count and its first page: another count is the listing changing
// (errChanged); more articles than asked or a next link of another limit,
// a contradiction. Then it holds what the import will make of p.
func agrees(f *fetcher, p *page, limit, count int, first *page) error {
	if p.count != count {
		return fmt.Errorf("%w (count %d, then %d on %s)", errChanged, count, p.count, p.url)
	}
	if what := contradiction(p, limit, count, false); what != "" {
		return contradicts(p, what, "its page "+first.url)
	}
	if err := f.hold(madeOf(p)); err != nil {
		return fmt.Errorf("%s: %w", p.url, err)
	}
	return nil
}

// answerError is an answer that is not a page of the listing.
type answerError struct{ err error }

func (e *answerError) Error() string { return e.err.Error() }
func (e *answerError) Unwrap() error { return e.err }

// answered reports whether err is an answer of the service (another
// status than 200, or a body that is not a page), rather than no answer.
func answered(err error) bool {
	var se *statusError
	var ne *notJSONError
	var ae *answerError
	return errors.As(err, &se) || errors.As(err, &ne) || errors.As(err, &ae)
}
