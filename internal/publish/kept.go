package publish

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
)

// KeptName is the key of publish's record of the files the bucket keeps
// for one more publish: the chunks (immutable files) that the manifest
// before the bucket's named and the bucket's does not (docs/contract.md
// §12: a chunk goes once neither the new manifest nor the one before it
// names it). The publish that uploads a manifest writes the record that
// goes with it, naming that manifest by its SHA-256; the next publish
// deletes what the record names and the new build does not have, and
// keeps what the bucket's manifest names and the build does not, without
// listing the bucket: what the bucket holds is then the bucket's
// manifest, what its indexes name, and the record.
//
// It lies under chunk.Dir, where no build writes a file of that name (a
// chunk is named by its digest), so that a bucket holds nothing outside
// articles/, manifest.json and the lock. A bucket of the pages layout
// that keeps nothing has none.
const KeptName = chunk.Dir + "/kept.json"

// keptFormat is the version of the record's format.
const keptFormat = 1

// keptRecord is the record KeptName holds.
type keptRecord struct {
	Format int `json:"format"`
	// Manifest is the hex SHA-256 of the manifest.json the record goes
	// with: a record of another one (a publish interrupted, or another
	// tool that wrote the manifest) is not used.
	Manifest string `json:"manifest"`
	// Complete is false when the record names only some of the files
	// kept (more than publish holds in memory: see maxNamed); the next
	// publish lists the bucket instead.
	Complete bool       `json:"complete"`
	Files    []keptFile `json:"files"`
}

// keptFile is a file the bucket keeps: its key and size.
type keptFile struct {
	Path string `json:"path"`
	Size int64  `json:"size"`
}

// marshal writes the record, a file a line, sorted by path.
func (k *keptRecord) marshal() []byte {
	slices.SortFunc(k.Files, func(a, b keptFile) int { return strings.Compare(a.Path, b.Path) })
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"format":%d,"manifest":%q,"complete":%t,"files":[`, keptFormat, k.Manifest, k.Complete)
	for i, f := range k.Files {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString("\n" + `{"path":`)
		b.Write(listing.AppendString(nil, f.Path))
		b.WriteString(`,"size":`)
		b.WriteString(strconv.FormatInt(f.Size, 10))
		b.WriteByte('}')
	}
	b.WriteString("]}\n")
	return b.Bytes()
}

// parseKept reads a record, checking what it names: a chunk's path (or
// another immutable file's, a name a feedgen build writes) and a size.
func parseKept(data []byte) (*keptRecord, error) {
	var k keptRecord
	if err := json.Unmarshal(data, &k); err != nil {
		return nil, err
	}
	if k.Format != keptFormat {
		return nil, fmt.Errorf("format %d, not %d", k.Format, keptFormat)
	}
	if !isSHA256Hex(k.Manifest) {
		return nil, fmt.Errorf("manifest %q is not a SHA-256", k.Manifest)
	}
	for _, f := range k.Files {
		if !immutable(f.Path) || f.Size < 0 {
			return nil, fmt.Errorf("%q (%d bytes) is not a file a build names by its digest", f.Path, f.Size)
		}
	}
	return &k, nil
}

func isSHA256Hex(s string) bool { return len(s) == 64 && isHex(s) }

// readKept reads the bucket's record of the files it keeps (KeptName)
// into rem.before, and reports whether it goes with the bucket's
// manifest (of SHA-256 rem.manifest), so that a publish can do without
// listing the bucket; when it cannot, rem.note says why. A bucket whose
// manifest names no chunk (of the pages layout) may have none: it keeps
// nothing.
func (p *publisher) readKept(ctx context.Context, rem *remote) (bool, error) {
	var data []byte
	err := p.retry(ctx, "reading "+KeptName, func(ctx context.Context, kick func(int)) error {
		if p.opt.Folder != "" {
			if err := p.regularObject(KeptName); err != nil {
				return err
			}
		}
		r, err := p.bucket.NewReader(ctx, KeptName, nil)
		if err != nil {
			return err
		}
		defer r.Close()
		data, err = io.ReadAll(io.LimitReader(kicking{r, kick}, maxManifestSize+1))
		return err
	})
	// A folder's is not there when regularObject finds nothing.
	missing := isNotFound(err) || errors.Is(err, fs.ErrNotExist)
	rem.keptThere = !missing
	var why string
	switch {
	case missing && len(rem.indexes) == 0:
		return true, nil
	case missing:
		rem.note = "the bucket has no record of the chunks it keeps (" + KeptName + ": an earlier feedgen published it)"
		return false, nil
	case err != nil && (errors.Is(err, context.Canceled) || kindOf(err) != Other):
		return false, explain("reading "+KeptName, err)
	case err != nil:
		why = fmt.Sprintf("cannot be read (%s: %s)", KeptName, detail(err))
	}
	if why == "" {
		k, perr := parseKept(data)
		switch {
		case perr != nil:
			why = fmt.Sprintf("is damaged (%s: %s)", KeptName, firstLine(perr.Error()))
		case k.Manifest != rem.manifest:
			why = "is not its manifest.json's (" + KeptName + "; another tool wrote the manifest, or a publish was cut short)"
		case !k.Complete:
			why = "names only some of them (" + KeptName + ")"
		default:
			rem.before = k.Files
			return true, nil
		}
	}
	rem.note = "the bucket's record of the chunks it keeps " + why
	return false, nil
}

// putKept writes the record of the files the bucket keeps once the
// build's manifest is there: those rem found that the build does not
// have and that stay. A bucket that keeps nothing and whose build is not
// of the chunks layout has no record: one there goes.
func (p *publisher) putKept(ctx context.Context, rem *remote) error {
	if len(rem.keep) == 0 && rem.complete() && !p.res.Chunked {
		if !rem.keptThere {
			return nil
		}
		p.changed.Store(true)
		err := p.retry(ctx, "deleting "+KeptName, func(ctx context.Context, _ func(int)) error {
			if err := p.fence(); err != nil {
				return err
			}
			return p.bucket.Delete(ctx, KeptName)
		})
		if err != nil && !isNotFound(err) {
			return explain("deleting "+KeptName, err)
		}
		return nil
	}
	k := keptRecord{Manifest: p.local.sum, Complete: rem.complete(), Files: rem.keep}
	data := k.marshal()
	opts := p.writerOptions(KeptName, data, map[string]string{MetaSHA256: sha256Hex(data)})
	opts.CacheControl = "no-store"
	return p.upload(ctx, KeptName, data, opts)
}
