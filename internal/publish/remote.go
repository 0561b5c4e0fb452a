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
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// listPageSize is how many keys one list request asks for (S3's most).
const listPageSize = 1000

// maxManifestSize bounds the bucket's manifest.json that publish reads: a
// larger one is taken as damaged. It is read as a stream, never whole.
const maxManifestSize = 1 << 30

// held is what the bucket is known to hold at the key of one of the
// build's files.
type held uint8

const (
	heldUnknown held = iota // not known: checked (its attributes, a folder's bytes) when its size is the build's
	heldSame                // the build's bytes
	heldOther               // other bytes
	// heldNone: nothing, as far as publish knows: a file that an index
	// of the build names, which the bucket's manifest and its record of
	// what it keeps do not name (see markNew).
	heldNone
)

// remote is what the bucket holds, as the build's pages see it. Its size
// is the build's: a bucket's manifest or listing is read as a stream and
// compared with the build page by page, and of the keys the build does
// not have, no more are kept than could be deleted.
type remote struct {
	// size[i] is the size of the object at the key of the build's page i,
	// -1 when the bucket has none, or it is not known: as the trusted
	// manifest (or what it names) says, or as a listing found it; held[i]
	// is what it holds.
	size []int64
	held []held
	// deletes are keys under articles/ that the build does not have,
	// sorted once read: all of them, or the first bound when there are
	// more (stale counts them all).
	deletes []string
	stale   int
	bound   int // -1: no bound
	// trusted: the manifest is one publish uploaded complete, with the
	// headers it gives (what it lists is in size and held unless
	// Options.Full).
	trusted bool
	// whole: the manifest was read whole, one publish uploaded complete
	// (whatever its headers): what it names can be known.
	whole bool
	// current: the manifest is the build's own, complete, with these
	// headers: it need not be uploaded.
	current bool
	// exists: the bucket has a manifest.json, of version ver: the build's
	// is written only over that one, where the service can tell.
	exists bool
	ver    version
	// manifest is the hex SHA-256 of the bucket's manifest.json, when it
	// was read whole.
	manifest string
	// note says why the manifest was not used, when the bucket holds
	// pages: the bucket is then listed.
	note string
	// listed: articles/ was listed (and said so, see sayListing).
	listed bool

	// indexes are the files that the bucket's manifest lists and that
	// name others (chunk indexes): what it names is read through them.
	indexes []manifest.File
	// named holds the files (chunks) that the bucket's manifest names and
	// the build does not have, with their sizes, up to
	// maxNamed(len(size)) of them (overflow: it named more); namesKnown
	// says that the manifest was read whole, one publish uploaded
	// complete, and named is all of them.
	named      map[string]int64
	overflow   bool
	namesKnown bool
	// same: the bucket's manifest is the build's, complete (its bytes;
	// its headers may differ).
	same bool
	// deleteChunks: a chunk the build does not have is deleted when named
	// does not hold it (see decideChunks); else it is kept.
	deleteChunks bool
	// before is the bucket's record of the files it keeps (KeptName),
	// when it goes with its manifest.
	before []keptFile
	// keep are the files (chunks) that the build does not have and that
	// stay, up to maxNamed(len(size)) of them (partial: there are more):
	// the record written once the build's manifest is there; kept counts
	// them all, and keptWhy says why they stay, for a dry run.
	keep    []keptFile
	partial bool
	kept    int
	keptWhy string
	// keptThere: the bucket holds a record of what it keeps.
	keptThere bool
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
// back), a chunk or a collection's index of the chunks layout, a
// collection's reader feed (layout.Built), or the
// temporary file of one that a stopped publish to a bucket on disk left
// (fileblob's KEY.<hex>.tmp). A publish deletes no other key: a web
// root's articles/index.html, or a source article (*.md) of a bucket
// folder that is a site's content, is another tool's, or a person's.
// The temporary file of publish's own record of what the bucket keeps
// (KeptName) is one too.
func buildWrites(key string) bool {
	if base, ok := strings.CutSuffix(key, ".tmp"); ok {
		if i := strings.LastIndexByte(base, '.'); i > 0 && isHex(base[i+1:]) {
			key = base[:i]
			if key == KeptName {
				return true
			}
		}
	}
	return layout.Built(key)
}

// immutable reports whether a file at p is named by its bytes' digest.
func immutable(p string) bool { return layout.Classify(p).Immutable() }

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
		r.size[i], r.held[i] = -1, heldUnknown
	}
	r.deletes, r.stale, r.staleChunks = r.deletes[:0], 0, false
	r.keep, r.partial, r.kept = r.keep[:0], false, 0
	r.foreign, r.foreignNames = 0, r.foreignNames[:0]
}

