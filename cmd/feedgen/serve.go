package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/preview"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/server"
	"github.com/spf13/cobra"
	"gocloud.dev/gcerrors"
)

// serve has four modes, each with its options, check and run function:
// serveOptions (a build's output folder, --dir), serveBucketOptions (a
// build published to a bucket, --dir BUCKET_URL or $FEEDGEN_BUCKET_URL),
// serveBundleOptions (a bundle, --bundle) and previewOptions (a live
// preview, --watch).

// serveOptions are the options of serve --dir, which serves the build in
// an output folder.
type serveOptions struct {
	*globalOptions
	listen server.Listen
	dir    string
	config string                 // the site whose output_dir to serve, without --dir
	set    func(flag string) bool // whether the flag was given
}

// check refuses the flags of --watch and finds the folder: --dir, or the
// output_dir of the site's config (--config, or config.yaml here or in a
// folder above), or public.
func (o *serveOptions) check() error {
	if err := watchOnly(o.set); err != nil {
		return err
	}
	cwd, err := os.Getwd()
	if err != nil {
		return err
	}
	o.dir, _, err = outdir.Find(o.dir, o.set("dir"), o.config, o.set("config"), cwd)
	return err
}

// runServe serves the build in the folder.
func runServe(ctx context.Context, o *serveOptions) error {
	return server.ServeFolder(ctx, o.listen, o.dir)
}

// serveBucketOptions are the options of serve --dir BUCKET_URL, which
// serves the build published to a bucket.
type serveBucketOptions struct {
	*globalOptions
	listen    server.Listen
	url       string
	cacheSize string // --cache-size, as given
	poll      time.Duration
	set       func(flag string) bool // whether the flag was given
	fromEnv   bool                   // url is $FEEDGEN_BUCKET_URL's

	cacheBytes int64 // cacheSize, read
}

// minCacheSize is the smallest --cache-size.
const minCacheSize = 4 << 20

// bucketEnv names the environment variable of the BUCKET_URL serve serves
// without --dir (and --config): a container's image sets it.
const bucketEnv = "FEEDGEN_BUCKET_URL"

// isBucketURL reports whether --dir names a bucket (scheme://...), not
// a folder.
func isBucketURL(dir string) bool { return strings.Contains(dir, "://") }

// check refuses the flags of a folder's or a site's server and reads
// --cache-size and --poll.
func (o *serveBucketOptions) check() error {
	if err := watchOnly(o.set); err != nil {
		return err
	}
	if o.set("config") {
		return usageError{errors.New("--config and a bucket's --dir do not go together: serve --dir BUCKET_URL serves what was published there")}
	}
	n, err := humanize.ParseBytes(o.cacheSize)
	if err != nil || n > 1<<50 {
		return usageError{fmt.Errorf("--cache-size %q: want a size, e.g. 256MiB or 2GB", o.cacheSize)}
	}
	if n < minCacheSize {
		return usageError{fmt.Errorf("--cache-size %s: want 4MiB or more: a chunk or page is read whole", o.cacheSize)}
	}
	o.cacheBytes = int64(n)
	if o.poll <= 0 {
		return usageError{fmt.Errorf("--poll %v: want a duration above 0, e.g. 5s", o.poll)}
	}
	if _, err := publish.ParseBucketURL(o.url); err != nil {
		return usageError{o.named(err)}
	}
	return nil
}

// runServeBucket opens the bucket, as publish does, and serves the build
// published there, following the next ones.
func runServeBucket(ctx context.Context, o *serveBucketOptions) error {
	b, err := publish.ParseBucketURL(o.url)
	if err != nil {
		return err
	}
	// As many idle connections as reads a server makes at once: its
	// reads of bodies and of indexes ahead.
	bucket, err := b.Open(ctx, publish.Options{Notices: o.stderr, Workers: 48})
	var ue *publish.URLError
	if errors.As(err, &ue) {
		return usageError{o.named(err)}
	}
	if err == nil {
		defer bucket.Close()
		err = server.ServeBucket(ctx, o.listen, server.Bucket(b.String(), bucket, o.cacheBytes), o.poll)
	}
	switch {
	case err == nil:
	case gcerrors.Code(err) == gcerrors.PermissionDenied:
		err = fmt.Errorf("%w\nserving reads the bucket: it needs s3:GetObject and s3:ListBucket (S3), roles/storage.objectViewer (GCS), or Storage Blob Data Reader (Azure)", err)
	default:
		if hint := b.Hint(err, o.getenv); hint != "" {
			err = fmt.Errorf("%w\n%s", err, hint)
		}
	}
	return err
}

