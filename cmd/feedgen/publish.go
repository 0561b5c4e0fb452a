package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/spf13/cobra"
)

// publishOptions are the options of feedgen publish.
type publishOptions struct {
	*globalOptions
	url, dir, config    string
	dryRun, full, quiet bool
	json                bool // the summary as JSON (jsonout.go)
	strict              bool
	maxDeletes, workers int
	timeout, lockWait   time.Duration
	connectTimeout      time.Duration
	set                 func(flag string) bool // whether the flag was given

	bucket       *publish.Bucket // where BUCKET_URL says: set by check
	cacheControl string          // from the config: set by check
	cfg          *config.Config  // the config found, if any: set by check
	site         *config.Config  // the site whose build this is, when known: set by check
	now          func() time.Time
}

// check refuses a BUCKET_URL that is not one, and bad numbers; it finds
// the site's config (publish.cache_control) and, without --dir, the
// output folder in it (see outdir.Find).
func (o *publishOptions) check() error {
	b, err := publish.ParseBucketURL(o.url)
	if err != nil {
		return usageError{err}
	}
	o.bucket = b
	if o.maxDeletes < 0 {
		return usageError{fmt.Errorf("--max-deletes %d: give 0 or more", o.maxDeletes)}
	}
	if o.workers < 1 {
		return usageError{fmt.Errorf("--workers %d: give 1 or more", o.workers)}
	}
	if o.timeout <= 0 {
		return usageError{fmt.Errorf("--timeout %v: give a duration, e.g. 60s", o.timeout)}
	}
	if o.connectTimeout <= 0 {
		return usageError{fmt.Errorf("--connect-timeout %v: give a duration, e.g. 10s", o.connectTimeout)}
	}
	if o.lockWait < 0 {
		return usageError{fmt.Errorf("--lock-wait %v is negative: give 0 not to wait", o.lockWait)}
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	dir, cfgPath, err := outdir.Find(o.dir, o.set("dir"), o.config, o.set("config"), cwd)
	if err != nil {
		return err
	}
	o.dir, o.cacheControl = dir, config.DefaultCacheControl
	if cfgPath != "" {
		if o.cfg, err = config.ReadFile(cfgPath); err != nil {
			return err
		}
		o.cacheControl = o.cfg.Publish.CacheControl
		// A build named by --dir alone may be of another site.
		if !o.set("dir") || o.set("config") {
			o.site = o.cfg
		}
	}
	if o.strict && o.site == nil {
		why := "no " + config.FileName + " was found here or in a folder above: pass --config FILE (the site's " + config.FileName + ")"
		if cfgPath != "" {
			why = "--dir alone does not say which site it is: pass --config FILE (the site's " + config.FileName + ") too"
		}
		return usageError{errors.New("--strict compares the build with its site, and " + why)}
	}
	if o.now, err = buildTime(o.getenv); err != nil {
		return err
	}
	return nil
}

// relTo returns path p relative to dir when it is under it, else p.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(r) {
		return r
	}
	return p
}

// runPublish uploads the build in the folder to the bucket, and prints
// what it did: with --json, one object, also on a failure.
func runPublish(ctx context.Context, o *publishOptions) error {
	start := time.Now()
	res, err := o.publish(ctx)
	if !o.json {
		return err
	}
	if jerr := writeJSON(o.stdout, newPublishJSON(o.url, o.bucket, o.dryRun, res, err, time.Since(start))); err == nil {
		err = jerr
	}
	return err
}

// options are the publish's options, as the flags say.
func (o *publishOptions) options() publish.Options {
	po := publish.Options{
		CacheControl:   o.cacheControl,
		Workers:        o.workers,
		MaxDeletes:     o.maxDeletes,
		DryRun:         o.dryRun,
		Full:           o.full,
		Log:            o.stdout,
		Timeout:        o.timeout,
		ConnectTimeout: o.connectTimeout,
		LockWait:       o.lockWait,
	}
	if o.json {
		po.Log = o.stderr // stdout holds the JSON alone
	}
	if po.LockWait == 0 {
		po.LockWait = -1 // not at all: the library's 0 is its default
	}
	if !o.quiet && !o.json {
		po.Notices = o.stderr
	}
	return po
}

// openOptions are how the bucket is opened, as the flags say.
func (o *publishOptions) openOptions(po publish.Options) publish.OpenOptions {
	oo := publish.OpenOptions{Options: po, OutputDir: o.dir, Say: o.stderr, Quiet: o.quiet}
	if o.cfg != nil {
		oo.ContentDir, oo.ConfigFile = o.cfg.ContentDir, o.cfg.Path
	}
	if o.dryRun {
		oo.Where = o.stdout
		if o.json {
			oo.Where = o.stderr // stdout holds the JSON alone
		}
	}
	return oo
}