// heldOf returns what the bucket holds at the key of the build's file f,
// said to have the SHA-256 sum ("" when not known).
func heldOf(f manifest.File, sum string) held {
	switch {
	case sum == "":
		return heldUnknown
	case sum == f.SHA256:
		return heldSame
	}
	return heldOther
}

// saw records the object key of size bytes, named with SHA-256 sum ("" when
// not known): a key of the bucket's trusted manifest or of a listing.
// Chunks that the build does not have are kept unless deleteChunks
// allows their deletion.
func (p *publisher) saw(r *remote, key string, size int64, sum string) {
	if i, ok := p.index[key]; ok {
		r.size[i], r.held[i] = size, heldOf(p.local.m.Files[i], sum)
		return
	}
	if key == KeptName {
		r.keptThere = true
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
	if k.Immutable() && (!r.deleteChunks || hasKey(r.named, key)) {
		r.keepFile(key, size)
		return
	}
	r.delete(key, k)
}

// delete records that the object key, of kind k, goes.
func (r *remote) delete(key string, k layout.Kind) {
	r.stale++
	r.staleChunks = r.staleChunks || k.Immutable() || k.Names()
	if r.bound < 0 || len(r.deletes) < r.bound {
		r.deletes = append(r.deletes, key)
	}
}

// keepFile records that the file key, of size bytes, which the build
// does not have, stays in the bucket for one more publish.
func (r *remote) keepFile(key string, size int64) {
	r.kept++
	if len(r.keep) < maxNamed(len(r.size)) {
		r.keep = append(r.keep, keptFile{Path: key, Size: size})
	} else {
		r.partial = true
	}
}

// complete reports whether keep names every file kept.
func (r *remote) complete() bool { return !r.partial }

// maxNamed bounds the chunks that the bucket's manifest names and a build
// of n files does not have that publish keeps in memory: the build's
// size, and as many more as a publish deletes by default. A manifest that
// names more is one whose names are not known (its chunks are kept, for
// a later publish to delete).
func maxNamed(n int) int { return n + DefaultMaxDeletes }

// name records a file (a chunk) of size bytes that the bucket's manifest
// names and the build does not have; it reports whether it is new.
func (r *remote) name(key string, size int64) bool {
	if r.named == nil {
		r.named = map[string]int64{}
	}
	if _, ok := r.named[key]; ok {
		return false
	}
	if len(r.named) >= maxNamed(len(r.size)) {
		r.overflow = true
		return false
	}
	r.named[key] = size
	return true
}

// forget forgets the chunks the bucket's manifest names.
func (r *remote) forget() {
	clear(r.named)
	r.overflow = false
}

// decideChunks decides whether a publish that lists the bucket may
// delete the chunks that neither the build nor the bucket's manifest
// names, and says why it keeps them otherwise. A chunk is read through
// an index, which a CDN or an edge may hold for its cache lifetime after
// the index changed: so a chunk goes only once two manifests in a row,
// the bucket's and the build's, do not name it. When that cannot be
// known, no chunk the build does not have is deleted (a later publish,
// which can know, does it):
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
		r.keptWhy = keptNamed
	}
}

// keptNamed says why a chunk the build does not have stays, when the
// bucket's manifest names it.
const keptNamed = "the bucket's previous manifest names them, and a cached index may still read them"

