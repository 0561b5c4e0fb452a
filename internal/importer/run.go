package importer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"runtime/debug"
	"time"

	"github.com/feedgen/feedgen/internal/buildinfo"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/progress"
)

// Request is an import as feedgen import's command line gives it: Run
// checks it, imports the listing and writes the site.
type Request struct {
	URL, Out         string // the listing's URL; the folder to write the site into
	UserAgent        string
	Delay, Timeout   time.Duration
	Workers, Retries int // Retries 0: none
	MaxRequests      int
	MaxBytes         string // a size, e.g. 1GiB
	Timezone, Layout string
	Limits           []int
	Offsets          string
	// LimitsGiven says --limits or --offsets was given: they are of
	// --layout pages.
	LimitsGiven bool
	KeepGoing   bool
	// Quiet draws no progress bar.
	Quiet bool
	// Getenv reads SOURCE_DATE_EPOCH, now when set.
	Getenv func(string) string
	// Log receives warnings, what was left out and the progress bar.
	Log io.Writer
	// LimitMemory sets the runtime's soft memory limit for the import's
	// duration (see MemoryLimit): for a command, which owns its process.
	LimitMemory bool
}

// FlagError is a Request that is not one: a bad command line.
type FlagError struct{ Err error }

func (e FlagError) Error() string { return e.Err.Error() }
func (e FlagError) Unwrap() error { return e.Err }

// Run checks req (a FlagError when it is not one), reads the listing and
// writes the site into req.Out, and says on req.Log what was left out.
func Run(ctx context.Context, req Request) (*Site, error) {
	opt, err := req.options()
	if err != nil {
		return nil, FlagError{err}
	}
	if req.LimitMemory {
		// The import holds about --max-bytes: the collector keeps the
		// heap near it, rather than at twice what is held.
		defer debug.SetMemoryLimit(debug.SetMemoryLimit(MemoryLimit(opt.MaxBytes)))
	}
	if !req.Quiet {
		bar := progress.New(req.Log, "reading articles")
		defer bar.Close()
		opt.Progress = bar.Set
	}
	s, err := Import(ctx, opt)
	if err != nil {
		return nil, err
	}
	if err := s.Write(req.Out); err != nil {
		return nil, fmt.Errorf("writing the site: %w", err)
	}
	if len(s.Refused) > 0 {
		s.Refused.Print(req.Log, "feedgen: %s, left out (--keep-going): the build will differ from the service")
	}
	return s, nil
}

// options refuses a URL that is not a listing's, flags out of range, and
// a folder that is not empty; else it returns the import's options.
func (r Request) options() (Options, error) {
	if _, err := ListURL(r.URL); err != nil {
		return Options{}, err
	}
	if err := r.checkFlags(); err != nil {
		return Options{}, err
	}
	n, err := config.ParseSize(r.MaxBytes)
	switch {
	case err != nil:
		return Options{}, fmt.Errorf("--max-bytes %q: %w: give a size, e.g. 1GiB or 500MB", r.MaxBytes, err)
	case n <= 0:
		return Options{}, fmt.Errorf("--max-bytes %q: give a size above 0, e.g. 1GiB or 500MB", r.MaxBytes)
	}
	if err := CheckDir(r.Out); err != nil {
		return Options{}, err
	}
	now, err := buildinfo.Clock(r.Getenv)
	if err != nil {
		return Options{}, err
	}
	retries := r.Retries
	if retries == 0 {
		retries = -1 // none: Options' 0 is its default
	}
	return Options{
		URL: r.URL, UserAgent: r.UserAgent, Workers: r.Workers, Delay: r.Delay, Retries: retries,
		Timezone: r.Timezone, Layout: r.Layout, Limits: r.Limits, Offsets: r.Offsets, KeepGoing: r.KeepGoing,
		Now: now, Log: r.Log, Timeout: r.Timeout, MaxRequests: r.MaxRequests, MaxBytes: n,
	}, nil
}

// checkFlags refuses numbers out of range, an unknown layout, offsets
// mode or time zone, and the flags of --layout pages with chunks.
func (r Request) checkFlags() error {
	lay, known := layout.Named(r.Layout)
	switch {
	case r.Workers < 1:
		return fmt.Errorf("--workers %d: read at least one page at a time", r.Workers)
	case r.Delay < 0:
		return fmt.Errorf("--delay %v is negative", r.Delay)
	case r.Retries < 0:
		return fmt.Errorf("--retries %d is negative", r.Retries)
	case r.Timeout <= 0:
		return fmt.Errorf("--timeout %v: give a duration, e.g. 30s", r.Timeout)
	case r.MaxRequests < 1:
		return fmt.Errorf("--max-requests %d: give 1 or more", r.MaxRequests)
	case r.Offsets != listing.OffsetsAll && r.Offsets != listing.OffsetsAligned:
		return fmt.Errorf("--offsets %q: want %q or %q", r.Offsets, listing.OffsetsAll, listing.OffsetsAligned)
	case !known || r.Layout == "":
		return fmt.Errorf("--layout %q: want %q or %q", r.Layout, layout.ChunksName, layout.PagesName)
	case lay.EveryPage && r.LimitsGiven:
		return errors.New("--limits and --offsets are of --layout pages (a file per page): the default, chunks, answers every page size up to the service's largest at every offset")
	}
	for _, l := range r.Limits {
		if l <= 0 {
			return fmt.Errorf("--limits %d: a page size is a positive whole number", l)
		}
	}
	if _, err := time.LoadLocation(r.Timezone); err != nil || r.Timezone == "" {
		return fmt.Errorf("--timezone %q: unknown time zone: use an IANA name such as Europe/Moscow or UTC", r.Timezone)
	}
	return nil
}

// Summary is what feedgen import says of the site it wrote into dir
// from the listing at url, in d: a line or three.
func (s *Site) Summary(dir, url string, d time.Duration) string {
	inline := ""
	if s.InlineAuthors > 0 {
		inline = fmt.Sprintf(" (%d with an inline author)", s.InlineAuthors)
	}
	out := fmt.Sprintf("imported %s of %d from %s in %s, %s\n", human.Plural(s.Articles, "article"), s.Count, url,
		d.Round(time.Millisecond), human.Plural(s.Requests, "request"))
	out += fmt.Sprintf("wrote %s (%s, %s, %s) and %s under %s%s\n",
		filepath.Join(dir, "config.yaml"), human.Plural(s.Sections, "section"), categories(s.Categories),
		human.Plural(s.Authors, "author"), human.Plural(s.Articles, "article file"), filepath.Join(dir, "content"), inline)
	if s.Pages > 0 {
		what := "pages"
		if s.Layout == layout.ChunksName {
			what = "chunks"
		}
		out += fmt.Sprintf("checked: the site gives the %s read, byte for byte (limits %d and %d; about %s of %s to build)\n",
			human.Plural(s.Pages, "page"), s.DefaultLimit, s.MaxLimit, human.Bytes(s.Estimate), what)
	}
	return out
}
