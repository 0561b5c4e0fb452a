// Package publish uploads a build to object storage (docs/contract.md §10) through
// gocloud.dev/blob: the pages whose bytes the bucket does not hold, then
// the manifest, then it deletes the pages the build no longer has.
//
// What the bucket holds is known without downloading a page. publish
// uploads manifest.json last, with the SHA-256 of its bytes and the state
// "complete" in the object's metadata, and the SHA-256 of every page in
// the page's metadata. A complete manifest.json with the headers publish
// gives says what every page under articles/ is: an unchanged build costs
// one request (the manifest's attributes), an edited one the download of
// the manifest, read as a stream and compared with the build page by
// page, and of the chunk indexes it lists that the build changed, and of
// publish's record of the chunks the bucket keeps (KeptName): never a
// listing of the bucket, so a change costs what it changes, however
// many files the bucket holds. A bucket without one (a first publish, a
// damaged manifest, one another tool uploaded, no record) is listed
// instead, once (a folder in one walk: see walk), said on
// Options.Notices, and each page there of the size the build's has is
// checked by its attributes: its SHA-256 metadata, size and headers.
// Options.Full does that whatever the manifest says.
//
// Two publishes to one bucket never run at once (see lock.go): a publish
// holds the bucket's lock while it changes the bucket, and one that
// stops half way leaves the lock saying so, so that the next one trusts
// no manifest, lists the bucket and finishes the job. Order makes a stop
// at any point safe for readers too: pages first, manifest.json last, so
// that a reader never sees a manifest naming a page that is not there,
// then the deletions.
//
// A build in the chunks layout (pagination.layout: chunks, see
// package chunk) goes up in three steps: every chunk, then the indexes,
// then manifest.json, each step begun once the one before it is done, so
// that no index is in the bucket before the chunks it names. A chunk's
// bytes never change (its name is their digest): chunks get
// layout.ImmutableCacheControl, and a chunk the build no longer has is
// deleted only when the bucket's manifest before this publish does not
// name it either, so that a CDN or an edge holding an index of the
// previous build for its cache lifetime still finds its chunks (see
// decideChunks in remote.go): the record KeptName says which ones stay.
//
// Every request that waits Options.ConnectTimeout for the first byte of
// its answer, or goes Options.Timeout without progress, is stopped and
// tried again like any failed one: a service that stops answering fails
// the publish, never hangs it.
//
// Only manifest.json, keys under articles/ and the lock are ever written
// or deleted; other objects of the bucket are never touched. Under
// articles/, only the names a feedgen build writes are deleted (see
// buildWrites): any other file there is kept, and counted.
package publish

import (
	"bytes"
	"cmp"
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
	"github.com/feedgen/feedgen/internal/folder"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/pool"
	"github.com/feedgen/feedgen/internal/retry"
	"gocloud.dev/blob"
)

// Defaults of Options.
const (
	DefaultWorkers    = 16
	DefaultMaxDeletes = 10000
	DefaultRetries    = 2
	DefaultBackoff    = 250 * time.Millisecond
	DefaultTimeout    = 60 * time.Second
	// DefaultConnectTimeout bounds the wait for the first byte of an
	// answer (Options.ConnectTimeout).
	DefaultConnectTimeout = 10 * time.Second
)

// Prefix is the folder of the feed's pages in the bucket: publish deletes
// nothing outside it (and manifest.json).
const Prefix = listing.Dir + "/"

// Metadata keys publish stores on the objects it uploads.
const (
	// MetaSHA256 is the hex SHA-256 of the object's bytes, on every object.
	MetaSHA256 = "sha256"
	// MetaState is on manifest.json: StateComplete once every page it
	// names is in the bucket. StatePartial (a publish replacing pages it
	// names) was written by earlier versions, which had no lock: such a
	// manifest is not trusted.
	MetaState     = "feedgen-state"
	StateComplete = "complete"
	StatePartial  = "partial"
)