// behind is how the build is compared with its site.
func (o *publishOptions) behind() publish.Behind {
	cwd, _ := os.Getwd()
	rebuild := "feedgen build"
	if o.set("config") {
		rebuild += " --config " + o.config
	}
	if o.set("dir") {
		rebuild += " --out " + o.dir
	}
	return publish.Behind{
		Compare: func(ctx context.Context, m *manifest.Manifest) (publish.Changes, error) {
			ch, err := build.Compare(ctx, o.site.Path, m, o.now())
			return publish.Changes(ch), err
		},
		ContentDir: o.site.ContentDir, ConfigFile: o.site.Path, Dir: o.dir, WorkDir: cwd,
		Rebuild: rebuild, Strict: o.strict, Warn: o.stderr,
	}
}

// publish uploads the build in the folder to the bucket; it prints the
// summary line but with --json.
func (o *publishOptions) publish(ctx context.Context) (res *publish.Result, err error) {
	root, err := os.OpenRoot(o.dir)
	if err != nil {
		return nil, fmt.Errorf("opening output folder: %w", err)
	}
	defer root.Close()
	output := outfile.RootFS(root, o.dir)
	if o.site != nil {
		if err := o.behind().Check(ctx, output); err != nil {
			return nil, err
		}
	}
	po := o.options()
	t, err := publish.Open(ctx, o.url, o.openOptions(po))
	var ue *publish.URLError
	if errors.As(err, &ue) {
		return nil, usageError{err}
	}
	if err != nil {
		return nil, o.explain(err, nil)
	}
	defer func() { t.Close(err) }()
	if !o.quiet && !o.json && !o.dryRun {
		bar := newProgressOf(o.stderr, "publishing pages")
		defer bar.Close()
		po.Progress, po.Notices = bar.Set, bar.Lines()
	}
	res, err = publish.Publish(ctx, t.Bucket, output, t.Options(po))
	if res != nil && res.Remote != "" && !o.quiet {
		fmt.Fprintf(o.stderr, "%s: checking the %ss it holds one by one\n", res.Remote, noun(res))
	}
	if err != nil {
		return res, o.explain(err, res)
	}
	if !o.json && (!o.quiet || o.dryRun) {
		fmt.Fprintln(o.stdout, res.Summary())
	}
	return res, nil
}

// explain adds to a failed publish what the person can do about it.
func (o *publishOptions) explain(err error, res *publish.Result) error {
	var tm *publish.TooManyDeletesError
	if errors.As(err, &tm) {
		return fmt.Errorf("publishing %s would delete %s from the bucket, more than --max-deletes %d: nothing was changed; check the build, or pass --max-deletes %d",
			o.dir, human.Plural(tm.Deletes, tm.Noun), tm.Max, tm.Deletes)
	}
	if hint := o.bucket.Hint(err, o.getenv); hint != "" {
		err = fmt.Errorf("%w\n%s", err, hint)
	}
	if hint := o.bucket.ThrottleHint(err, o.workers); hint != "" {
		err = fmt.Errorf("%w\n%s", err, hint)
	}
	var then string
	switch {
	case res == nil || res.DryRun: // a dry run uploads nothing
	case res.Uploaded > 0 && !res.ManifestUploaded && !res.HadManifest:
		then = fmt.Sprintf("%s uploaded; the bucket has no manifest.json yet and nothing was deleted: publish again", human.Plural(res.Uploaded, noun(res)))
	case res.Uploaded > 0 && !res.ManifestUploaded:
		then = fmt.Sprintf("%s uploaded; the bucket's manifest.json is still the previous one and nothing was deleted: publish again", human.Plural(res.Uploaded, noun(res)))
	case res.ManifestUploaded:
		then = fmt.Sprintf("the build's manifest.json is in the bucket, and %s of the stale ones deleted: publish again to delete the rest", human.Plural(res.Deleted, noun(res)))
	}
	if then == "" {
		return err
	}
	if errors.Is(err, context.Canceled) {
		fmt.Fprintln(o.stderr, then) // report says it was interrupted
		return err
	}
	return fmt.Errorf("%w\n%s", err, then)
}

// noun names the objects a publish moves: the pages of a build, or the
// files (chunks and indexes) of one in the chunks layout.
func noun(res *publish.Result) string {
	if res.Chunked {
		return "file"
	}
	return "page"
}