// named says, of an error of the BUCKET_URL, where it came from when not
// --dir.
func (o *serveBucketOptions) named(err error) error {
	if o.fromEnv {
		return fmt.Errorf("$%s: %w", bucketEnv, err)
	}
	return err
}

// serveBundleOptions are the options of serve --bundle, which serves the
// build in a bundle.
type serveBundleOptions struct {
	*globalOptions
	listen server.Listen
	file   string
	set    func(flag string) bool // whether the flag was given
}

func (o *serveBundleOptions) check() error {
	for _, f := range []string{"dir", "watch", "config"} {
		if o.set(f) {
			return usageError{fmt.Errorf("--bundle and --%s do not go together: --bundle serves the build in the archive", f)}
		}
	}
	if err := watchOnly(o.set); err != nil {
		return err
	}
	if o.file == "" {
		return usageError{errors.New("--bundle needs a file: --bundle feed.zip")}
	}
	return nil
}

// runServeBundle verifies the bundle and serves the build in it.
func runServeBundle(ctx context.Context, o *serveBundleOptions) error {
	return bundle.Serve(ctx, o.listen, o.file)
}

// watchOnly refuses the flags of the site to build, which only serve
// --watch takes, and those of a bucket without --dir.
func watchOnly(set func(flag string) bool) error {
	for _, f := range []string{"cache-size", "poll"} {
		if set(f) && !set("dir") {
			return usageError{fmt.Errorf("--%s is for serve --dir BUCKET_URL: it says how a bucket is read", f)}
		}
	}
	for _, f := range []string{"out", "future"} {
		if set(f) {
			return usageError{fmt.Errorf("--%s is for --watch: serve --dir serves a build as it is", f)}
		}
	}
	return nil
}

// previewOptions are the options of serve --watch, the live preview.
type previewOptions struct {
	*globalOptions
	listen server.Listen
	site   siteOptions
	set    func(flag string) bool // whether the flag was given
}

// check refuses --dir, and a site that is not on disk: the preview has
// nothing to watch in the embedded sample site.
func (o *previewOptions) check() error {
	if o.set("dir") {
		return usageError{errors.New("--dir and --watch do not go together: --watch builds the site of --config (and --out)")}
	}
	for _, f := range []string{"cache-size", "poll"} {
		if o.set(f) {
			return usageError{fmt.Errorf("--%s is for serve --dir BUCKET_URL: --watch serves the site it builds", f)}
		}
	}
	if err := o.site.check(o.getenv, o.set); err != nil {
		return err
	}
	if !o.site.found {
		return usageError{errors.New("serve --watch needs a site on disk: no config.yaml here or in any folder above (pass --config)")}
	}
	return nil
}

// runPreview builds the site, serves it, and rebuilds it on every change.
func runPreview(ctx context.Context, o *previewOptions) error {
	return o.listen.Serve(ctx, func(ctx context.Context, so server.Options) error {
		return preview.Run(ctx, preview.Options{
			Build:      o.site.options(o.globalOptions),
			ConfigPath: o.site.config,
			Server:     so,
			Out:        o.stderr,
		})
	})
}