// Options say how to publish.
type Options struct {
	// CacheControl is the Cache-Control of every object uploaded but
	// chunks, which get layout.ImmutableCacheControl;
	// config.DefaultCacheControl when empty.
	CacheControl string
	// Workers is how many objects are uploaded or checked at once;
	// DefaultWorkers when 0 or less.
	Workers int
	// MaxDeletes is the most objects a publish may delete: with more to
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
	// Timeout is how long one request may go without progress (nothing
	// more of its body sent, nothing more received of its answer) before
	// it is stopped and counts as a failed attempt; and how long it may
	// take at less than 1 kB/s. An upload's body is progress as it goes
	// (see policy.try). 0: DefaultTimeout; negative: none.
	Timeout time.Duration
	// ConnectTimeout is how long one request may wait for the first byte
	// of its answer once it is sent (connecting, and the service's first
	// reply), when it is shorter than Timeout: a service that stopped
	// answering is tried again after it, not after Timeout. After an
	// upload's body, a second more per 64 kB of it, for the bytes still
	// on their way. 0: DefaultConnectTimeout; negative: none but Timeout.
	ConnectTimeout time.Duration
	// LockWait is how long a publish waits for another one that holds
	// the bucket's lock. 0: DefaultLockWait; negative: not at all.
	LockWait time.Duration
	// LockLease is how long the lock object of a bucket in a cloud stays
	// taken without a renewal: its holder renews it every third of it.
	// 0: DefaultLockLease.
	LockLease time.Duration
	// Folder is the folder of a bucket on disk (file://, opened by
	// Bucket.Open): a plain copy of the build that a web server can
	// serve. Its objects have no attributes (a web server gives the
	// headers: see feedgen rules), so what a file holds is known by its
	// bytes, read when the folder's manifest cannot say; the lock is the
	// folder's flock, not an object (see folderLock).
	Folder string
	// OutputDir is the folder of output on disk, when it is one: a
	// publish to Folder refuses to write into any folder of the bucket
	// that is, holds or lies in it, however reached (a link, a mount).
	OutputDir string
	// Owner names this publish in the lock, for the messages of another
	// one that waits: "host pid N" when empty.
	Owner string
	// Notices receives what a publish says while it runs: waiting for
	// another one, a request that stalled or is tried again (naming it,
	// why, and which try); nil discards it.
	Notices io.Writer

	// step, set by tests only, is called after the lock is taken
	// ("locked"), as a listing of the bucket starts ("list articles/")
	// and, on disk, as it reads each folder ("read articles/x"),
	// after what the bucket holds is read ("read"), after the manifest is
	// uploaded ("manifest") and the record of what the bucket keeps
	// ("kept"), with the publish's context.
	step func(ctx context.Context, what string)
	// sleep, when set, waits between two tries of a request (see
	// policy.sleeper): the tests' own.
	sleep func(ctx context.Context, d time.Duration) error
	// Progress, when set, is called from several goroutines after each
	// page uploaded, checked or deleted, with the count so far and the
	// total.
	Progress func(done, total int)
	// Clock is the time, for Result.Duration; time.Now when nil.
	Clock func() time.Time
	// Ready, when set, is called before the bucket is written, read or
	// locked (by Publish, once it read the build; by Open, before it
	// makes a bucket's folder, with the Options of OpenOptions): an
	// error stops there, nothing done. It is the caller's comparison of
	// the build with its site, made meanwhile (Behind.Start), and may be
	// called twice.
	Ready func() error
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
	switch {
	case o.Timeout == 0:
		o.Timeout = DefaultTimeout
	case o.Timeout < 0:
		o.Timeout = 0
	}
	switch {
	case o.ConnectTimeout == 0:
		o.ConnectTimeout = DefaultConnectTimeout
	case o.ConnectTimeout < 0:
		o.ConnectTimeout = 0
	}
	switch {
	case o.LockWait == 0:
		o.LockWait = DefaultLockWait
	case o.LockWait < 0:
		o.LockWait = 0
	}
	if o.LockLease <= 0 {
		o.LockLease = DefaultLockLease
	}
	if o.Notices == nil {
		o.Notices = io.Discard
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
	Deleted       int   // pages deleted (chunks and indexes too)
	Checked       int   // pages whose attributes were read
	// Kept counts the chunks the bucket holds that the build does not
	// have, left there: the bucket's manifest before this publish names
	// them, so a cached index may still name them (or it could not tell:
	// see decideChunks in remote.go). A later publish deletes them.
	// It counts Foreign too.
	Kept int
	// Foreign counts the files under articles/ that the build does not
	// have and that no feedgen build writes (a web root's
	// articles/index.html, a *.md file), left there: a publish deletes
	// only what a build writes. ForeignNames are the first few.
	Foreign      int
	ForeignNames []string
	// Chunked: the build is in the chunks layout.
	Chunked bool
	// ManifestUploaded: the build's manifest.json is in the bucket now
	// (uploaded by this publish; not set by a dry run).
	ManifestUploaded bool
	// HadManifest: the bucket held a manifest.json when this publish
	// read it.
	HadManifest bool
	// Remote says how what the bucket holds was known when its
	// manifest.json could not be used for it: "" when it could (or the
	// bucket held nothing), else a sentence such as "the bucket has no
	// manifest.json", or that the last publish did not finish.
	Remote string
	// Listed: the publish listed articles/ in the bucket, to see what it
	// holds (Remote says why; said on Options.Notices once the listing
	// found a key). A publish whose bucket's manifest can be trusted
	// lists nothing.
	Listed bool
	// More is how many keys to delete a dry run found beyond those it
	// lists (it keeps no more than --max-deletes allows).
	More     int
	DryRun   bool
	Duration time.Duration
}

// Summary is the one line a publish prints.
func (r *Result) Summary() string {
	var kept string
	verb := ", kept "
	if r.DryRun {
		verb = ", would keep "
	}
	if chunks := r.Kept - r.Foreign; chunks > 0 {
		kept = verb + human.Plural(chunks, "old chunk")
		verb = " and "
	}
	if r.Foreign > 0 {
		kept += verb + human.Plural(r.Foreign, "file") + " under " + Prefix + " that no feedgen build writes"
	}
	if r.DryRun {
		return fmt.Sprintf("dry run: would upload %s (%s), unchanged %d, would delete %d%s, in %s; nothing changed",
			human.Plural(r.Uploaded, "file"), human.Bytes(r.UploadedBytes), r.Unchanged, r.Deleted, kept, r.Duration.Round(time.Millisecond))
	}
	return fmt.Sprintf("uploaded %s (%s), unchanged %d, deleted %d%s, in %s",
		human.Plural(r.Uploaded, "file"), human.Bytes(r.UploadedBytes), r.Unchanged, r.Deleted, kept, r.Duration.Round(time.Millisecond))
}

// TooManyDeletesError is the error of a publish that would delete more
// objects than Options.MaxDeletes: it changed nothing.
type TooManyDeletesError struct {
	Deletes, Max int
	// Noun is what the objects are: "page", or "file" when the build is
	// in the chunks layout or chunks or indexes are among them.
	Noun string
}

func (e *TooManyDeletesError) Error() string {
	return fmt.Sprintf("publishing would delete %s from the bucket, more than the limit of %d: nothing was changed", human.Plural(e.Deletes, e.Noun), e.Max)
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
	index  map[string]int // the local pages by path
	res    Result
	mu     sync.Mutex // guards res and uploads
	// uploads are the pages a dry run would upload.
	uploads []int
	// done and total are the progress: pages uploaded, checked or
	// deleted, of those to upload, check or delete.
	done  atomic.Int64
	total int
	// changed is set before the first write to the bucket.
	changed atomic.Bool
	// fence returns nil while the publish may write (see locker.fence);
	// nil for a dry run.
	fence  func() error
	layout layout.Layout // the build's
	// notices says what the publish's requests meet (see policy).
	notices *retry.Notices
	// loc relates the folders of a bucket on disk to the build's
	// (Options.OutputDir); walked is what the walk of its articles/
	// found, nil before it.
	loc    *folder.Locator
	walked *folderWalk
	// gcs is set for a bucket of gocloud.dev's gcsblob (see uploadBuffer).
	gcs bool
}

// step calls Options.step.
func (p *publisher) step(ctx context.Context, what string) {
	if p.opt.step != nil {
		p.opt.step(ctx, what)
	}
}

// tick counts one more page done, for Options.Progress.
func (p *publisher) tick() {
	if p.opt.Progress != nil {
		p.opt.Progress(int(p.done.Add(1)), p.total)
	}
}

// lock returns the bucket's lock for this publish.
func (p *publisher) lock() locker {
	info := newLockInfo(p.opt.Owner, p.opt.Clock())
	if p.opt.Folder != "" {
		return newFolderLock(p, p.opt.Folder, info)
	}
	return &objectLock{p: p, info: info}
}

// releaseTimeout bounds the release of the lock of a publish that was
// interrupted.
const releaseTimeout = 2 * time.Second

// Publish uploads the build in output (an output folder: its
// manifest.json and the pages it lists) to bucket. Each page is read and
// checked against the manifest as it is uploaded: an output that changed
// since its manifest was written gives an error, and the bucket's
// manifest stays the one it had. On an error the result says what was
// done before it. A *LockedError says that another publish held the
// bucket's lock for longer than Options.LockWait.
func Publish(ctx context.Context, bucket *blob.Bucket, output fs.FS, opt Options) (res *Result, err error) {
	opt = opt.withDefaults()
	if opt.Folder != "" {
		opt.ConnectTimeout = 0 // a disk has no first byte to wait for
	}
	start := opt.Clock()
	p := &publisher{bucket: bucket, output: output, opt: opt, notices: &retry.Notices{W: opt.Notices, Clock: opt.Clock}, gcs: isGCS(bucket)}
	p.res.DryRun = opt.DryRun
	defer func() { p.res.Duration = opt.Clock().Sub(start) }()
	if p.local, err = readLocal(ctx, output); err != nil {
		return &p.res, err
	}
	p.index = make(map[string]int, len(p.local.m.Files))
	for i, f := range p.local.m.Files {
		p.index[f.Path] = i
	}
	p.layout = layout.Of(p.local.m.Pagination)
	p.res.Chunked = p.layout.Has(layout.Chunk)
	if opt.Folder != "" {
		// The mount table is read, and the build found, once.
		if p.loc, err = folder.NewLocator(opt.OutputDir); err != nil {
			return &p.res, fmt.Errorf("finding the build's folder %s: %w", opt.OutputDir, err)
		}
		if err := checkBucketFolder(p.loc, opt.Folder, opt.OutputDir); err != nil {
			return &p.res, err
		}
	}
	if err := checkFolderRoot(opt.Folder); err != nil {
		return &p.res, err
	}
	if opt.Ready != nil {
		if err := opt.Ready(); err != nil {
			return &p.res, err
		}
	}
	lock := p.lock()
	if opt.DryRun {
		dirty, err := lock.peek(ctx)
		if err != nil {
			return &p.res, err
		}
		return &p.res, p.dryRun(ctx, dirty)
	}
	if err := p.reach(ctx); err != nil {
		return &p.res, err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	dirty, err := lock.acquire(ctx, cancel)
	if err != nil {
		return &p.res, err
	}
	p.fence = lock.fence
	defer func() {
		// Clean: the bucket is what its manifest says, as this publish
		// found it or left it.
		clean := err == nil || dirty == "" && !p.changed.Load()
		rctx, rcancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		defer rcancel()
		if rerr := lock.release(rctx, clean); rerr != nil && err == nil {
			err = rerr
		}
	}()
	p.step(ctx, "locked")
	err = p.publish(ctx, lock, dirty)
	if cause := context.Cause(ctx); err != nil && errors.Is(cause, errLockLost) {
		err = cause
	}
	return &p.res, err
}

// keysOf returns the paths of the build's files pages, and keys: where a
// publish writes, and deletes.
func (p *publisher) keysOf(pages []int, keys []string) []string {
	out := make([]string, 0, len(pages)+len(keys))
	for _, i := range pages {
		out = append(out, p.local.m.Files[i].Path)
	}
	return append(out, keys...)
}

// reach finds, before anything is written, whether the bucket can be
// reached with the credentials given: it reads the attributes of its
// manifest.json (which a publish reads again once it holds the lock),
// and only when that fails (no manifest, a first publish) but for a
// service that does not answer, lists one key under articles/, whose
// error names a missing bucket, or refused or missing credentials,
// better than a HEAD request's (which has no body).
// A publish whose bucket has a manifest lists nothing but to repair it.
func (p *publisher) reach(ctx context.Context) error {
	if p.opt.Folder != "" {
		return nil // the lock opens the folder, and says what is wrong with it
	}
	err := p.retry(ctx, "reading the attributes of "+manifest.Name, func(ctx context.Context, _ func(int)) error {
		_, err := p.bucket.Attributes(ctx, manifest.Name)
		return err
	})
	if err == nil || errors.Is(err, context.Canceled) {
		return err
	}
	switch kindOf(err) {
	case TimedOut, Unreachable:
		return explain("reading the attributes of "+manifest.Name, err) // a listing would say no more
	}
	err = p.retry(ctx, "listing "+Prefix, func(ctx context.Context, _ func(int)) error {
		_, _, err := p.bucket.ListPage(ctx, blob.FirstPageToken, 1, &blob.ListOptions{Prefix: Prefix})
		return err
	})
	return explainList(err)
}

// publish does the work of Publish with the lock held.
func (p *publisher) publish(ctx context.Context, lock locker, dirty string) error {
	rem, err := p.readRemote(ctx, dirty)
	if err != nil {
		return err
	}
	p.keep(rem)
	p.step(ctx, "read")
	items := p.plan(rem)
	p.total = len(items) + rem.stale
	if p.opt.MaxDeletes >= 0 && rem.stale > p.opt.MaxDeletes {
		return p.tooManyDeletes(rem)
	}
	pages := make([]int, len(items))
	for i, it := range items {
		pages[i] = it.page
	}
	if err := p.checkIndexes(ctx, pages); err != nil {
		return err
	}
	if err := p.checkFolders(ctx, p.keysOf(pages, slices.Concat(rem.deletes, []string{KeptName}))); err != nil {
		return err
	}
	if p.opt.Folder != "" {
		if err := p.dropAttrs(ctx); err != nil {
			return err
		}
	}
	// Chunks, then the rest: each step done before the next begins.
	for _, step := range steps(p.local.m.Files, items) {
		if err := p.run(ctx, step); err != nil {
			return err
		}
	}
	if rem.current {
		p.res.Unchanged++
	} else {
		// The manifest goes up over the one this publish read, and no
		// other: where the service has conditional writes, a manifest
		// another writer put there meanwhile fails it.
		if err := lock.check(ctx); err != nil {
			return err
		}
		if err := p.putManifest(ctx, rem); err != nil {
			return err
		}
		p.step(ctx, "manifest")
	}
	// What the bucket keeps for one more publish goes with its manifest
	// (a listing found it anew, or the manifest is new).
	if !rem.current || rem.listed {
		if err := p.putKept(ctx, rem); err != nil {
			return err
		}
		p.step(ctx, "kept")
	}
	return p.delete(ctx, rem.deletes)
}

// putManifest uploads the build's manifest, complete: only over the one
// rem read, where the service can make the write conditional.
func (p *publisher) putManifest(ctx context.Context, rem *remote) error {
	meta := map[string]string{MetaSHA256: p.local.sum, MetaState: StateComplete}
	opts := p.writerOptions(manifest.Name, p.local.data, meta)
	if rem.exists {
		opts.BeforeWrite = ifVersion(rem.ver)
	} else {
		opts.IfNotExist = true
	}
	err := p.upload(ctx, manifest.Name, p.local.data, opts)
	if errors.Is(err, errNoCondition) {
		opts.BeforeWrite = nil // the lock alone keeps other publishes out
		err = p.upload(ctx, manifest.Name, p.local.data, opts)
	}
	if preconditionFailed(err) && !p.manifestIsOurs(ctx) {
		return fmt.Errorf("%s changed in the bucket while this publish ran (another publish, or another tool, wrote it): this publish did not replace it; publish again: %w",
			manifest.Name, err)
	}
	if err != nil && !preconditionFailed(err) {
		return err
	}
	p.res.Uploaded++
	p.res.UploadedBytes += int64(len(p.local.data))
	p.res.ManifestUploaded = true
	return nil
}

// manifestIsOurs reports whether the bucket's manifest is the build's,
// complete: a write tried again after its answer was lost finds the first
// one there.
func (p *publisher) manifestIsOurs(ctx context.Context) bool {
	var a *blob.Attributes
	err := p.retry(ctx, "reading the attributes of "+manifest.Name, func(ctx context.Context, _ func(int)) error {
		var err error
		a, err = p.bucket.Attributes(ctx, manifest.Name)
		return err
	})
	if err == nil && p.opt.Folder != "" && a.Size == int64(len(p.local.data)) {
		sum, err := p.sumOf(ctx, manifest.Name, a.Size)
		return err == nil && sum == p.local.sum
	}
	return err == nil && a.Metadata[MetaSHA256] == p.local.sum && a.Metadata[MetaState] == StateComplete && a.Size == int64(len(p.local.data))
}

// sumOf returns the hex SHA-256 of the object key, of size bytes (a
// larger one is read no further than a byte more): of a bucket on disk,
// which keeps no SHA-256 with its files.
func (p *publisher) sumOf(ctx context.Context, key string, size int64) (string, error) {
	var sum string
	err := p.retry(ctx, "reading "+key, func(ctx context.Context, kick func(int)) error {
		r, err := p.bucket.NewReader(ctx, key, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		h := sha256.New()
		if _, err := io.Copy(h, io.LimitReader(kicking{r, kick}, size+1)); err != nil {
			return err
		}
		sum = hex.EncodeToString(h.Sum(nil))
		return nil
	})
	return sum, err
}

// readLocal reads the build's manifest and checks that the build is
// finished, its manifest valid, and every page under articles/.
func readLocal(ctx context.Context, output fs.FS) (*local, error) {
	if err := outdir.Finished(output, "publish"); err != nil {
		return nil, err
	}
	snap, err := manifest.ReadContext(ctx, output)
	if err == nil {
		err = snap.Complete()
	}
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
// unchanged), and items to upload or check.
func (p *publisher) plan(rem *remote) (items []item) {
	for i, f := range p.local.m.Files {
		size, h := rem.size[i], rem.held[i]
		switch {
		case size == f.Size && h == heldSame:
			p.res.Unchanged++
		case size < 0 || size != f.Size || h != heldUnknown:
			items = append(items, item{page: i})
		default:
			items = append(items, item{page: i, check: true})
		}
	}
	return items
}

// dryRun finds what a publish would do, resolving the items to check, and
// writes it. dirty says that a publish holds the lock or did not finish.
func (p *publisher) dryRun(ctx context.Context, dirty string) error {
	rem, err := p.readRemote(ctx, dirty)
	if err != nil {
		return err
	}
	p.keep(rem)
	items := p.plan(rem)
	if err := p.run(ctx, items); err != nil {
		return err
	}
	if err := p.checkIndexes(ctx, p.uploads); err != nil {
		return err
	}
	if err := p.checkFolders(ctx, p.keysOf(p.uploads, rem.deletes)); err != nil {
		return err
	}
	files := p.local.m.Files
	// In the order of a publish: chunks first.
	slices.SortFunc(p.uploads, func(i, j int) int {
		return cmp.Or(cmp.Compare(layout.Classify(files[i].Path).Step(), layout.Classify(files[j].Path).Step()), cmp.Compare(i, j))
	})
	if p.opt.Log != nil {
		var b bytes.Buffer
		for _, i := range p.uploads {
			fmt.Fprintf(&b, "upload %s (%s)\n", files[i].Path, human.Bytes(files[i].Size))
		}
		if !rem.current {
			fmt.Fprintf(&b, "upload %s (%s)\n", manifest.Name, human.Bytes(int64(len(p.local.data))))
		}
		for _, key := range rem.deletes {
			fmt.Fprintf(&b, "delete %s\n", key)
		}
		if more := rem.stale - len(rem.deletes); more > 0 {
			fmt.Fprintf(&b, "and %s more to delete\n", human.Plural(more, p.noun(rem)))
		}
		if rem.kept > 0 {
			fmt.Fprintf(&b, "keep %s: %s\n", human.Plural(rem.kept, "old chunk"), rem.keptWhy)
		}
		for _, key := range rem.foreignNames {
			fmt.Fprintf(&b, "keep %s: no feedgen build writes it\n", key)
		}
		if more := rem.foreign - len(rem.foreignNames); more > 0 {
			fmt.Fprintf(&b, "and %s more that no feedgen build writes to keep\n", human.Plural(more, "file"))
		}
		if _, err := p.opt.Log.Write(b.Bytes()); err != nil {
			return err
		}
	}
	if !rem.current {
		p.res.Uploaded++
		p.res.UploadedBytes += int64(len(p.local.data))
	} else {
		p.res.Unchanged++
	}
	p.res.Deleted = rem.stale
	p.res.More = rem.stale - len(rem.deletes)
	if p.opt.MaxDeletes >= 0 && rem.stale > p.opt.MaxDeletes {
		return p.tooManyDeletes(rem)
	}
	return nil
}

// keep records in the result what rem says of the bucket: why its
// manifest was not used, and the files it keeps.
func (p *publisher) keep(rem *remote) {
	p.res.Remote, p.res.HadManifest, p.res.Listed = rem.note, rem.exists, rem.listed
	p.res.Kept, p.res.Foreign = rem.kept+rem.foreign, rem.foreign
	p.res.ForeignNames = slices.Clone(rem.foreignNames)
}

// tooManyDeletes is the error of a publish that would delete more than
// Options.MaxDeletes.
func (p *publisher) tooManyDeletes(rem *remote) error {
	return &TooManyDeletesError{Deletes: rem.stale, Max: p.opt.MaxDeletes, Noun: p.noun(rem)}
}

// noun names what a publish deletes: pages, or files when chunks or
// indexes are among them.
func (p *publisher) noun(rem *remote) string {
	if p.res.Chunked || rem.staleChunks {
		return "file"
	}
	return "page"
}

// steps splits items, in order, by the step of their kind
// (layout.Kind.Step): chunks before pages and indexes, so that an index
// never names a chunk that is not in the bucket yet; the items of each
// step are uploaded once those of the step before are all done. The
// manifest, the last step, goes up on its own. A build in the pages
// layout has one step.
func steps(files []manifest.File, items []item) [][]item {
	var out [layout.Steps][]item
	for _, it := range items {
		s := layout.Classify(files[it.page].Path).Step()
		out[s] = append(out[s], it)
	}
	return slices.DeleteFunc(out[:], func(s []item) bool { return len(s) == 0 })
}

// run uploads the items (checking first those that say so) on
// Options.Workers goroutines; a dry run only checks. The first error stops
// it.
func (p *publisher) run(ctx context.Context, items []item) error {
	return pool.Run(ctx, len(items), p.opt.Workers, func() func(context.Context, int) error {
		var buf []byte
		return func(ctx context.Context, i int) error {
			if err := p.do(ctx, items[i], &buf); err != nil {
				return err
			}
			p.tick()
			return nil
		}
	})
}

// do uploads one item, or finds it unchanged.
func (p *publisher) do(ctx context.Context, it item, buf *[]byte) error {
	f := p.local.m.Files[it.page]
	if it.check {
		var a *blob.Attributes
		err := p.retry(ctx, "reading the attributes of "+f.Path, func(ctx context.Context, _ func(int)) error {
			var err error
			a, err = p.bucket.Attributes(ctx, f.Path)
			return err
		})
		if err != nil && !isNotFound(err) {
			return explain("reading the attributes of "+f.Path, err)
		}
		same := err == nil && a.Size == f.Size && a.Metadata[MetaSHA256] == f.SHA256 && p.sameHeaders(f.Path, a)
		if err == nil && a.Size == f.Size && p.opt.Folder != "" {
			// A folder keeps no SHA-256 with a file: its bytes tell.
			sum, err := p.sumOf(ctx, f.Path, f.Size)
			if err != nil && !isNotFound(err) {
				return explain("reading "+f.Path, err)
			}
			same = err == nil && sum == f.SHA256
		}
		p.mu.Lock()
		p.res.Checked++
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
	if err != nil {
		return changedOutput(err)
	}
	*buf = data[:0]
	if err := p.upload(ctx, f.Path, data, p.writerOptions(f.Path, data, map[string]string{MetaSHA256: f.SHA256})); err != nil {
		return err
	}
	p.mu.Lock()
	p.res.Uploaded++
	p.res.UploadedBytes += f.Size
	p.mu.Unlock()
	return nil
}

// writerOptions are publish's headers, with the metadata meta, for the
// bytes data of the object key.
func (p *publisher) writerOptions(key string, data []byte, meta map[string]string) *blob.WriterOptions {
	sum := md5.Sum(data)
	return &blob.WriterOptions{
		ContentType:  layout.ContentType(key),
		CacheControl: p.cacheControl(key),
		Metadata:     meta,
		ContentMD5:   sum[:],
		BufferSize:   uploadBuffer(p.gcs, len(data)),
	}
}

// upload uploads data as key with opts. Its body is progress as it goes
// (see policy.try): the HTTP client of a bucket of a cloud reports the
// bytes it sends; a bucket on disk, those its driver writes.
func (p *publisher) upload(ctx context.Context, key string, data []byte, opts *blob.WriterOptions) error {
	p.changed.Store(true)
	// A body that goes unseen (see policy.try) may take a second per
	// uploadRate bytes.
	extra := time.Duration(len(data)/uploadRate) * time.Second
	err := p.policy().retry(ctx, "uploading "+key, extra, func(ctx context.Context, _ func(int)) error {
		if err := p.fence(); err != nil {
			return err
		}
		var body io.Reader = bytes.NewReader(data)
		if w := watchOf(ctx); w != nil && p.opt.Folder != "" {
			body = &folderBody{data, w}
		}
		return p.bucket.Upload(ctx, key, body, opts)
	})
	if err != nil && !preconditionFailed(err) {
		return explain("uploading "+key, err)
	}
	return err
}

// delete deletes the keys on Options.Workers goroutines; a key already
// gone counts as deleted.
func (p *publisher) delete(ctx context.Context, keys []string) error {
	return pool.Each(ctx, len(keys), p.opt.Workers, func(ctx context.Context, i int) error {
		p.changed.Store(true)
		err := p.retry(ctx, "deleting "+keys[i], func(ctx context.Context, _ func(int)) error {
			if err := p.fence(); err != nil {
				return err
			}
			return p.bucket.Delete(ctx, keys[i])
		})
		if err != nil && !isNotFound(err) {
			return explain("deleting "+keys[i], err)
		}
		p.mu.Lock()
		p.res.Deleted++
		p.mu.Unlock()
		p.tick()
		return nil
	})
}

// cacheControl returns the Cache-Control of the object key: immutable
// for a chunk, whose name is its bytes' digest; the configured one for
// the rest.
func (p *publisher) cacheControl(key string) string {
	return layout.Classify(key).CacheControl(p.opt.CacheControl)
}

// sameHeaders reports whether the object key, of attributes a, has the
// headers publish gives it.
func (p *publisher) sameHeaders(key string, a *blob.Attributes) bool {
	if p.opt.Folder != "" {
		return true // a folder keeps no headers: its web server gives them
	}
	return sameType(a.ContentType, layout.ContentType(key)) && strings.TrimSpace(a.CacheControl) == p.cacheControl(key)
}

// sameType reports whether the Content-Type got, as a bucket gives it, is
// want: the same media type and charset, whatever their case and spacing
// (a feed's is "application/rss+xml; charset=utf-8").
func sameType(got, want string) bool {
	gm, gp, err := mime.ParseMediaType(got)
	if err != nil {
		return false
	}
	wm, wp, _ := mime.ParseMediaType(want)
	return gm == wm && strings.EqualFold(gp["charset"], wp["charset"])
}

func sha256Hex(data []byte) string {
	sum := sha256.Sum256(data)
	return hex.EncodeToString(sum[:])
}
