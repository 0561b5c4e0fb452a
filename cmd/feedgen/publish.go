package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/spf13/cobra"
)

// publishOptions are the options of feedgen publish: publish.Run's
// request, and how to print what it did.
type publishOptions struct {
	*globalOptions
	req  publish.Request
	json bool // the summary as JSON (jsonout.go)
}

// runPublish uploads the build in the folder to the bucket, and prints
// what it did: with --json, one object, also on a failure (a bad command
// line included: a CI reads stdout).
func runPublish(ctx context.Context, o *publishOptions) error {
	start := time.Now()
	var rep publish.Report
	var err error
	if o.req.WorkDir, err = os.Getwd(); err == nil {
		rep, err = publish.Run(ctx, o.req)
	}
	var fe publish.FlagError
	if errors.As(err, &fe) {
		err = usageError{fe.Err}
	}
	if o.json {
		if jerr := writeJSON(o.stdout, newPublishJSON(o.req.URL, rep.Bucket, o.req.DryRun, rep.Result, err, time.Since(start))); err == nil {
			err = jerr
		}
		return err
	}
	if err == nil && (!o.req.Quiet || o.req.DryRun) {
		fmt.Fprintln(o.stdout, rep.Result.Summary())
	}
	return err
}

// compare is build.Compare, which publish.Run is given: publish does not
// import the package that makes a build.
func compare(ctx context.Context, configFile string, m *manifest.Manifest, now time.Time) (publish.Changes, error) {
	ch, err := build.Compare(ctx, configFile, m, now)
	return publish.Changes(ch), err
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
			start, set := time.Now(), cmd.Flags().Changed
			o.req.DirGiven, o.req.ConfigGiven = set("dir"), set("config")
			o.req.JSON, o.req.Getenv, o.req.Compare = o.json, o.getenv, compare
			o.req.Stdout, o.req.Stderr = o.stdout, o.stderr
			if len(args) != 1 {
				err := usageError{fmt.Errorf("%s takes one BUCKET_URL, e.g. s3://BUCKET?region=us-east-1, got %d arguments", cmd.CommandPath(), len(args))}
				if o.json {
					writeJSON(o.stdout, newPublishJSON(o.req.URL, nil, o.req.DryRun, nil, err, time.Since(start)))
				}
				return err
			}
			o.req.URL = args[0]
			return runPublish(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVarP(&o.req.Dir, "dir", "d", "", "the output folder of the build to publish (default: output_dir of the config, else public)")
	cmd.Flags().StringVarP(&o.req.Config, "config", "c", "", "the site's config file, or its folder, for output_dir and publish.cache_control (default: config.yaml here or in the nearest folder above)")
	cmd.Flags().BoolVarP(&o.req.DryRun, "dry-run", "n", false, "print what would be uploaded and deleted, and change nothing")
	cmd.Flags().BoolVar(&o.req.Full, "full", false, "trust no manifest in the bucket: list articles/ and check every page there (a request per page)")
	cmd.Flags().IntVar(&o.req.MaxDeletes, "max-deletes", publish.DefaultMaxDeletes, "stop, changing nothing, when more objects than this would be deleted")
	cmd.Flags().IntVar(&o.req.Workers, "workers", publish.DefaultWorkers, "how many uploads run at once")
	cmd.Flags().DurationVar(&o.req.Timeout, "timeout", publish.DefaultTimeout, "how long a request may go without progress (nothing more of an upload sent, nothing more of its answer) before it is tried again")
	cmd.Flags().DurationVar(&o.req.ConnectTimeout, "connect-timeout", publish.DefaultConnectTimeout, "how long a request may wait for the first byte of its answer, once it is sent, before it is tried again")
	cmd.Flags().DurationVar(&o.req.LockWait, "lock-wait", publish.DefaultLockWait, "how long to wait for another publish to the bucket to finish (0: fail at once)")
	cmd.Flags().BoolVar(&o.req.Strict, "strict", false, "refuse a build older than its site (content or config changed since, or a scheduled article came due): exit 1, publish nothing; with --dir, give --config too")
	cmd.Flags().BoolVarP(&o.req.Quiet, "quiet", "q", false, "print only errors")
	cmd.Flags().BoolVar(&o.json, "json", false, "print the summary as one JSON object (url, scheme, bucket, prefix, ok, error, dry_run, uploaded, uploaded_bytes, unchanged, deleted, kept, seconds), also on a failure")
	return cmd
}
