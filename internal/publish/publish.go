// Package publish uploads a build to object storage (SPEC §10) through
// gocloud.dev/blob: the pages whose bytes the bucket does not hold, then
// the manifest, then it deletes the pages the build no longer has.
//
// What the bucket holds is known without downloading a page. publish
// uploads manifest.json last, with the SHA-256 of its bytes and a state,
// "complete" or "partial", in the object's metadata, and the SHA-256 of
// every page in the page's metadata. A complete manifest.json with the
// headers publish gives says what every page under articles/ is: an
// unchanged build costs one request (the manifest's attributes), an
// edited one the download of the manifest. A bucket without one (a first
// publish, a damaged manifest, one another tool uploaded, one a publish
// left partial) is listed instead, and each page there of the size the
// build's has is checked by its attributes: its SHA-256 metadata, size and
// headers. Options.Full does that whatever the manifest says.
//
// Order makes it safe to stop at any point: pages first, manifest.json
// last, so that a reader never sees a manifest naming a page that is not
// there, then the deletions. Before it uploads a page over a trusted
// manifest, publish marks that manifest partial (the same bytes, other
// metadata), and the new manifest stays partial until the stale pages
// are deleted: a publish that stops half way leaves a manifest the next
// one does not trust, so it lists the bucket and finishes the job.
//
// Only manifest.json and keys under articles/ are ever written or
// deleted; other objects of the bucket are never touched.
package publish

