package publish

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/feedgen/feedgen/internal/buildinfo"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/progress"
)

// Request is a publish as feedgen publish's command line gives it: Run
// checks it, finds the build and its site, opens the bucket and
// publishes.
type Request struct {
	URL string // BUCKET_URL
	// Dir and Config are --dir and --config; DirGiven and ConfigGiven
	// say whether they were given (see outdir.Find).
	Dir, Config           string
	DirGiven, ConfigGiven bool
	DryRun, Full, Strict  bool
	// Quiet prints only errors; JSON keeps Stdout for the caller's one
	// JSON object.
	Quiet, JSON                       bool
	MaxDeletes, Workers               int
	Timeout, ConnectTimeout, LockWait time.Duration // LockWait 0: fail at once
	// WorkDir is where the command runs: what paths are said relative to.
	WorkDir string
	// Getenv reads the environment: SOURCE_DATE_EPOCH, and the
	// credentials a failure's hint names.
	Getenv func(string) string
	// Compare tells how the site of the config file differs from the
	// build of manifest m, at now (build.Compare: publish does not
	// import the package that makes a build).
	Compare func(ctx context.Context, configFile string, m *manifest.Manifest, now time.Time) (Changes, error)
	// Stdout and Stderr are where the publish speaks.
	Stdout, Stderr io.Writer
}

// Report is what Run did: the bucket the URL names (nil when it is not
// one), and the publish's result (nil when it did not run).
type Report struct {
	Bucket *Bucket
	Result *Result
}

// FlagError is a Request that is not one: a bad command line.
type FlagError struct{ Err error }

func (e FlagError) Error() string { return e.Err.Error() }
func (e FlagError) Unwrap() error { return e.Err }

// run is a checked Request, with what was found for it.
type run struct {
	Request
	bucket       *Bucket
	cacheControl string         // from the config
	cfg          *config.Config // the config found, if any
	site         *config.Config // the site whose build this is, when known
	now          func() time.Time
}

// Run publishes the build of req.Dir (or of the site's config) to the
// bucket of req.URL: it prints what it does, and on a failure what the
// person can do about it, but not the summary line (Result.Summary),
// which is the caller's. A FlagError is a bad Request.
func Run(ctx context.Context, req Request) (Report, error) {
	r := &run{Request: req}
	err := r.check()
	rep := Report{Bucket: r.bucket}
	if err != nil {
		return rep, err
	}
	rep.Result, err = r.publish(ctx)
	return rep, err
}

// check refuses a BUCKET_URL that is not one, and bad numbers; it finds
// the site's config (publish.cache_control) and, without Dir, the
// output folder in it (see outdir.Find).
func (r *run) check() error {
	b, err := ParseBucketURL(r.URL)
	if err != nil {
		return FlagError{err}
	}
	r.bucket = b
	if err := r.checkNumbers(); err != nil {
		return FlagError{err}
	}
	dir, cfgPath, err := outdir.Find(r.Dir, r.DirGiven, r.Config, r.ConfigGiven, r.WorkDir)
	if err != nil {
		return err
	}
	r.Dir, r.cacheControl = dir, config.DefaultCacheControl
	if cfgPath != "" {
		if r.cfg, err = config.ReadFile(cfgPath); err != nil {
			return err
		}
		r.cacheControl = r.cfg.Publish.CacheControl
		// A build named by --dir alone may be of another site.
		if !r.DirGiven || r.ConfigGiven {
			r.site = r.cfg
		}
	}
	if r.Strict && r.site == nil {
		why := "no " + config.FileName + " was found here or in a folder above: pass --config FILE (the site's " + config.FileName + ")"
		if cfgPath != "" {
			why = "--dir alone does not say which site it is: pass --config FILE (the site's " + config.FileName + ") too"
		}
		return FlagError{errors.New("--strict compares the build with its site, and " + why)}
	}
	if r.now, err = buildinfo.Clock(r.Getenv); err != nil {
		return FlagError{err}
	}
	return nil
}

// checkNumbers refuses numbers and durations out of range.
func (r *run) checkNumbers() error {
	switch {
	case r.MaxDeletes < 0:
		return fmt.Errorf("--max-deletes %d: give 0 or more", r.MaxDeletes)
	case r.Workers < 1:
		return fmt.Errorf("--workers %d: give 1 or more", r.Workers)
	case r.Timeout <= 0:
		return fmt.Errorf("--timeout %v: give a duration, e.g. 60s", r.Timeout)
	case r.ConnectTimeout <= 0:
		return fmt.Errorf("--connect-timeout %v: give a duration, e.g. 10s", r.ConnectTimeout)
	case r.LockWait < 0:
		return fmt.Errorf("--lock-wait %v is negative: give 0 not to wait", r.LockWait)
	}
	return nil
}