// readRemote finds what the bucket holds. When its manifest.json can be
// trusted (one publish uploaded complete, and the last publish finished)
// it does without listing the bucket: the manifest says what it holds
// (one request when it is the build's own); else the manifest, what the
// indexes it lists with other bytes than the build's name (read from the
// bucket: after one change, a handful), and publish's record of what
// the bucket keeps (KeptName; see readChanges). Else it lists articles/
// once, says so, and each page there of the size of the build's is
// checked by its attributes. dirty, when set, says why no manifest can
// be trusted: the last publish did not finish.
func (p *publisher) readRemote(ctx context.Context, dirty string) (*remote, error) {
	n := len(p.local.m.Files)
	rem := &remote{size: make([]int64, n), held: make([]held, n), bound: -1}
	if p.opt.MaxDeletes >= 0 {
		rem.bound = p.opt.MaxDeletes + 1
	}
	rem.reset()
	manErr := p.readManifest(ctx, rem)
	if manErr == nil && rem.trusted && !p.opt.Full && dirty == "" {
		if rem.current {
			rem.decideChunks(dirty)
			return rem, nil
		}
		ok, err := p.readKept(ctx, rem)
		if err != nil {
			return nil, err
		}
		if ok {
			err := p.readChanges(ctx, rem)
			if err == nil {
				slices.Sort(rem.deletes)
				return rem, nil
			}
			var mm *manifest.Mismatch
			if ctx.Err() != nil || errors.As(err, &mm) {
				return nil, err // a build that changed since its manifest: not the bucket's doing
			}
			rem.note = fmt.Sprintf("the bucket's chunk indexes cannot be read (%s)", firstLine(err.Error()))
		}
	}
	// The bucket is listed. What the bucket's manifest names that the
	// build does not have is read first: chunks it names stay.
	if manErr == nil && rem.whole {
		if err := p.readNamed(ctx, rem); err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			if rem.note == "" {
				rem.note = fmt.Sprintf("the bucket's chunk indexes cannot be read (%s)", firstLine(err.Error()))
			}
			rem.whole = false
		}
	}
	rem.namesKnown = manErr == nil && rem.whole && !rem.overflow
	rem.decideChunks(dirty)
	if dirty != "" {
		rem.note = dirty
	}
	if rem.note == "" && p.opt.Full {
		rem.note = "--full trusts no manifest"
	}
	// A listing's error says more than a HEAD request's (which has no
	// body): a missing bucket, refused credentials.
	rem.reset()
	// A chunk's name is its digest: one of the build's that a listing
	// finds of the build's size holds the build's bytes, with publish's
	// headers, when the bucket's manifest is publish's, with them (the
	// last publish did not finish, or left no record of what the bucket
	// keeps); not when another tool may have written it, or with --full.
	trustNames := manErr == nil && rem.trusted && !p.opt.Full
	listErr := p.list(ctx, Prefix, rem, func(key string, size int64) {
		sum := ""
		if i, ok := p.index[key]; ok && trustNames && immutable(key) && size == p.local.m.Files[i].Size {
			sum = p.local.m.Files[i].SHA256
		}
		p.saw(rem, key, size, sum)
	})
	switch {
	case listErr != nil:
		return nil, listErr
	case manErr != nil:
		return nil, manErr
	}
	if !slices.ContainsFunc(rem.size, func(s int64) bool { return s >= 0 }) && rem.stale == 0 && rem.kept == 0 {
		rem.note = "" // an empty bucket: nothing to check
	}
	slices.Sort(rem.deletes)
	return rem, nil
}

// readChanges finds, without listing the bucket, what it holds besides
// what its trusted manifest lists (read already): what that manifest
// names through its indexes that the build does not have (they stay, for
// one more publish: see decideChunks), through the indexes that the
// build does not have with the same bytes (read from the bucket); what
// the record of the publish before says it keeps (rem.before: the chunks
// the manifest before the bucket's named), which go unless the build has
// them again; and which of the build's chunks the bucket does not hold
// (see markNew).
func (p *publisher) readChanges(ctx context.Context, rem *remote) error {
	if err := p.readNamed(ctx, rem); err != nil {
		return err
	}
	rem.namesKnown = !rem.overflow
	rem.decideChunks("")
	for key, size := range rem.named {
		rem.keepFile(key, size)
	}
	if rem.overflow {
		rem.partial = true
	}
	for _, f := range rem.before {
		if i, ok := p.index[f.Path]; ok {
			if rem.size[i] < 0 {
				rem.size[i], rem.held[i] = f.Size, heldSame // a revert: the bucket kept it
			}
			continue
		}
		if hasKey(rem.named, f.Path) {
			continue // the bucket's manifest names it: kept already
		}
		if rem.deleteChunks {
			rem.delete(f.Path, layout.Classify(f.Path))
		} else {
			rem.keepFile(f.Path, f.Size)
		}
	}
	return p.markNew(ctx, rem)
}

