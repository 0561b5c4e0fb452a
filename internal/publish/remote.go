package publish

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/feedgen/feedgen/internal/manifest"
	"gocloud.dev/blob"
)

// listPageSize is how many keys one list request asks for (S3's most).
const listPageSize = 1000

// maxManifestSize bounds the bucket's manifest.json that publish reads: a
// larger one is taken as damaged.
const maxManifestSize = 1 << 30

// remote is what the bucket holds.
type remote struct {
	// listed maps every key under articles/ to its size: as the trusted
	// manifest names them, or as a listing found them.
	listed map[string]int64
	// sums maps each page the bucket's manifest names to its SHA-256,
	// when that manifest can be trusted; nil when it cannot.
	sums map[string]string
	// trusted: the manifest is one publish uploaded complete, with the
	// headers it gives (its SHA-256s are in sums unless Options.Full);
	// data are its bytes.
	trusted bool
	data    []byte
	// current: the manifest is the build's own, complete, with these
	// headers: it need not be uploaded.
	current bool
	// note says why the manifest was not trusted, when the bucket holds
	// pages.
	note string
}

// readRemote finds what the bucket holds: what its manifest.json says
// when it can be trusted (one request when it is the build's own), or
// else a listing of articles/, whose pages will be checked one by one.
func (p *publisher) readRemote(ctx context.Context) (*remote, error) {
	rem := &remote{}
	manErr := p.readManifest(ctx, rem)
	if manErr == nil && rem.trusted && !p.opt.Full {
		return rem, nil
	}
	// A listing's error says more than a HEAD request's (which has no
	// body): a missing bucket, refused credentials.
	listed, listErr := p.list(ctx)
	switch {
	case listErr != nil:
		return nil, listErr
	case manErr != nil:
		return nil, manErr
	}
	// Its pages will be checked; a trusted manifest (with --full) is
	// still marked partial before the first upload.
	rem.listed, rem.sums = listed, nil
	if len(listed) == 0 {
		rem.note = ""
	}
	return rem, nil
}

// list returns every key under articles/ with its size.
func (p *publisher) list(ctx context.Context) (map[string]int64, error) {
	listed := map[string]int64{}
	opts := &blob.ListOptions{Prefix: Prefix}
	token := blob.FirstPageToken
	for {
		var (
			objs []*blob.ListObject
			next []byte
		)
		err := p.retry(ctx, func() error {
			var err error
			objs, next, err = p.bucket.ListPage(ctx, token, listPageSize, opts)
			return err
		})
		if err != nil {
			return nil, explainList(err)
		}
		for _, o := range objs {
			if !o.IsDir {
				listed[o.Key] = o.Size
			}
		}
		if len(next) == 0 {
			return listed, nil
		}
		token = next
	}
}

// readManifest reads what the bucket's manifest.json says into rem.
func (p *publisher) readManifest(ctx context.Context, rem *remote) error {
	var a *blob.Attributes
	err := p.retry(ctx, func() error {
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
	complete := a.Metadata[MetaState] == StateComplete && p.sameHeaders(a)
	if complete && a.Metadata[MetaSHA256] == p.local.sum && a.Size == int64(len(p.local.data)) {
		// The build's own manifest: no need to read it.
		rem.trusted, rem.current, rem.data = true, true, p.local.data
		rem.listed, rem.sums = named(p.local.m)
		return nil
	}
	if a.Size > maxManifestSize {
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%d bytes)", manifest.Name, a.Size)
		return nil
	}
	var data []byte
	err = p.retry(ctx, func() error {
		var err error
		data, err = p.bucket.ReadAll(ctx, manifest.Name)
		return err
	})
	switch {
	case isNotFound(err):
		rem.note = "the bucket has no " + manifest.Name
		return nil
	case err != nil && !errors.Is(err, context.Canceled) && kindOf(err) == Other:
		// Its bytes do not match the service's checksum, or it cannot be
		// read for another reason than access: the pages tell instead.
		rem.note = fmt.Sprintf("the bucket's %s cannot be read (%s)", manifest.Name, detail(err))
		return nil
	case err != nil:
		return explain("reading "+manifest.Name, err)
	}
	m, err := manifest.Parse(data)
	if err == nil {
		if ps := m.Validate(); len(ps) > 0 {
			err = ps
		}
	}
	if err == nil {
		for _, f := range m.Files {
			if !strings.HasPrefix(f.Path, Prefix) {
				err = fmt.Errorf("it lists %s, outside %s", f.Path, Prefix)
				break
			}
		}
	}
	switch {
	case err != nil:
		rem.note = fmt.Sprintf("the bucket's %s is damaged (%s)", manifest.Name, firstLine(err.Error()))
	case a.Metadata[MetaState] == StatePartial:
		rem.note = "a publish to the bucket was interrupted"
	case !complete || a.Metadata[MetaSHA256] != sha256Hex(data):
		rem.note = fmt.Sprintf("the bucket's %s was not uploaded by feedgen publish with these headers", manifest.Name)
	default:
		rem.trusted, rem.data = true, data
		rem.listed, rem.sums = named(m)
	}
	return nil
}

// named maps each page of m to its size and to its SHA-256.
func named(m *manifest.Manifest) (sizes map[string]int64, sums map[string]string) {
	sizes = make(map[string]int64, len(m.Files))
	sums = make(map[string]string, len(m.Files))
	for _, f := range m.Files {
		sizes[f.Path], sums[f.Path] = f.Size, f.SHA256
	}
	return sizes, sums
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