func newServeCmd(g *globalOptions) *cobra.Command {
	var (
		listen      server.Listen
		dir, bundle string
		watching    bool
		site        siteOptions
		cacheSize   string
		poll        time.Duration
	)
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Serve a build (a folder, a bucket, a bundle) as /articles/?limit=&offset=, or preview a site live",
		Long: `Serve answers /articles/?limit=&offset= from the pages of a build, exactly as
the original service did: the query is parsed by its rules, then the page is
sent from memory with ETag and Last-Modified. A new build written into the
folder is picked up without a restart; the server switches to it only once
every page of it is read and checked against the manifest.

With --watch it is a live preview: it builds the site of --config in memory
(and into --out, when given), serves it with links to its own address, and
rebuilds on every change under content/ and to config.yaml. Broken content
never breaks the preview: the errors are printed and the last good build
stays served.

With --dir BUCKET_URL (any URL publish takes, with the same credentials) it
serves the build published there, with the answers of serve --dir on the same
build: the manifest and indexes are read at start, pages and chunks when a
request needs them, at most --cache-size of them kept in memory. The manifest
is checked every --poll for a new build, which is switched to once its indexes
are read. Any number of servers can serve one bucket. Without --dir and
--config, the BUCKET_URL in $FEEDGEN_BUCKET_URL, when set, is served so.

With --bundle it serves a bundle written by "feedgen bundle" straight from the
archive, without extracting it, with exactly the answers of serve --dir on the
same output. The bundle is verified first; one that fails verification is not
served.

SIGINT or SIGTERM stops it after the requests in flight are answered.`,
		Example: `  feedgen serve
  feedgen serve --dir /srv/feed/public --addr 127.0.0.1:9000 --log access.log
  feedgen serve --addr 0 --log -              # any free port, access log on stderr
  feedgen serve --bundle feed-2026-11-23.zip  # serve a bundle without extracting it
  feedgen serve --dir 's3://feed-bucket?region=eu-west-1' --addr 0.0.0.0:8080 --cache-size 1GiB
  feedgen serve --watch                       # live preview of ./config.yaml's site
  feedgen serve --watch --config /srv/feed/config.yaml --addr 127.0.0.1:8081`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, set := cmd.Context(), cmd.Flags().Changed
			listen.Log = g.stderr
			if err := listen.Check(); err != nil {
				return usageError{err}
			}
			switch {
			case set("bundle"):
				return checkRun(ctx, &serveBundleOptions{globalOptions: g, listen: listen, file: bundle, set: set}, runServeBundle)
			case watching:
				return checkRun(ctx, &previewOptions{globalOptions: g, listen: listen, site: site, set: set}, runPreview)
			case isBucketURL(dir):
				return checkRun(ctx, &serveBucketOptions{globalOptions: g, listen: listen, url: dir, cacheSize: cacheSize, poll: poll, set: set}, runServeBucket)
			case !set("dir") && !set("config") && g.getenv(bucketEnv) != "":
				// A container's way: the bucket from the environment.
				withDir := func(f string) bool { return f == "dir" || set(f) }
				return checkRun(ctx, &serveBucketOptions{globalOptions: g, listen: listen, url: g.getenv(bucketEnv), cacheSize: cacheSize, poll: poll, set: withDir, fromEnv: true}, runServeBucket)
			}
			for _, f := range []string{"cache-size", "poll"} {
				if set(f) {
					return usageError{fmt.Errorf("--%s is for serve --dir BUCKET_URL: a folder's server hears of new builds from the file system, and sends its pages from their files", f)}
				}
			}
			return checkRun(ctx, &serveOptions{globalOptions: g, listen: listen, dir: dir, config: site.config, set: set}, runServe)
		},
	}
	cmd.Flags().StringVarP(&dir, "dir", "d", "", "the output folder of a build (default: output_dir of the config, else public), or the BUCKET_URL it was published to")
	cmd.Flags().StringVar(&cacheSize, "cache-size", fmt.Sprintf("%dMiB", server.DefaultCacheSize>>20), "with a BUCKET_URL: the most bytes of pages and chunks kept in memory")
	cmd.Flags().DurationVar(&poll, "poll", 5*time.Second, "with a BUCKET_URL: how often the bucket's manifest is checked for a new build")
	cmd.Flags().StringVarP(&listen.Addr, "addr", "a", server.DefaultAddr, "PORT or HOST:PORT to listen on (a port alone: 127.0.0.1's); port 0 picks a free port")
	cmd.Flags().StringVar(&listen.AccessLog, "log", "", `access log file in the combined log format, "-" for stderr (default: none)`)
	cmd.Flags().StringVarP(&bundle, "bundle", "b", "", "serve this bundle (feedgen bundle) straight from the archive, after verifying it")
	cmd.Flags().BoolVarP(&watching, "watch", "w", false, "build the site of --config, serve it, and rebuild on every change")
	site.register(cmd)
	cmd.Flags().Lookup("out").Usage = "with --watch: also write the preview's pages to this folder (default: none, they stay in memory)"
	return cmd
}