// readNamed records in rem.named what the bucket's manifest names and
// the build does not have, through the indexes it lists that the build
// does not have with the same bytes (an index with the build's bytes
// names what the build's does): each read from the bucket, checked
// against the manifest's size and SHA-256 (after one change, a handful).
// A chunk they name that the build has is in the bucket, with the size
// they give and the SHA-256 its name gives: publish uploads chunks before
// the indexes that name them.
func (p *publisher) readNamed(ctx context.Context, rem *remote) error {
	for _, f := range rem.indexes {
		if i, ok := p.index[f.Path]; ok && p.local.m.Files[i].SHA256 == f.SHA256 {
			continue
		}
		if err := p.readNames(ctx, rem, f); err != nil {
			return fmt.Errorf("%s: %w", f.Path, err)
		}
	}
	return nil
}

// readNames reads the file f of the bucket, which names others, and
// records what it names (see readNamed).
func (p *publisher) readNames(ctx context.Context, rem *remote, f manifest.File) error {
	if f.Size > manifest.MaxPageSize {
		return fmt.Errorf("%d bytes", f.Size)
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
	if err != nil {
		return err
	}
	refs, err := namesOf(f.Path, data)
	if err != nil {
		return err
	}
	for _, r := range refs {
		if i, ok := p.index[r.Path]; ok {
			if rem.size[i] < 0 {
				rem.size[i], rem.held[i] = r.Size, heldSame
			}
			continue // a leaf the build has names what the build's does
		}
		rem.name(r.Path, r.Size)
		if layout.Classify(r.Path).Names() {
			// A leaf the build does not have: what it names, from the
			// bucket (after one change, one a collection).
			sum, _ := chunk.ParseLeafPath(r.Path)
			lf := manifest.File{Path: r.Path, Size: r.Size, SHA256: hex.EncodeToString(sum[:])}
			if err := p.readNames(ctx, rem, lf); err != nil {
				return fmt.Errorf("%s: %w", r.Path, err)
			}
		}
	}
	return nil
}

// namesOf returns the files that a file naming others (an index's root,
// a leaf), at path p, of bytes data, names, with their sizes.
func namesOf(p string, data []byte) ([]keptFile, error) {
	named, err := manifest.NamedBy(p, data)
	if err != nil {
		return nil, err
	}
	refs := make([]keptFile, len(named))
	for k, n := range named {
		refs[k] = keptFile{Path: n.Path, Size: n.Size}
	}
	return refs, nil
}

// markNew decides, for every file of the build that its manifest does
// not list (a chunk: its indexes name it), whether the bucket holds it,
// without listing the bucket: one that an index to upload names (its
// bytes are not the bucket's) is there only when the bucket's manifest
// or its record of what it keeps names it (rem.size says so already);
// else it goes up. Every other one is named by an index the bucket holds
// with the same bytes, which publish uploaded after its chunks: it is
// there.
func (p *publisher) markNew(ctx context.Context, rem *remote) error {
	files := p.local.m.Files
	var visit func(i int) error
	visit = func(i int) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		data, err := manifest.ReadPage(p.output, files[i], nil)
		if err != nil {
			return changedOutput(err)
		}
		refs, err := namesOf(files[i].Path, data)
		if err != nil {
			return fmt.Errorf("%s: %w", files[i].Path, err)
		}
		for _, r := range refs {
			j, ok := p.index[r.Path]
			if !ok || rem.size[j] >= 0 || rem.held[j] == heldNone {
				continue
			}
			rem.held[j] = heldNone
			if layout.Classify(r.Path).Names() {
				if err := visit(j); err != nil {
					return err
				}
			}
		}
		return nil
	}
	for i, f := range files {
		k := layout.Classify(f.Path)
		if k.Listed() && k.Names() && (rem.size[i] != f.Size || rem.held[i] != heldSame) {
			if err := visit(i); err != nil {
				return err
			}
		}
	}
	for i, f := range files {
		if rem.size[i] < 0 && rem.held[i] != heldNone && !layout.Classify(f.Path).Listed() {
			rem.size[i], rem.held[i] = f.Size, heldSame
		}
	}
	return nil
}

