package main

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/importer"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/spf13/cobra"
)

// importOptions are the options of feedgen import.
type importOptions struct {
	*globalOptions
	url       string
	out       string
	delay     time.Duration
	workers   int
	retries   int
	timezone  string
	layout    string
	limits    []int
	offsets   string
	keepGoing bool
	quiet     bool
	timeout   time.Duration
	maxReqs   int
	maxBytes  string

	set   func(flag string) bool // whether the flag was given
	now   func() time.Time       // the build time: set by check
	bytes int64                  // --max-bytes: set by check
}

// check refuses a URL that is not a listing's, flags out of range, and a
// folder that is not empty.
func (o *importOptions) check() error {
	if _, err := importer.ListURL(o.url); err != nil {
		return usageError{err}
	}
	switch {
	case o.workers < 1:
		return usageError{fmt.Errorf("--workers %d: read at least one page at a time", o.workers)}
	case o.delay < 0:
		return usageError{fmt.Errorf("--delay %v is negative", o.delay)}
	case o.retries < 0:
		return usageError{fmt.Errorf("--retries %d is negative", o.retries)}
	case o.timeout <= 0:
		return usageError{fmt.Errorf("--timeout %v: give a duration, e.g. 30s", o.timeout)}
	case o.maxReqs < 1:
		return usageError{fmt.Errorf("--max-requests %d: give 1 or more", o.maxReqs)}
	case o.offsets != listing.OffsetsAll && o.offsets != listing.OffsetsAligned:
		return usageError{fmt.Errorf("--offsets %q: want %q or %q", o.offsets, listing.OffsetsAll, listing.OffsetsAligned)}
	case o.layout != layout.ChunksName && o.layout != layout.PagesName:
		return usageError{fmt.Errorf("--layout %q: want %q or %q", o.layout, layout.ChunksName, layout.PagesName)}
	case o.layout == layout.ChunksName && (o.set("limits") || o.set("offsets")):
		return usageError{errors.New("--limits and --offsets are of --layout pages (a file per page): the default, chunks, answers every page size up to the service's largest at every offset")}
	}
	for _, l := range o.limits {
		if l <= 0 {
			return usageError{fmt.Errorf("--limits %d: a page size is a positive whole number", l)}
		}
	}
	if _, err := time.LoadLocation(o.timezone); err != nil || o.timezone == "" {
		return usageError{fmt.Errorf("--timezone %q: unknown time zone: use an IANA name such as Europe/Moscow or UTC", o.timezone)}
	}
	n, err := config.ParseSize(o.maxBytes)
	switch {
	case err != nil:
		return usageError{fmt.Errorf("--max-bytes %q: %w: give a size, e.g. 1GiB or 500MB", o.maxBytes, err)}
	case n <= 0:
		return usageError{fmt.Errorf("--max-bytes %q: give a size above 0, e.g. 1GiB or 500MB", o.maxBytes)}
	}
	o.bytes = n
	if err := importer.CheckDir(o.out); err != nil {
		return usageError{err}
	}
	o.now, err = buildTime(o.getenv)
	return err
}

// runImport reads the listing, writes the site, and says what it wrote.
func runImport(ctx context.Context, o *importOptions) error {
	start := time.Now()
	retries := o.retries
	if retries == 0 {
		retries = -1 // none: the importer's 0 is its default
	}
	opt := importer.Options{
		URL:         o.url,
		UserAgent:   "feedgen-import/" + o.version,
		Workers:     o.workers,
		Delay:       o.delay,
		Retries:     retries,
		Timezone:    o.timezone,
		Layout:      o.layout,
		Limits:      o.limits,
		Offsets:     o.offsets,
		KeepGoing:   o.keepGoing,
		Now:         o.now,
		Log:         o.stderr,
		Timeout:     o.timeout,
		MaxRequests: o.maxReqs,
		MaxBytes:    o.bytes,
	}
	// The import holds about --max-bytes: the collector keeps the heap
	// near it, rather than at twice what is held.
	defer debug.SetMemoryLimit(debug.SetMemoryLimit(importer.MemoryLimit(o.bytes)))
	if !o.quiet {
		bar := newProgressOf(o.stderr, "reading articles")
		defer bar.Close()
		opt.Progress = bar.Set
	}
	s, err := importer.Import(ctx, opt)
	if err != nil {
		return err
	}
	if err := s.Write(o.out); err != nil {
		return fmt.Errorf("writing the site: %w", err)
	}
	if len(s.Refused) > 0 {
		s.Refused.Print(o.stderr, "feedgen: %s, left out (--keep-going): the build will differ from the service")
	}
	if o.quiet {
		return nil
	}
	inline := ""
	if s.InlineAuthors > 0 {
		inline = fmt.Sprintf(" (%d with an inline author)", s.InlineAuthors)
	}
	fmt.Fprintf(o.stdout, "imported %s of %d from %s in %s, %s\n", human.Plural(s.Articles, "article"), s.Count, o.url,
		time.Since(start).Round(time.Millisecond), human.Plural(s.Requests, "request"))
	fmt.Fprintf(o.stdout, "wrote %s (%s, %s, %s) and %s under %s%s\n",
		filepath.Join(o.out, "config.yaml"), human.Plural(s.Sections, "section"), categories(s.Categories),
		human.Plural(s.Authors, "author"), human.Plural(s.Articles, "article file"), filepath.Join(o.out, "content"), inline)
	if s.Pages > 0 {
		what := "pages"
		if s.Layout == layout.ChunksName {
			what = "chunks"
		}
		fmt.Fprintf(o.stdout, "checked: the site gives the %s read, byte for byte (limits %d and %d; about %s of %s to build)\n",
			human.Plural(s.Pages, "page"), s.DefaultLimit, s.MaxLimit, human.Bytes(s.Estimate), what)
	}
	return nil
}

