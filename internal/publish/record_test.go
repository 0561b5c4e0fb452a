package publish

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"gocloud.dev/blob"
	"gocloud.dev/blob/driver"
	"gocloud.dev/gcerrors"
)

// recorder is a bucket driver over another bucket (any backend) that
// records, in the order they happen, the start and the end of every
// upload: the order tests read what the bucket saw, not what publish
// meant to do; and counts the list requests. Everything else goes
// through as it is.
type recorder struct {
	b *blob.Bucket

	mu     sync.Mutex
	events []upload
	// hook, when set, is called with each event as it happens (before an
	// upload starts writing, after it ended): a test stops a publish at a
	// given upload by cancelling its context there.
	hook func(key string, end bool)
	// lists counts the list requests (pages) asked for.
	lists atomic.Int64
}

// upload is one event of an upload: its start, or its end (the object
// is in the bucket).
type upload struct {
	key string
	end bool
}

// record returns a bucket over b that records its uploads.
func record(t *testing.T, b *blob.Bucket) (*blob.Bucket, *recorder) {
	r := &recorder{b: b}
	rb := blob.NewBucket(r)
	t.Cleanup(func() { rb.Close() })
	return rb, r
}

func (r *recorder) add(key string, end bool) {
	r.mu.Lock()
	r.events = append(r.events, upload{key, end})
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(key, end)
	}
}

// setHook sets the hook (nil: none).
func (r *recorder) setHook(hook func(key string, end bool)) {
	r.mu.Lock()
	r.hook = hook
	r.mu.Unlock()
}

// take returns the events so far, and forgets them.
func (r *recorder) take() []upload {
	r.mu.Lock()
	defer r.mu.Unlock()
	ev := r.events
	r.events = nil
	return ev
}

// order checks that every upload of events under a step, as step gives
// them (-1: not checked), ended before any upload of a later step
// started, and returns the keys uploaded (ended), in order.
func order(events []upload, step func(key string) int) (keys []string, err error) {
	var (
		lastEnd  = map[int]int{} // step → index of the last end of its uploads
		firstBeg = map[int]int{} // step → index of the first start
	)
	for i, e := range events {
		s := step(e.key)
		if s < 0 {
			continue
		}
		if e.end {
			keys = append(keys, e.key)
			lastEnd[s] = i
		} else if _, ok := firstBeg[s]; !ok {
			firstBeg[s] = i
		}
	}
	var errs []error
	for a, end := range lastEnd {
		for b, beg := range firstBeg {
			if a < b && beg < end {
				errs = append(errs, fmt.Errorf("an upload of step %d (%s) started before one of step %d (%s) was done", b, events[beg].key, a, events[end].key))
			}
		}
	}
	return keys, errors.Join(errs...)
}

func (r *recorder) ErrorCode(err error) gcerrors.ErrorCode { return gcerrors.Code(err) }
func (r *recorder) As(i any) bool                          { return r.b.As(i) }
func (r *recorder) ErrorAs(err error, i any) bool          { return errors.As(err, i) }
func (r *recorder) Close() error                           { return nil }

func (r *recorder) Attributes(ctx context.Context, key string) (*driver.Attributes, error) {
	a, err := r.b.Attributes(ctx, key)
	if err != nil {
		return nil, err
	}
	return &driver.Attributes{
		CacheControl: a.CacheControl, ContentDisposition: a.ContentDisposition, ContentEncoding: a.ContentEncoding,
		ContentLanguage: a.ContentLanguage, ContentType: a.ContentType, Metadata: a.Metadata, CreateTime: a.CreateTime,
		ModTime: a.ModTime, Size: a.Size, MD5: a.MD5, ETag: a.ETag, AsFunc: a.As,
	}, nil
}

func (r *recorder) ListPaged(ctx context.Context, opts *driver.ListOptions) (*driver.ListPage, error) {
	r.lists.Add(1)
	token := opts.PageToken
	if token == nil {
		token = blob.FirstPageToken
	}
	size := opts.PageSize
	if size == 0 {
		size = 1000 // blob.Bucket.List's: the driver picks
	}
	objs, next, err := r.b.ListPage(ctx, token, size, &blob.ListOptions{Prefix: opts.Prefix, Delimiter: opts.Delimiter, BeforeList: opts.BeforeList})
	if err != nil {
		return nil, err
	}
	page := &driver.ListPage{NextPageToken: next}
	for _, o := range objs {
		page.Objects = append(page.Objects, &driver.ListObject{Key: o.Key, ModTime: o.ModTime, Size: o.Size, MD5: o.MD5, IsDir: o.IsDir, AsFunc: o.As})
	}
	return page, nil
}