import (
	"bytes"
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// Defaults of Options.
const (
	DefaultWorkers    = 16
	DefaultMaxDeletes = 10000
	DefaultRetries    = 2
	DefaultBackoff    = 250 * time.Millisecond
)

// ContentType is the Content-Type of every object publish uploads.
const ContentType = "application/json"

// Prefix is the folder of the feed's pages in the bucket: publish deletes
// nothing outside it (and manifest.json).
const Prefix = listing.Dir + "/"

// Metadata keys publish stores on the objects it uploads.
const (
	// MetaSHA256 is the hex SHA-256 of the object's bytes, on every object.
	MetaSHA256 = "sha256"
	// MetaState is on manifest.json: StateComplete once every page it
	// names is in the bucket, StatePartial while a publish is replacing
	// pages it names.
	MetaState     = "feedgen-state"
	StateComplete = "complete"
	StatePartial  = "partial"
)

// Options say how to publish.
type Options struct {
	// CacheControl is the Cache-Control of every object uploaded;
	// config.DefaultCacheControl when empty.
	CacheControl string
	// Workers is how many objects are uploaded or checked at once;
	// DefaultWorkers when 0 or less.
	Workers int
	// MaxDeletes is the most pages a publish may delete: with more to
	// delete it changes nothing and returns a *TooManyDeletesError. A
	// negative value is no limit.
	MaxDeletes int
	// DryRun finds what would be uploaded and deleted, writes it to Log,
	// and changes nothing.
	DryRun bool
	// Full trusts no manifest in the bucket: it lists articles/ and
	// checks every page there by its attributes (a request per page), to
	// repair a bucket that other tools changed.
	Full bool
	// Log receives the dry run's lines: "upload KEY (SIZE)" and
	// "delete KEY". Nil: they are not written.
	Log io.Writer
	// Retries is how many times an operation that failed with a
	// transient error is tried again, waiting Backoff, then twice as
	// long each time. 0: DefaultRetries; negative: none.
	Retries int
	Backoff time.Duration // 0: DefaultBackoff
	// Progress, when set, is called from several goroutines after each
	// page uploaded, checked or deleted, with the count so far and the
	// total.
	Progress func(done, total int)
	// Clock is the time, for Result.Duration; time.Now when nil.
	Clock func() time.Time
}

func (o Options) withDefaults() Options {
	if o.CacheControl == "" {
		o.CacheControl = config.DefaultCacheControl
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
	if o.Clock == nil {
		o.Clock = time.Now
	}
	return o
}

// Result says what a publish did (or, for a dry run, would do).
type Result struct {
	Uploaded      int   // objects uploaded, manifest.json included
	UploadedBytes int64 // their bytes
	Unchanged     int   // objects of the build the bucket already held
	Deleted       int   // pages deleted
	Checked       int   // pages whose attributes were read
	// ManifestUploaded: the build's manifest.json is in the bucket now
	// (uploaded by this publish; not set by a dry run).
	ManifestUploaded bool
	// Remote says how what the bucket holds was known when its
	// manifest.json could not be used for it: "" when it could (or the
	// bucket held nothing), else a sentence such as "the bucket has no
	// manifest.json".
	Remote   string
	DryRun   bool
	Duration time.Duration
}

// Summary is the one line a publish prints.
func (r *Result) Summary() string {
	if r.DryRun {
		return fmt.Sprintf("dry run: would upload %s (%s), unchanged %d, would delete %d, in %s; nothing changed",
			human.Plural(r.Uploaded, "file"), human.Bytes(r.UploadedBytes), r.Unchanged, r.Deleted, r.Duration.Round(time.Millisecond))
	}
	return fmt.Sprintf("uploaded %s (%s), unchanged %d, deleted %d, in %s",
		human.Plural(r.Uploaded, "file"), human.Bytes(r.UploadedBytes), r.Unchanged, r.Deleted, r.Duration.Round(time.Millisecond))
}

// TooManyDeletesError is the error of a publish that would delete more
// pages than Options.MaxDeletes: it changed nothing.
type TooManyDeletesError struct {
	Deletes, Max int
}

func (e *TooManyDeletesError) Error() string {
	return fmt.Sprintf("publishing would delete %s from the bucket, more than the limit of %d: nothing was changed", human.Plural(e.Deletes, "page"), e.Max)
}

// local is the build being published.
type local struct {
	m    *manifest.Manifest
	data []byte // manifest.json's bytes
	sum  string // their hex SHA-256
}

// item is a page to upload, or to check and upload if the bucket does not
// hold it.
type item struct {
	page  int  // index in the local manifest's files
	check bool // read its attributes first
}

// publisher is one publish.
type publisher struct {
	bucket *blob.Bucket
	output fs.FS
	opt    Options
	local  *local
	res    Result
	mu     sync.Mutex // guards res and uploads
	// uploads are the pages a dry run would upload.
	uploads []int
	// done and total are the progress: pages uploaded, checked or
	// deleted, of those to upload, check or delete.
	done  atomic.Int64
	total int
	// rem is what the bucket holds; mark marks its manifest partial
	// once, before the first page is uploaded, when it is trusted.
	rem     *remote
	mark    sync.Once
	markErr error
	marked  bool
}

// markPartial marks the bucket's manifest partial, if it is trusted,
// before the first page goes up: should this publish stop before its own
// manifest is in place, the next one must not trust the one there (whose
// pages this one replaced), and lists and checks the pages instead.
func (p *publisher) markPartial(ctx context.Context) error {
	p.mark.Do(func() {
		if !p.rem.trusted {
			return
		}
		meta := map[string]string{MetaSHA256: sha256Hex(p.rem.data), MetaState: StatePartial}
		p.markErr = p.put(ctx, manifest.Name, p.rem.data, meta)
		p.marked = p.markErr == nil
	})
	return p.markErr
}

// tick counts one more page done, for Options.Progress.
func (p *publisher) tick() {
	if p.opt.Progress != nil {
		p.opt.Progress(int(p.done.Add(1)), p.total)
	}
}

// Publish uploads the build in output (an output folder: its
// manifest.json and the pages it lists) to bucket. Each page is read and
// checked against the manifest as it is uploaded: an output that changed
// since its manifest was written gives an error, and the bucket's
// manifest stays the one it had. On an error the result says what was
// done before it.
func Publish(ctx context.Context, bucket *blob.Bucket, output fs.FS, opt Options) (*Result, error) {
	opt = opt.withDefaults()
	start := opt.Clock()
	p := &publisher{bucket: bucket, output: output, opt: opt}
	p.res.DryRun = opt.DryRun
	defer func() { p.res.Duration = opt.Clock().Sub(start) }()
	var err error
	if p.local, err = readLocal(output); err != nil {
		return &p.res, err
	}
	rem, err := p.readRemote(ctx)
	if err != nil {
		return &p.res, err
	}
	p.rem = rem
	p.res.Remote = rem.note
	items, deletes := p.plan(rem)
	p.total = len(items) + len(deletes)
	var tooMany error
	if opt.MaxDeletes >= 0 && len(deletes) > opt.MaxDeletes {
		tooMany = &TooManyDeletesError{Deletes: len(deletes), Max: opt.MaxDeletes}
	}
	if opt.DryRun {
		if err := p.dryRun(ctx, items, deletes); err != nil {
			return &p.res, err
		}
		return &p.res, tooMany
	}
	if tooMany != nil {
		return &p.res, tooMany
	}
	if err := p.run(ctx, items); err != nil {
		return &p.res, err
	}
	// The manifest goes up when it is not the build's own, complete, or
	// was marked partial; with pages to delete, twice (see below).
	uploadManifest := !rem.current || p.marked || len(deletes) > 0
	complete := map[string]string{MetaSHA256: p.local.sum, MetaState: StateComplete}
	switch {
	case len(deletes) > 0:
		// The new manifest, marked partial until the stale pages are
		// gone: should this publish stop before, the next one lists the
		// bucket and finds them.
		partial := map[string]string{MetaSHA256: p.local.sum, MetaState: StatePartial}
		if err := p.putManifest(ctx, partial); err != nil {
			return &p.res, err
		}
		if err := p.delete(ctx, deletes); err != nil {
			return &p.res, err
		}
		if err := p.put(ctx, manifest.Name, p.local.data, complete); err != nil {
			return &p.res, err
		}
	case uploadManifest:
		if err := p.putManifest(ctx, complete); err != nil {
			return &p.res, err
		}
	default:
		p.res.Unchanged++
	}
	return &p.res, nil
}

// putManifest uploads the build's manifest with the metadata meta.
func (p *publisher) putManifest(ctx context.Context, meta map[string]string) error {
	if err := p.put(ctx, manifest.Name, p.local.data, meta); err != nil {
		return err
	}
	p.res.Uploaded++
	p.res.UploadedBytes += int64(len(p.local.data))
	p.res.ManifestUploaded = true
	return nil
}

// readLocal reads the build's manifest and checks that the build is
// finished, its manifest valid, and every page under articles/.
func readLocal(output fs.FS) (*local, error) {
	if _, err := fs.Stat(output, manifest.Unfinished); err == nil {
		return nil, errors.New("a build of the output folder is running or did not finish (it left " + manifest.Unfinished + "): run feedgen build, and publish once it is done")
	}
	snap, err := manifest.Read(output)
	if err != nil {
		return nil, err
	}
	if ps := snap.Validate(); len(ps) > 0 {
		return nil, fmt.Errorf("checking the output's manifest: %w", ps)
	}
	for _, f := range snap.Files {
		if !strings.HasPrefix(f.Path, Prefix) {
			return nil, fmt.Errorf("the output's manifest lists %s, outside %s: feedgen publishes only %s and %s", f.Path, Prefix, Prefix, manifest.Name)
		}
	}
	return &local{m: snap.Manifest, data: snap.Data, sum: sha256Hex(snap.Data)}, nil
}

// plan sorts the local pages into those the bucket holds (counted as
// unchanged), and items to upload or check. deletes are the keys under
// articles/ that the build does not have, sorted.
func (p *publisher) plan(rem *remote) (items []item, deletes []string) {
	files := p.local.m.Files
	for i, f := range files {
		size, listed := rem.listed[f.Path]
		sum, named := rem.sums[f.Path]
		switch {
		case listed && size == f.Size && named && sum == f.SHA256:
			p.res.Unchanged++
		case !listed || size != f.Size || named:
			items = append(items, item{page: i})
		default:
			items = append(items, item{page: i, check: true})
		}
	}
	have := make(map[string]bool, len(files))
	for _, f := range files {
		have[f.Path] = true
	}
	for key := range rem.listed {
		if !have[key] && !strings.HasSuffix(key, "/") {
			deletes = append(deletes, key)
		}
	}
	slices.Sort(deletes)
	return items, deletes
}

// dryRun resolves the items to check and writes what a publish would do.
func (p *publisher) dryRun(ctx context.Context, items []item, deletes []string) error {
	if err := p.run(ctx, items); err != nil {
		return err
	}
	uploadManifest := !p.rem.current || len(p.uploads) > 0 && p.rem.trusted || len(deletes) > 0
	slices.Sort(p.uploads)
	files := p.local.m.Files
	if p.opt.Log != nil {
		var b bytes.Buffer
		for _, i := range p.uploads {
			fmt.Fprintf(&b, "upload %s (%s)\n", files[i].Path, human.Bytes(files[i].Size))
		}
		if uploadManifest {
			fmt.Fprintf(&b, "upload %s (%s)\n", manifest.Name, human.Bytes(int64(len(p.local.data))))
		}
		for _, key := range deletes {
			fmt.Fprintf(&b, "delete %s\n", key)
		}
		if _, err := p.opt.Log.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if uploadManifest {
		p.res.Uploaded++
		p.res.UploadedBytes += int64(len(p.local.data))
	} else {
		p.res.Unchanged++
	}
	p.res.Deleted = len(deletes)
	return nil
}

// run uploads the items (checking first those that say so) on
// Options.Workers goroutines; a dry run only checks. The first error stops
// it.
func (p *publisher) run(ctx context.Context, items []item) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(p.opt.Workers, len(items)) {
		wg.Go(func() {
			var buf []byte
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(items) {
					return
				}
				if err := p.do(ctx, items[i], &buf); err != nil {
					cancel(err)
					return
				}
				p.tick()
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// do uploads one item, or finds it unchanged.
func (p *publisher) do(ctx context.Context, it item, buf *[]byte) error {
	f := p.local.m.Files[it.page]
	if it.check {
		var a *blob.Attributes
		err := p.retry(ctx, func() error {
			var err error
			a, err = p.bucket.Attributes(ctx, f.Path)
			return err
		})
		if err != nil && !isNotFound(err) {
			return explain("reading the attributes of "+f.Path, err)
		}
		p.mu.Lock()
		p.res.Checked++
		same := err == nil && a.Size == f.Size && a.Metadata[MetaSHA256] == f.SHA256 && p.sameHeaders(a)
		if same {
			p.res.Unchanged++
		}
		p.mu.Unlock()
		if same {
			return nil
		}
	}
	if p.opt.DryRun {
		p.mu.Lock()
		p.uploads = append(p.uploads, it.page)
		p.res.Uploaded++
		p.res.UploadedBytes += f.Size
		p.mu.Unlock()
		return nil
	}
	data, err := manifest.ReadPage(p.output, f, *buf)
	var mm *manifest.Mismatch
	if errors.As(err, &mm) {
		return fmt.Errorf("%w: the output changed since its manifest was written; run feedgen build again, and publish once it is done", err)
	}
	if err != nil {
		return err
	}
	*buf = data[:0]
	if err := p.markPartial(ctx); err != nil {
		return err
	}
	if err := p.put(ctx, f.Path, data, map[string]string{MetaSHA256: f.SHA256}); err != nil {
		return err
	}
	p.mu.Lock()
	p.res.Uploaded++
	p.res.UploadedBytes += f.Size
	p.mu.Unlock()
	return nil
}

// put uploads data as key with publish's headers and the metadata meta.
func (p *publisher) put(ctx context.Context, key string, data []byte, meta map[string]string) error {
	sum := md5.Sum(data)
	opts := &blob.WriterOptions{
		ContentType:  ContentType,
		CacheControl: p.opt.CacheControl,
		Metadata:     meta,
		ContentMD5:   sum[:],
	}
	err := p.retry(ctx, func() error {
		return p.bucket.Upload(ctx, key, bytes.NewReader(data), opts)
	})
	if err != nil {
		return explain("uploading "+key, err)
	}
	return nil
}

// delete deletes the keys on Options.Workers goroutines; a key already
// gone counts as deleted.
func (p *publisher) delete(ctx context.Context, keys []string) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var (
		next atomic.Int64
		wg   sync.WaitGroup
	)
	for range min(p.opt.Workers, len(keys)) {
		wg.Go(func() {
			for ctx.Err() == nil {
				i := int(next.Add(1) - 1)
				if i >= len(keys) {
					return
				}
				err := p.retry(ctx, func() error { return p.bucket.Delete(ctx, keys[i]) })
				if err != nil && !isNotFound(err) {
					cancel(explain("deleting "+keys[i], err))
					return
				}
				p.mu.Lock()
				p.res.Deleted++
				p.mu.Unlock()
				p.tick()
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// sameHeaders reports whether an object has the headers publish gives
// it.
func (p *publisher) sameHeaders(a *blob.Attributes) bool {
	mt, _, err := mime.ParseMediaType(a.ContentType)
	return err == nil && mt == ContentType && strings.TrimSpace(a.CacheControl) == p.opt.CacheControl
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