// categories writes n categories.
func categories(n int) string {
	if n == 1 {
		return "1 category"
	}
	return fmt.Sprintf("%d categories", n)
}

func newImportCmd(g *globalOptions) *cobra.Command {
	o := &importOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "import URL",
		Short: "Make a site of a live listing: config.yaml and content/ that build to its pages",
		Long: `Import reads every page of a live article listing, such as the dynamic service
feedgen replaces (URL is its /articles/), at its largest page size, and writes
DIR/config.yaml and DIR/content/<section>/<section_slug>/<slug>.md so that
"feedgen build" in DIR gives the service's pages byte for byte: site_url,
base_url, sections and their names, authors (keyed by their profile URLs), the
default and largest page size, and every field of every article as written.

Before writing, it reads the site back as a build would and compares every
article, and every page it read, with the service's answer. What it cannot
keep exact (a URL that does not fit {site_url}/{section}/{section_slug}/{slug}/,
two articles on one path, a slug that cannot be a file name, a value the
service writes otherwise than feedgen) is reported with the article's id or
the page's URL, and nothing is written, unless --keep-going leaves it out.
Failed requests are tried again, and so is a request that goes --timeout
without an answer; a listing whose count changes while it is read is read
once more. An import makes at most --max-requests requests and holds at most
--max-bytes: the pages read and what it makes of their articles (about 5 kB
an article of 500 bytes). A listing that needs more is refused, before its
pages are read when its count tells; one whose pages contradict its first
(another count, more articles than asked, links of another page size) is
stopped there. DIR must be empty or not exist.

Published times are kept as written, in --timezone (default UTC): an article
later than now there would be left out of a build as scheduled, and is
refused; pass the service's time zone. SOURCE_DATE_EPOCH, when set, is now,
as for feedgen build.

The site's pagination is that of feedgen new site, layout: chunks: every page
size up to the service's largest at every offset, as the service answers, put
together per request (feedgen serve, feedgen rules nginx-njs, cloudflare,
netlify). --layout pages writes a file per page instead, for a plain file
server: the default and largest page sizes, --limits adds others, and
--offsets aligned keeps only the offsets next links reach.

The listing does not show bodies, drafts, scheduled articles, the service's
time zone or filters: add them after.`,
		Example: `  feedgen import https://api.example.com/articles/ -o site && cd site && feedgen build
  feedgen import http://127.0.0.1:8080/articles/ -o copy --timezone Europe/Moscow   # a feedgen serve
  feedgen import https://api.example.com/articles/ -o site --layout pages --limits 50 --offsets aligned
  feedgen import https://api.example.com/articles/ -o site --delay 200ms --workers 1`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usageError{fmt.Errorf("%s takes one URL, the listing's (e.g. https://api.example.com/articles/), got %q", cmd.CommandPath(), args)}
			}
			o.url, o.set = args[0], cmd.Flags().Changed
			return checkRun(cmd.Context(), o, runImport)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.out, "out", "o", ".", "the folder to write the site into: empty or new")
	f.DurationVar(&o.delay, "delay", 0, "wait at least this long between the starts of two requests, e.g. 200ms")
	f.IntVar(&o.workers, "workers", importer.DefaultWorkers, "pages read at once")
	f.IntVar(&o.retries, "retries", importer.DefaultRetries, "times a failed request (network error, 5xx, 408, 429) is tried again")
	f.StringVar(&o.timezone, "timezone", importer.DefaultTimezone, "the time zone to write in config.yaml: the service's, if known")
	f.StringVar(&o.layout, "layout", layout.ChunksName, `pagination.layout to write: "chunks" (every page size at every offset, put together per request) or "pages" (a file per page)`)
	f.IntSliceVar(&o.limits, "limits", nil, "with --layout pages: page sizes to pre-render besides the default and the largest, e.g. 50")
	f.StringVar(&o.offsets, "offsets", listing.OffsetsAll, `with --layout pages: offsets to pre-render, "all" (as the service answers) or "aligned"`)
	f.BoolVar(&o.keepGoing, "keep-going", false, "leave out what cannot be kept exact, and write the rest")
	f.DurationVar(&o.timeout, "timeout", importer.DefaultTimeout, "how long a request may go without an answer before it is tried again")
	f.IntVar(&o.maxReqs, "max-requests", importer.DefaultMaxRequests, "the most requests the import may make, retries included")
	f.StringVar(&o.maxBytes, "max-bytes", "1GiB", "the most memory the import may hold: pages read and the site made of them (about 5 kB an article)")
	f.BoolVarP(&o.quiet, "quiet", "q", false, "print only warnings and errors")
	return cmd
}