func (r *recorder) NewRangeReader(ctx context.Context, key string, offset, length int64, opts *driver.ReaderOptions) (driver.Reader, error) {
	rd, err := r.b.NewRangeReader(ctx, key, offset, length, &blob.ReaderOptions{BeforeRead: opts.BeforeRead})
	if err != nil {
		return nil, err
	}
	return reader{rd}, nil
}

// reader is a driver.Reader over a blob.Reader.
type reader struct{ *blob.Reader }

func (r reader) Attributes() *driver.ReaderAttributes {
	return &driver.ReaderAttributes{ContentType: r.ContentType(), ModTime: r.ModTime(), Size: r.Size()}
}

func (r *recorder) NewTypedWriter(ctx context.Context, key, contentType string, opts *driver.WriterOptions) (driver.Writer, error) {
	r.add(key, false)
	return &writer{r: r, ctx: ctx, key: key, opts: &blob.WriterOptions{
		BufferSize: opts.BufferSize, MaxConcurrency: opts.MaxConcurrency, CacheControl: opts.CacheControl,
		ContentDisposition: opts.ContentDisposition, ContentEncoding: opts.ContentEncoding, ContentLanguage: opts.ContentLanguage,
		ContentType: contentType, ContentMD5: opts.ContentMD5, Metadata: opts.Metadata,
		DisableContentTypeDetection: opts.DisableContentTypeDetection, BeforeWrite: opts.BeforeWrite, IfNotExist: opts.IfNotExist,
	}}, nil
}

// writer is a driver.Writer that keeps what is written, and uploads it
// on Close with one Upload of the bucket below, as publish uploads (so
// that each driver writes it as it would without the recorder), and
// records the end.
type writer struct {
	r    *recorder
	ctx  context.Context
	key  string
	opts *blob.WriterOptions
	buf  bytes.Buffer
}

func (w *writer) Write(p []byte) (int, error) { return w.buf.Write(p) }

func (w *writer) Close() error {
	if err := w.ctx.Err(); err != nil {
		// Stopped (a hook cancelled it, as it started): nothing is sent.
		// (gocloud's azureblob may panic when an upload fails while its
		// writer closes: a race on its pipe.)
		return err
	}
	if err := w.r.b.Upload(w.ctx, w.key, bytes.NewReader(w.buf.Bytes()), w.opts); err != nil {
		return err
	}
	w.r.add(w.key, true)
	return nil
}

func (r *recorder) Copy(ctx context.Context, dst, src string, _ *driver.CopyOptions) error {
	return r.b.Copy(ctx, dst, src, nil)
}

func (r *recorder) Delete(ctx context.Context, key string, _ *driver.DeleteOptions) error {
	return r.b.Delete(ctx, key)
}

func (r *recorder) SignedURL(context.Context, string, *driver.SignedURLOptions) (string, error) {
	return "", fmt.Errorf("recorder: no signed URLs")
}

// TestOrder checks order itself, on uploads in order and out of it.
func TestOrder(t *testing.T) {
	step := func(key string) int { return int(key[0] - '0') }
	for _, tt := range []struct {
		name   string
		events []upload
		bad    bool
	}{
		{"in order", []upload{{"0a", false}, {"0b", false}, {"0b", true}, {"0a", true}, {"1a", false}, {"1a", true}, {"2", false}, {"2", true}}, false},
		{"overlap", []upload{{"0a", false}, {"1a", false}, {"0a", true}, {"1a", true}}, true},
		{"later step first", []upload{{"1a", false}, {"1a", true}, {"0a", false}, {"0a", true}}, true},
	} {
		keys, err := order(tt.events, step)
		if (err != nil) != tt.bad {
			t.Errorf("%s: got %v, want an error: %v", tt.name, err, tt.bad)
		}
		if !tt.bad && !slices.Equal(keys, []string{"0b", "0a", "1a", "2"}) {
			t.Errorf("%s: keys %q", tt.name, keys)
		}
	}
}
