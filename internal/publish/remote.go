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

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
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

	// named holds the chunks that the bucket's manifest names and the
	// build does not have, up to maxNamed(len(size)) of them (overflow:
	// it named more); namesKnown says that the manifest was read whole,
	// one publish uploaded complete (whatever its headers), and named is
	// all of them.
	named      map[string]bool
	overflow   bool
	namesKnown bool
	// same: the bucket's manifest is the build's, complete (its bytes;
	// its headers may differ).
	same bool
	// deleteChunks: a chunk the build does not have is deleted when named
	// does not hold it (see decideChunks); else it is kept.
	deleteChunks bool
	// kept counts the chunks a listing found that the build does not
	// have and that stay; keptWhy says why, for a dry run.
	kept    int
	keptWhy string
	// staleChunks: chunks or indexes are among the deletions.
	staleChunks bool
	// foreign counts the keys under articles/ that the build does not
	// have and that no feedgen build writes (see buildWrites): never
	// deleted; foreignNames are the first maxForeignNames of them.
	foreign      int
	foreignNames []string
}

// maxForeignNames bounds the keys that no feedgen build writes that a
// publish names.
const maxForeignNames = 10

// buildWrites reports whether a feedgen build (or a publish, on disk)
// writes a file at key: a page (listing.ParsePageKey reads its path
// back), a chunk or a collection's index of the chunks layout, or the
// temporary file of one that a stopped publish to a bucket on disk left
// (fileblob's KEY.<hex>.tmp). A publish deletes no other key: a web
// root's articles/index.html, or a source article (*.md) of a bucket
// folder that is a site's content, is another tool's, or a person's.
func buildWrites(key string) bool {
	if base, ok := strings.CutSuffix(key, ".tmp"); ok {
		if i := strings.LastIndexByte(base, '.'); i > 0 && isHex(base[i+1:]) {
			key = base[:i]
		}
	}
	return layout.Built(key)
}

// isHex reports whether s is one or more lowercase hex digits.
func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return s != ""
}

// reset forgets what was read of the bucket's pages.
func (r *remote) reset() {
	for i := range r.size {
		r.size[i], r.sum[i] = -1, ""
	}
	r.deletes, r.stale, r.kept, r.staleChunks = r.deletes[:0], 0, 0, false
	r.foreign, r.foreignNames = 0, r.foreignNames[:0]
}

// saw records the object key of size bytes, named with SHA-256 sum ("" when
// not known): a key of the bucket's trusted manifest or of a listing.
// Chunks that the build does not have are kept unless deleteChunks
// allows their deletion.
func (r *remote) saw(index map[string]int, key string, size int64, sum string) {
	if i, ok := index[key]; ok {
		r.size[i], r.sum[i] = size, sum
		return
	}
	if !buildWrites(key) {
		r.foreign++
		if len(r.foreignNames) < maxForeignNames {
			r.foreignNames = append(r.foreignNames, key)
		}
		return
	}
	// An immutable file (a chunk) may be named by an index of a build
	// before this one, which a cache may still hold.
	k := layout.Classify(key)
	if k.Immutable() && (!r.deleteChunks || r.named[key]) {
		r.kept++
		return
	}
	r.stale++
	r.staleChunks = r.staleChunks || k.Immutable() || k.Names()
	if r.keep < 0 || len(r.deletes) < r.keep {
		r.deletes = append(r.deletes, key)
	}
}

// maxNamed bounds the chunks that the bucket's manifest names and a build
// of n files does not have that publish keeps in memory: the build's
// size, and as many more as a publish deletes by default. A manifest that
// names more is one whose names are not known (its chunks are kept, for
// a later publish to delete).
func maxNamed(n int) int { return n + DefaultMaxDeletes }

// name records a chunk that the bucket's manifest names.
func (r *remote) name(key string) {
	if r.named == nil {
		r.named = map[string]bool{}
	}
	if len(r.named) >= maxNamed(len(r.size)) {
		r.overflow = true
		return
	}
	r.named[key] = true
}

