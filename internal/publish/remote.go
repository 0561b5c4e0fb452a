package publish

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// listPageSize is how many keys one list request asks for (S3's most).
const listPageSize = 1000

// maxManifestSize bounds the bucket's manifest.json that publish reads: a
// larger one is taken as damaged. It is read as a stream, never whole.
const maxManifestSize = 1 << 30

// remote is what the bucket holds, as the build's pages see it. Its size
// is the build's: a bucket's manifest or listing is read as a stream and
// compared with the build page by page, and of the keys the build does
// not have, no more are kept than could be deleted.
type remote struct {
	// size[i] is the size of the object at the key of the build's page i,
	// -1 when the bucket has none: as the trusted manifest names it, or as
	// a listing found it.
	size []int64
	// sum[i] is its SHA-256 when the bucket's trusted manifest names it,
	// "" when that is not known.
	sum []string
	// deletes are keys under articles/ that the build does not have,
	// sorted once read: all of them, or the first keep when there are
	// more (stale counts them all).
	deletes []string
	stale   int
	keep    int // -1: no bound
	// trusted: the manifest is one publish uploaded complete, with the
	// headers it gives (its SHA-256s are in sum unless Options.Full).
	trusted bool
	// current: the manifest is the build's own, complete, with these
	// headers: it need not be uploaded.
	current bool
	// exists: the bucket has a manifest.json, of version ver: the build's
	// is written only over that one, where the service can tell.
	exists bool
	ver    version
	// note says why the manifest was not trusted, when the bucket holds
	// pages.
	note string
}

// reset forgets what was read of the bucket's pages.
func (r *remote) reset() {
	for i := range r.size {
		r.size[i], r.sum[i] = -1, ""
	}
	r.deletes, r.stale = r.deletes[:0], 0
}

// saw records the object key of size bytes, named with SHA-256 sum ("" when
// not known).
func (r *remote) saw(index map[string]int, key string, size int64, sum string) {
	if i, ok := index[key]; ok {
		r.size[i], r.sum[i] = size, sum
		return
	}
	r.stale++
	if r.keep < 0 || len(r.deletes) < r.keep {
		r.deletes = append(r.deletes, key)
	}
}

// readRemote finds what the bucket holds: what its manifest.json says
// when it can be trusted (one request when it is the build's own), or
// else a listing of articles/, whose pages will be checked one by one.
// dirty, when set, says why no manifest can be trusted: the last publish
// did not finish.
func (p *publisher) readRemote(ctx context.Context, dirty string) (*remote, error) {
	n := len(p.local.m.Files)
	rem := &remote{size: make([]int64, n), sum: make([]string, n), keep: -1}
	if p.opt.MaxDeletes >= 0 {
		rem.keep = p.opt.MaxDeletes + 1
	}
	rem.reset()
	manErr := p.readManifest(ctx, rem)
	if manErr == nil && rem.trusted && !p.opt.Full && dirty == "" {
		slices.Sort(rem.deletes)
		return rem, nil
	}
	// A listing's error says more than a HEAD request's (which has no
	// body): a missing bucket, refused credentials.
	rem.reset()
	listErr := p.list(ctx, rem)
	switch {
	case listErr != nil:
		return nil, listErr
	case manErr != nil:
		return nil, manErr
	}
	if dirty != "" {
		rem.note = dirty
	}
	if !slices.ContainsFunc(rem.size, func(s int64) bool { return s >= 0 }) && rem.stale == 0 {
		rem.note = "" // an empty bucket: nothing to check
	}
	slices.Sort(rem.deletes)
	return rem, nil
}

// list lists every key under articles/ into rem.
func (p *publisher) list(ctx context.Context, rem *remote) error {
	opts := &blob.ListOptions{Prefix: Prefix}
	token := blob.FirstPageToken
	for {
		var (
			objs []*blob.ListObject
			next []byte
		)
		err := p.retry(ctx, func(ctx context.Context, _ func(int)) error {
			var err error
			objs, next, err = p.bucket.ListPage(ctx, token, listPageSize, opts)
			if isNotFound(err) {
				if ok, aerr := p.bucket.IsAccessible(ctx); aerr == nil && ok {
					return fmt.Errorf("%w: %w", errRaced, err)
				}
			}
			return err
		})
		if err != nil {
			return explainList(err)
		}
		for _, o := range objs {
			if !o.IsDir && !strings.HasSuffix(o.Key, "/") {
				rem.saw(p.index, o.Key, o.Size, "")
			}
		}
		if len(next) == 0 {
			return nil
		}
		token = next
	}
}

