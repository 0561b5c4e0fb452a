package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/feedgen/feedgen/internal/importer"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/spf13/cobra"
)

// importOptions are the options of feedgen import: importer.Run's
// request, and how to print what it did.
type importOptions struct {
	*globalOptions
	req importer.Request
}

// runImport reads the listing, writes the site, and says what it wrote.
func runImport(ctx context.Context, o *importOptions) error {
	start := time.Now()
	s, err := importer.Run(ctx, o.req)
	var fe importer.FlagError
	if errors.As(err, &fe) {
		return usageError{fe.Err}
	}
	if err != nil || o.req.Quiet {
		return err
	}
	_, err = fmt.Fprint(o.stdout, s.Summary(o.req.Out, o.req.URL, time.Since(start)))
	return err
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
			set := cmd.Flags().Changed
			o.req.URL, o.req.LimitsGiven = args[0], set("limits") || set("offsets")
			o.req.UserAgent, o.req.Getenv, o.req.Log, o.req.LimitMemory = "feedgen-import/"+o.version, o.getenv, o.stderr, true
			return runImport(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&o.req.Out, "out", "o", ".", "the folder to write the site into: empty or new")
	f.DurationVar(&o.req.Delay, "delay", 0, "wait at least this long between the starts of two requests, e.g. 200ms")
	f.IntVar(&o.req.Workers, "workers", importer.DefaultWorkers, "pages read at once")
	f.IntVar(&o.req.Retries, "retries", importer.DefaultRetries, "times a failed request (network error, 5xx, 408, 429) is tried again")
	f.StringVar(&o.req.Timezone, "timezone", importer.DefaultTimezone, "the time zone to write in config.yaml: the service's, if known")
	f.StringVar(&o.req.Layout, "layout", layout.ChunksName, `pagination.layout to write: "chunks" (every page size at every offset, put together per request) or "pages" (a file per page)`)
	f.IntSliceVar(&o.req.Limits, "limits", nil, "with --layout pages: page sizes to pre-render besides the default and the largest, e.g. 50")
	f.StringVar(&o.req.Offsets, "offsets", listing.OffsetsAll, `with --layout pages: offsets to pre-render, "all" (as the service answers) or "aligned"`)
	f.BoolVar(&o.req.KeepGoing, "keep-going", false, "leave out what cannot be kept exact, and write the rest")
	f.DurationVar(&o.req.Timeout, "timeout", importer.DefaultTimeout, "how long a request may go without an answer before it is tried again")
	f.IntVar(&o.req.MaxRequests, "max-requests", importer.DefaultMaxRequests, "the most requests the import may make, retries included")
	f.StringVar(&o.req.MaxBytes, "max-bytes", "1GiB", "the most memory the import may hold: pages read and the site made of them (about 5 kB an article)")
	f.BoolVarP(&o.req.Quiet, "quiet", "q", false, "print only warnings and errors")
	return cmd
}