// forget forgets the chunks the bucket's manifest names.
func (r *remote) forget() {
	clear(r.named)
	r.overflow = false
}

// decideChunks decides whether this publish may delete the chunks that
// neither the build nor the bucket's manifest names, and says why it
// keeps them otherwise. A chunk is read through an index, which a CDN or
// an edge may hold for its cache lifetime after the index changed: so a
// chunk goes only once two manifests in a row, the bucket's and the
// build's, do not name it. When that cannot be known, no chunk the build
// does not have is deleted (a later publish, which can know, does it):
//   - the bucket's manifest could not be read whole, or was not one
//     publish uploaded complete (missing, damaged, another tool's), or
//     names more chunks the build does not have than maxNamed: it may
//     name any chunk of the bucket;
//   - the last publish did not finish (dirty): it may have uploaded
//     indexes, naming chunks of its build that no manifest names, and a
//     cache may hold them;
//   - the bucket's manifest is the build's own (an unchanged build, with
//     --full, or with other headers): it does not name the chunks of the
//     manifest before it, whose indexes a cache may still hold; a publish
//     that does not change the manifest's bytes does not end their time.
func (r *remote) decideChunks(dirty string) {
	switch {
	case dirty != "":
		r.keptWhy = "the last publish did not finish, and an index it uploaded may name them"
	case r.same:
		r.keptWhy = "the bucket's manifest is the build's, and a cached index of the one before it may name them"
	case !r.namesKnown:
		r.keptWhy = "the bucket's manifest could not be read, and may name them"
	default:
		r.deleteChunks = true
		r.keptWhy = "the bucket's previous manifest names them, and a cached index may still read them"
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
	rem.decideChunks(dirty)
	if manErr == nil && rem.trusted && !p.opt.Full && dirty == "" {
		if p.opt.Folder != "" && !rem.current {
			// A folder is listed at each publish of a new build (a walk
			// of the disk, not a request per thousand keys): what another
			// tool added, removed or cut is seen; a file of the size the
			// manifest gives has its SHA-256.
			if err := p.listFolder(ctx, rem); err != nil {
				return nil, err
			}
		} else if p.opt.Folder == "" && !rem.current {
			// The bucket may hold chunks that its manifest does not name:
			// those the publish before this one kept. They go, unless
			// the manifest names them; one the build has again (a revert)
			// is checked rather than uploaded.
			err := p.list(ctx, chunk.Dir+"/", func(key string, size int64) {
				i, ok := p.index[key]
				switch {
				case !layout.Classify(key).Immutable():
				case !ok:
					rem.saw(p.index, key, size, "")
				case rem.size[i] < 0:
					rem.size[i] = size
				}
			})
			if err != nil {
				return nil, err
			}
		}
		slices.Sort(rem.deletes)
		return rem, nil
	}
	// A listing's error says more than a HEAD request's (which has no
	// body): a missing bucket, refused credentials.
	rem.reset()
	listErr := p.list(ctx, Prefix, func(key string, size int64) { rem.saw(p.index, key, size, "") })
	switch {
	case listErr != nil:
		return nil, listErr
	case manErr != nil:
		return nil, manErr
	}
	if dirty != "" {
		rem.note = dirty
	}
	if !slices.ContainsFunc(rem.size, func(s int64) bool { return s >= 0 }) && rem.stale == 0 && rem.kept == 0 {
		rem.note = "" // an empty bucket: nothing to check
	}
	slices.Sort(rem.deletes)
	return rem, nil
}

// listFolder replaces what the bucket's trusted manifest said of the
// pages of a bucket on disk by a listing of articles/, keeping the
// manifest's SHA-256 of each file of the size it gives.
func (p *publisher) listFolder(ctx context.Context, rem *remote) error {
	size, sum := slices.Clone(rem.size), slices.Clone(rem.sum)
	rem.reset()
	return p.list(ctx, Prefix, func(key string, n int64) {
		i, ok := p.index[key]
		switch {
		case !ok:
			rem.saw(p.index, key, n, "")
		case n == size[i]:
			rem.size[i], rem.sum[i] = n, sum[i]
		default:
			rem.size[i] = n
		}
	})
}

// list lists every key under prefix, calling saw with each key and its
// size.
func (p *publisher) list(ctx context.Context, prefix string, saw func(key string, size int64)) error {
	if p.opt.Folder != "" {
		return p.walk(ctx, prefix, saw)
	}
	opts := &blob.ListOptions{Prefix: prefix}
	token := blob.FirstPageToken
	for {
		var (
			objs []*blob.ListObject
			next []byte
		)
		err := p.retry(ctx, "listing "+prefix, func(ctx context.Context, _ func(int)) error {
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
				saw(o.Key, o.Size)
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
	err := p.retry(ctx, "reading the attributes of "+manifest.Name, func(ctx context.Context, _ func(int)) error {
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
	// A folder keeps no attributes: its manifest is complete when the
	// last publish to it finished (the lock says so: see readRemote), and
	// its SHA-256 is that of its bytes, read.
	mirror := p.opt.Folder != ""
	complete := mirror || a.Metadata[MetaState] == StateComplete && p.sameHeaders(manifest.Name, a)
	if ours, err := p.ownManifest(ctx, a, complete); err != nil || ours {
		if ours {
			// The build's own manifest: no need to read it.
			rem.trusted, rem.current, rem.same = true, true, true
			for i, f := range p.local.m.Files {
				rem.size[i], rem.sum[i] = f.Size, f.SHA256
			}
		}
		return err
	}
	if a.Size > maxManifestSize {
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%d bytes)", manifest.Name, a.Size)
		return nil
	}
	var h hash.Hash
	var indexes []manifest.File // the chunk indexes it lists
	err = p.retry(ctx, "reading "+manifest.Name, func(ctx context.Context, kick func(n int)) error {
		h = sha256.New()
		var serr error
		indexes, serr = p.scanManifest(ctx, rem, h, kick, indexes[:0])
		return serr
	})
	var de *damagedError
	// Its names are all the chunks it names when publish uploaded it
	// complete, whatever its headers.
	sum := ""
	if h != nil {
		sum = hex.EncodeToString(h.Sum(nil))
	}
	whole := err == nil && (mirror || a.Metadata[MetaState] == StateComplete && a.Metadata[MetaSHA256] == sum)
	if whole && len(indexes) > 0 {
		// A manifest of the chunks layout names its chunks through its
		// indexes (manifest.Marshal): read them.
		if ierr := p.readIndexes(ctx, rem, indexes); ierr != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			rem.note = fmt.Sprintf("the bucket's chunk indexes cannot be read (%s)", firstLine(ierr.Error()))
			rem.reset()
			return nil
		}
	}
	rem.namesKnown = whole && !rem.overflow
	rem.same = whole && a.Metadata[MetaSHA256] == p.local.sum
	if mirror {
		rem.same = whole && sum == p.local.sum
	}
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
	case !mirror && (!complete || a.Metadata[MetaSHA256] != sum):
		rem.note = fmt.Sprintf("the bucket's %s was not uploaded by feedgen publish with these headers", manifest.Name)
	default:
		rem.trusted = true
		// The build's own: it need not be uploaded (in a bucket of a
		// cloud, its attributes said so before it was read).
		rem.current = mirror && rem.same && a.Size == int64(len(p.local.data))
		return nil
	}
	rem.reset()
	return nil
}

// ownManifest reports whether the bucket's manifest.json, of attributes
// a (complete: uploaded whole by a publish, with its headers), is the
// build's own: a folder's is read to know.
func (p *publisher) ownManifest(ctx context.Context, a *blob.Attributes, complete bool) (bool, error) {
	if a.Size != int64(len(p.local.data)) || !complete {
		return false, nil
	}
	if p.opt.Folder == "" {
		return a.Metadata[MetaSHA256] == p.local.sum, nil
	}
	sum, err := p.sumOf(ctx, manifest.Name, a.Size)
	if err != nil && !isNotFound(err) {
		return false, explain("reading "+manifest.Name, err)
	}
	return err == nil && sum == p.local.sum, nil
}

// scanManifest reads the bucket's manifest.json into rem, once, hashing
// its bytes into h: the files it lists are seen (see remote.saw), but
// the chunks the build does not have, which are only named (kept or
// deleted by what a listing finds); it returns the chunk indexes it lists,
// appended to indexes. kick is told of the bytes as they come in.
func (p *publisher) scanManifest(ctx context.Context, rem *remote, h hash.Hash, kick func(int), indexes []manifest.File) ([]manifest.File, error) {
	rem.reset()
	rem.forget()
	r, err := p.bucket.NewReader(ctx, manifest.Name, nil)
	if err != nil {
		return indexes, err
	}
	defer r.Close()
	in := &readError{r: io.TeeReader(io.LimitReader(kicking{r, kick}, maxManifestSize), h)}
	_, err = manifest.ScanFiles(in, func(f manifest.File) error {
		k := layout.Classify(f.Path)
		if k.Names() {
			indexes = append(indexes, f)
		}
		if _, ok := p.index[f.Path]; !ok && k.Immutable() {
			rem.name(f.Path) // kept or deleted by what a listing finds
		} else {
			rem.saw(p.index, f.Path, f.Size, f.SHA256)
		}
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
		return indexes, in.err // the read failed: tried again if it may pass
	case err != nil && ctx.Err() == nil:
		return indexes, &damagedError{err}
	}
	return indexes, err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}

// readIndexes records what the chunk indexes the bucket's manifest lists
// say, their roots and their leaves: each leaf and chunk they name is in
// the bucket, with the size they give and the SHA-256 its name gives
// (publish uploads chunks and leaves before the roots that name them); a
// leaf or chunk that the build does not have is one the bucket's
// manifest names (see decideChunks). A root or leaf with the bytes of the
// build's own at its path is read from the build; any other from the
// bucket, checked against the size and SHA-256 its namer gives: after
// one change, a handful.
func (p *publisher) readIndexes(ctx context.Context, rem *remote, indexes []manifest.File) error {
	queued := map[string]bool{}
	for len(indexes) > 0 {
		f := indexes[0]
		indexes = indexes[1:]
		if f.Size > manifest.MaxPageSize {
			return fmt.Errorf("%s: %d bytes", f.Path, f.Size)
		}
		data, err := p.readNamer(ctx, f)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		named, err := manifest.NamedBy(f.Path, data)
		if err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
		for _, n := range named {
			if i, ok := p.index[n.Path]; ok {
				if rem.size[i] < 0 {
					rem.size[i], rem.sum[i] = n.Size, n.SHA256
				}
			} else {
				rem.name(n.Path)
			}
			if layout.Classify(n.Path).Names() && !queued[n.Path] {
				queued[n.Path] = true
				indexes = append(indexes, n)
			}
		}
	}
	return nil
}

// readNamer returns the bytes of f, a file of the bucket's manifest that
// names others (an index's root, a leaf): from the build when it has the
// same bytes at that path, else from the bucket, checked against f's
// size and SHA-256.
func (p *publisher) readNamer(ctx context.Context, f manifest.File) ([]byte, error) {
	if i, ok := p.index[f.Path]; ok && p.local.m.Files[i].SHA256 == f.SHA256 {
		return manifest.ReadPage(p.output, f, nil)
	}
	var data []byte
	err := p.retry(ctx, "reading "+f.Path, func(ctx context.Context, kick func(int)) error {
		if p.opt.Folder != "" {
			if err := p.regularObject(f.Path); err != nil {
				return err
			}
		}
		r, err := p.bucket.NewReader(ctx, f.Path, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = manifest.ReadChecked(kicking{r, kick}, f, nil)
		return err
	})
	return data, err
}