// options are the publish's options, as the request says.
func (r *run) options() Options {
	po := Options{
		CacheControl:   r.cacheControl,
		Workers:        r.Workers,
		MaxDeletes:     r.MaxDeletes,
		DryRun:         r.DryRun,
		Full:           r.Full,
		Log:            r.Stdout,
		Timeout:        r.Timeout,
		ConnectTimeout: r.ConnectTimeout,
		LockWait:       r.LockWait,
	}
	if r.JSON {
		po.Log = r.Stderr // stdout holds the JSON alone
	}
	if po.LockWait == 0 {
		po.LockWait = -1 // not at all: the library's 0 is its default
	}
	if !r.Quiet && !r.JSON {
		po.Notices = r.Stderr
	}
	return po
}

// openOptions are how the bucket is opened, as the request says.
func (r *run) openOptions(po Options) OpenOptions {
	oo := OpenOptions{Options: po, OutputDir: r.Dir, Say: r.Stderr, Quiet: r.Quiet}
	if r.cfg != nil {
		oo.ContentDir, oo.ConfigFile = r.cfg.ContentDir, r.cfg.Path
	}
	if r.DryRun {
		oo.Where = r.Stdout
		if r.JSON {
			oo.Where = r.Stderr // stdout holds the JSON alone
		}
	}
	return oo
}

// behind is how the build is compared with its site.
func (r *run) behind() Behind {
	rebuild := "feedgen build"
	if r.ConfigGiven {
		rebuild += " --config " + r.Config
	}
	if r.DirGiven {
		rebuild += " --out " + r.Dir
	}
	return Behind{
		Compare: func(ctx context.Context, m *manifest.Manifest) (Changes, error) {
			return r.Compare(ctx, r.site.Path, m, r.now())
		},
		ContentDir: r.site.ContentDir, ConfigFile: r.site.Path, Dir: r.Dir, WorkDir: r.WorkDir,
		Rebuild: rebuild, Strict: r.Strict, Warn: r.Stderr,
	}
}

// publish uploads the build in the folder to the bucket.
func (r *run) publish(ctx context.Context) (res *Result, err error) {
	root, err := os.OpenRoot(r.Dir)
	if err != nil {
		return nil, fmt.Errorf("opening output folder: %w", err)
	}
	defer root.Close()
	output := outfile.RootFS(root, r.Dir)
	po := r.options()
	if r.site != nil {
		// Compared while the bucket is opened and the build read, and
		// waited for before the bucket is touched: by Publish before it
		// reads or locks it, by Open before it makes a folder (see
		// Options.Ready).
		wait, stop := r.behind().Start(ctx, output)
		waited := false
		po.Ready = func() error {
			waited = true
			return wait()
		}
		defer func() {
			if !waited {
				stop()
			}
		}()
	}
	t, err := Open(ctx, r.URL, r.openOptions(po))
	var ue *URLError
	if errors.As(err, &ue) {
		return nil, FlagError{err}
	}
	if err != nil {
		return nil, r.explain(err, nil)
	}
	defer func() { t.Close(err) }()
	if !r.Quiet && !r.JSON && !r.DryRun {
		bar := progress.New(r.Stderr, "publishing pages")
		defer bar.Close()
		po.Progress, po.Notices = bar.Set, bar.Lines()
	}
	res, err = Publish(ctx, t.Bucket, output, t.Options(po))
	if err != nil {
		return res, r.explain(err, res)
	}
	return res, nil
}

// explain adds to a failed publish what the person can do about it.
func (r *run) explain(err error, res *Result) error {
	var tm *TooManyDeletesError
	if errors.As(err, &tm) {
		return fmt.Errorf("publishing %s would delete %s from the bucket, more than --max-deletes %d: nothing was changed; check the build, or pass --max-deletes %d",
			r.Dir, human.Plural(tm.Deletes, tm.Noun), tm.Max, tm.Deletes)
	}
	if hint := r.bucket.Hint(err, r.Getenv); hint != "" {
		err = fmt.Errorf("%w\n%s", err, hint)
	}
	if hint := r.bucket.ThrottleHint(err, r.Workers); hint != "" {
		err = fmt.Errorf("%w\n%s", err, hint)
	}
	var then string
	switch {
	case res == nil || res.DryRun: // a dry run uploads nothing
	case res.Uploaded > 0 && !res.ManifestUploaded && !res.HadManifest:
		then = fmt.Sprintf("%s uploaded; the bucket has no manifest.json yet and nothing was deleted: publish again", human.Plural(res.Uploaded, res.noun()))
	case res.Uploaded > 0 && !res.ManifestUploaded:
		then = fmt.Sprintf("%s uploaded; the bucket's manifest.json is still the previous one and nothing was deleted: publish again", human.Plural(res.Uploaded, res.noun()))
	case res.ManifestUploaded:
		then = fmt.Sprintf("the build's manifest.json is in the bucket, and %s of the stale ones deleted: publish again to delete the rest", human.Plural(res.Deleted, res.noun()))
	}
	if then == "" {
		return err
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(r.Stderr, then) // the caller says it was interrupted
		return err
	}
	return fmt.Errorf("%w\n%s", err, then)
}

// noun names the objects a publish moves: the pages of a build, or the
// files (chunks and indexes) of one in the chunks layout.
func (r *Result) noun() string {
	if r.Chunked {
		return "file"
	}
	return "page"
}