// changedOutput explains an error reading a file of the build: one that
// does not match its manifest (a build ran since).
func changedOutput(err error) error {
	var mm *manifest.Mismatch
	if errors.As(err, &mm) {
		return fmt.Errorf("%w: the output changed since its manifest was written; run feedgen build again, and publish once it is done", err)
	}
	return err
}

// sayListing says, once the listing of a bucket finds a key, why the
// bucket is listed and what it costs: a bucket that holds nothing is
// listed without a word (a first publish).
func (p *publisher) sayListing(rem *remote) {
	why := rem.note
	if why == "" {
		why = "the bucket's manifest.json cannot be used"
	}
	files := p.local.m.Files
	if p.opt.Folder != "" {
		var size int64
		for _, f := range files {
			size += f.Size
		}
		p.notices.Say("%s: walking %s once to see what the folder holds, then reading each file of the build there (up to %s, %s)",
			why, Prefix, human.Plural(len(files), "file"), human.Bytes(size))
		return
	}
	p.notices.Say("%s: listing %s once to see what the bucket holds (about %s of %d keys), then checking each file of the build there by its attributes (up to %s, %d at a time)",
		why, Prefix, human.Plural(len(files)/listPageSize+1, "request"), listPageSize, human.Plural(len(files), "request"), p.opt.Workers)
}

// list lists every key under prefix, calling saw with each key and its
// size: a bucket on disk in one walk of the folder (see walk), any other
// in one pass of paged requests. The first key found says why the
// bucket is listed (sayListing).
func (p *publisher) list(ctx context.Context, prefix string, rem *remote, saw func(key string, size int64)) error {
	rem.listed = true
	said := false
	see := func(key string, size int64) {
		if !said {
			said = true
			p.sayListing(rem)
		}
		saw(key, size)
	}
	p.step(ctx, "list "+prefix)
	if p.opt.Folder != "" {
		return p.walk(ctx, prefix, see)
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
				see(o.Key, o.Size)
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
			rem.trusted, rem.whole, rem.current, rem.same = true, true, true, true
			rem.manifest = p.local.sum
			for i, f := range p.local.m.Files {
				rem.size[i], rem.held[i] = f.Size, heldSame
			}
		}
		return err
	}
	if a.Size > maxManifestSize {
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%d bytes)", manifest.Name, a.Size)
		return nil
	}
	var h hash.Hash
	err = p.retry(ctx, "reading "+manifest.Name, func(ctx context.Context, kick func(n int)) error {
		h = sha256.New()
		return p.scanManifest(ctx, rem, h, kick)
	})
	var de *damagedError
	// Its names are all the chunks it names when publish uploaded it
	// complete, whatever its headers.
	sum := ""
	if h != nil {
		sum = hex.EncodeToString(h.Sum(nil))
	}
	rem.whole = err == nil && (mirror || a.Metadata[MetaState] == StateComplete && a.Metadata[MetaSHA256] == sum)
	if rem.whole {
		rem.manifest = sum
	}
	rem.same = rem.whole && sum == p.local.sum
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
// its bytes into h: the files it lists are seen (see publisher.saw), but
// the chunks the build does not have, which are only named (kept or
// deleted by what a listing finds); the chunk indexes it lists go to
// rem.indexes. kick is told of the bytes as they come in.
func (p *publisher) scanManifest(ctx context.Context, rem *remote, h hash.Hash, kick func(int)) error {
	rem.reset()
	rem.forget()
	rem.indexes = rem.indexes[:0]
	r, err := p.bucket.NewReader(ctx, manifest.Name, nil)
	if err != nil {
		return err
	}
	defer r.Close()
	in := &readError{r: io.TeeReader(io.LimitReader(kicking{r, kick}, maxManifestSize), h)}
	_, err = manifest.ScanFiles(in, func(f manifest.File) error {
		k := layout.Classify(f.Path)
		if k.Names() {
			rem.indexes = append(rem.indexes, f)
		}
		if _, ok := p.index[f.Path]; !ok && k.Immutable() {
			rem.name(f.Path, f.Size) // kept or deleted by what a listing finds
		} else {
			p.saw(rem, f.Path, f.Size, f.SHA256)
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
		return in.err // the read failed: tried again if it may pass
	case err != nil && ctx.Err() == nil:
		return &damagedError{err}
	}
	return err
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