// damagedError is a manifest.json whose bytes are not a manifest.
type damagedError struct{ err error }

func (e *damagedError) Error() string { return e.err.Error() }

// readError remembers the error of a read.
type readError struct {
	r   io.Reader
	err error
}

func (r *readError) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF {
		r.err = err
	}
	return n, err
}

// readManifest reads what the bucket's manifest.json says into rem.
func (p *publisher) readManifest(ctx context.Context, rem *remote) error {
	var a *blob.Attributes
	err := p.retry(ctx, func(ctx context.Context, _ func(int)) error {
		var err error
		a, err = p.bucket.Attributes(ctx, manifest.Name)
		return err
	})
	if isNotFound(err) {
		rem.note = "the bucket has no " + manifest.Name
		return nil
	}
	if err != nil {
		return explain("reading the attributes of "+manifest.Name, err)
	}
	rem.exists, rem.ver = true, versionOf(a)
	complete := a.Metadata[MetaState] == StateComplete && p.sameHeaders(a)
	if complete && a.Metadata[MetaSHA256] == p.local.sum && a.Size == int64(len(p.local.data)) {
		// The build's own manifest: no need to read it.
		rem.trusted, rem.current = true, true
		for i, f := range p.local.m.Files {
			rem.size[i], rem.sum[i] = f.Size, f.SHA256
		}
		return nil
	}
	if a.Size > maxManifestSize {
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%d bytes)", manifest.Name, a.Size)
		return nil
	}
	var h hash.Hash
	err = p.retry(ctx, func(ctx context.Context, kick func(n int)) error {
		rem.reset()
		r, err := p.bucket.NewReader(ctx, manifest.Name, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		h = sha256.New()
		in := &readError{r: io.TeeReader(io.LimitReader(kicking{r, kick}, maxManifestSize), h)}
		_, err = manifest.ScanFiles(in, func(f manifest.File) error {
			rem.saw(p.index, f.Path, f.Size, f.SHA256)
			return ctx.Err()
		})
		if err == nil {
			// The rest, which the decoder did not need: white space only,
			// and part of the bytes the SHA-256 covers.
			rest, rerr := io.ReadAll(io.LimitReader(in, 4<<10))
			if rerr == nil && len(bytes.TrimSpace(rest)) > 0 {
				err = errors.New("reading manifest: more after the JSON value")
			}
		}
		switch {
		case in.err != nil:
			return in.err // the read failed: tried again if it may pass
		case err != nil && ctx.Err() == nil:
			return &damagedError{err}
		}
		return err
	})
	var de *damagedError
	switch {
	case errors.As(err, &de):
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%s)", manifest.Name, firstLine(de.Error()))
	case isNotFound(err):
		rem.note = "the bucket has no " + manifest.Name
		rem.exists, rem.ver = false, version{}
	case err != nil && !errors.Is(err, context.Canceled) && kindOf(err) == Other:
		// Its bytes do not match the service's checksum, or it cannot be
		// read for another reason than access: the pages tell instead.
		rem.note = fmt.Sprintf("the bucket's %s cannot be read (%s)", manifest.Name, detail(err))
	case err != nil:
		return explain("reading "+manifest.Name, err)
	case a.Metadata[MetaState] == StatePartial:
		rem.note = "a publish to the bucket was interrupted"
	case !complete || a.Metadata[MetaSHA256] != hex.EncodeToString(h.Sum(nil)):
		rem.note = fmt.Sprintf("the bucket's %s was not uploaded by feedgen publish with these headers", manifest.Name)
	default:
		rem.trusted = true
		return nil
	}
	rem.reset()
	return nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