func newPublishCmd(g *globalOptions) *cobra.Command {
	o := &publishOptions{globalOptions: g}
	cmd := &cobra.Command{
		Use:   "publish BUCKET_URL",
		Short: "Upload the build to object storage: only what changed, manifest last",
		Long: `Publish uploads the build in --dir (by default the output_dir of the site's
config.yaml, here or in a folder above) to the bucket BUCKET_URL names, as
gocloud.dev opens it:

  s3://BUCKET?region=REGION                  Amazon S3
  s3://BUCKET/FOLDER/?region=REGION          under a folder of the bucket
                                             (prefix=FOLDER/ says the same)
  s3://BUCKET?endpoint=http://HOST:PORT&use_path_style=true&region=REGION
                                             an S3-compatible server
  gs://BUCKET                                Google Cloud Storage
  azblob://CONTAINER                         Azure Blob Storage
  file:///PATH                               a folder, a plain copy of the build
                                             that a web server serves as it is
                                             (created if it is not there)

It uploads that build as it is: in a site whose content or config changed
since the build (or with a scheduled article now due), it says so on stderr,
and that feedgen build comes first; with --strict (for CI) it publishes
nothing and exits 1. An S3-compatible server at an IP address
or localhost needs use_path_style=true.

Credentials are found as each cloud's SDK finds them (AWS_ACCESS_KEY_ID and
AWS_SECRET_ACCESS_KEY, GOOGLE_APPLICATION_CREDENTIALS, AZURE_STORAGE_ACCOUNT
and AZURE_STORAGE_KEY, ...).

Only the pages whose bytes the bucket does not hold are uploaded, known without
downloading a page: from the bucket's manifest.json when publish uploaded it,
else from a listing of articles/ and the SHA-256 publish stores with each page
(--full always does that). Pages go first, manifest.json last, then the pages
the build no longer has are deleted; an unchanged build uploads nothing.
In a bucket of a cloud, every object gets Content-Type: application/json and
the Cache-Control of the config's publish.cache_control (default "public,
max-age=60"); a folder keeps no headers (its web server gives them: see
feedgen rules).

A build of layout: chunks goes up as chunks, then indexes, then manifest.json.
Chunks never change (each is named by its bytes' SHA-256): they get
Cache-Control "public, max-age=31536000, immutable", and a chunk the build no
longer has is deleted only once the bucket's previous manifest does not name it
either, so that a cached index of the previous build still finds its chunks.

Two publishes to one bucket never run at once: a publish holds the bucket's
lock, the object .feedgen-publish-lock (on disk, the folder's flock, and
that file while a publish runs), and another one waits for it
(--lock-wait), or takes it over once its holder is gone (the lock unchanged
for 30s). A publish that stops half way (an error, Ctrl-C, killed) leaves
the previous manifest.json in place and the lock saying so: the next one
checks every page and finishes the job. A request that waits
--connect-timeout for the first byte of its answer once it is sent, or
makes no progress for --timeout (an upload's body going, its answer
coming; or runs past it at less than 1 kB/s), is tried again, and said;
then the publish fails. Nothing outside articles/, manifest.json and the lock is written or
deleted.`,
		Example: `  feedgen publish 's3://feed-bucket?region=eu-central-1'
  feedgen publish --dry-run 's3://feed-bucket?region=eu-central-1'
  feedgen publish --dir public 's3://feed?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1'
  feedgen publish 's3://feed-bucket/news/?region=eu-central-1'   # under news/
  feedgen publish gs://feed-bucket
  feedgen publish file:///srv/www/feed   # a folder a web server serves`,
		// The arguments are checked in RunE, so that --json prints a
		// usage error as JSON too.
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			start := time.Now()
			o.set = cmd.Flags().Changed
			err := error(usageError{fmt.Errorf("%s takes one BUCKET_URL, e.g. s3://BUCKET?region=us-east-1, got %d arguments", cmd.CommandPath(), len(args))})
			if len(args) == 1 {
				o.url = args[0]
				err = o.check()
			}
			if err != nil {
				if o.json {
					// As runPublish prints a failure: a CI reads stdout.
					writeJSON(o.stdout, newPublishJSON(o.url, o.bucket, o.dryRun, nil, err, time.Since(start)))
				}
				return err
			}
			return runPublish(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.dir, "dir", "d", "", "the output folder of the build to publish (default: output_dir of the config, else public)")
	cmd.Flags().StringVarP(&o.config, "config", "c", "", "the site's config file, or its folder, for output_dir and publish.cache_control (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVarP(&o.dryRun, "dry-run", "n", false, "print what would be uploaded and deleted, and change nothing")
	cmd.Flags().BoolVar(&o.full, "full", false, "trust no manifest in the bucket: list articles/ and check every page there (a request per page)")
	cmd.Flags().IntVar(&o.maxDeletes, "max-deletes", publish.DefaultMaxDeletes, "stop, changing nothing, when more objects than this would be deleted")
	cmd.Flags().IntVar(&o.workers, "workers", publish.DefaultWorkers, "how many uploads run at once")
	cmd.Flags().DurationVar(&o.timeout, "timeout", publish.DefaultTimeout, "how long a request may go without progress (nothing more of an upload sent, nothing more of its answer) before it is tried again")
	cmd.Flags().DurationVar(&o.connectTimeout, "connect-timeout", publish.DefaultConnectTimeout, "how long a request may wait for the first byte of its answer, once it is sent, before it is tried again")
	cmd.Flags().DurationVar(&o.lockWait, "lock-wait", publish.DefaultLockWait, "how long to wait for another publish to the bucket to finish (0: fail at once)")
	cmd.Flags().BoolVar(&o.strict, "strict", false, "refuse a build older than its site (content or config changed since, or a scheduled article came due): exit 1, publish nothing; with --dir, give --config too")
	cmd.Flags().BoolVarP(&o.quiet, "quiet", "q", false, "print only errors")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary as one JSON object (url, scheme, bucket, prefix, ok, error, dry_run, uploaded, uploaded_bytes, unchanged, deleted, kept, seconds), also on a failure")
	return cmd
}
