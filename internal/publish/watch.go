package publish

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"
)

// A watch is what one attempt of a request (see policy.try) learns of
// its progress, from the HTTP client of a bucket of a cloud, which finds
// it in the attempt's context: when a request starts, the bytes of its
// body as the client sends them (not as an SDK reads them into a buffer
// of its own), the end of the body, and the answer's head and bytes as
// they come. An attempt makes one request, or a few (an SDK's steps).
// On a bucket on disk, the op itself reports the bytes it reads and
// writes (kicking, and the body of an upload).
type watch struct {
	start   func()      // a request starts: waiting for it to go
	sending func(n int) // n more bytes of the request's body sent
	sent    func(n int) // the body ended, after n bytes in all (0: none)
	answer  func(n int) // n more bytes of the answer (0: its head)
	// client: the HTTP client reports this attempt's requests, so the op's
	// own reports of the answer's bytes (see kicking) are not counted
	// twice.
	client atomic.Bool
}

type watchKey struct{}

// withWatch returns ctx with w, for the HTTP client of the bucket.
func withWatch(ctx context.Context, w *watch) context.Context {
	return context.WithValue(ctx, watchKey{}, w)
}

// watchOf returns the watch in ctx, nil when there is none.
func watchOf(ctx context.Context) *watch {
	w, _ := ctx.Value(watchKey{}).(*watch)
	return w
}

// doer is an HTTP client as the SDKs take one: the AWS SDK's
// aws.HTTPClient, the Azure SDK's policy.Transporter.
type doer interface {
	Do(*http.Request) (*http.Response, error)
}

// watchedClient is an HTTP client that reports each request to the
// watch of its context, if any.
type watchedClient struct{ c doer }

func (c watchedClient) Do(r *http.Request) (*http.Response, error) {
	return roundTrip(r, c.c.Do)
}

// watchedTransport is an http.RoundTripper that reports each request to
// the watch of its context, if any.
type watchedTransport struct{ base http.RoundTripper }

func (t watchedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	return roundTrip(r, t.base.RoundTrip)
}

// roundTrip sends r with do, reporting it to the watch of its context.
func roundTrip(r *http.Request, do func(*http.Request) (*http.Response, error)) (*http.Response, error) {
	w := watchOf(r.Context())
	if w == nil {
		return do(r)
	}
	w.client.Store(true)
	w.start()
	req := &request{w: w, answered: make(chan struct{})}
	defer close(req.answered)
	ctx := httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
		GotConn: func(info httptrace.GotConnInfo) { req.conn.Store(&info.Conn) },
	})
	r = r.WithContext(ctx) // a copy: a round trip leaves the request as it is
	if r.Body != nil && r.Body != http.NoBody {
		r.Body = &sendingBody{rc: r.Body, req: req, size: r.ContentLength}
	} else {
		w.sent(0)
	}
	resp, err := do(r)
	if err != nil {
		return resp, err
	}
	w.answer(0)
	if resp.Body != nil {
		resp.Body = &answerBody{rc: resp.Body, w: w}
	}
	return resp, nil
}

// request is one request of an attempt, as roundTrip sends it.
type request struct {
	w        *watch
	conn     atomic.Pointer[net.Conn] // the connection it goes on, once known
	answered chan struct{}            // closed when its answer came, or it failed
}

// drainEvery is how often a request whose body is all written is asked how
// many of its bytes the network has yet to take.
const drainEvery = 50 * time.Millisecond

// sent reports the end of the body, after n bytes: written, but maybe
// not gone yet. Where the kernel says how many bytes of the connection
// are not yet taken by the other end (see unsent), they are watched go,
// as the body's progress, and the wait for the answer starts once none
// is left; elsewhere at once, with n bytes still on their way.
func (q *request) sent(n int) {
	c := q.conn.Load()
	if c == nil {
		q.w.sent(n)
		return
	}
	left, ok := unsent(*c)
	switch {
	case !ok:
		q.w.sent(n)
		return
	case left == 0:
		q.w.sent(0)
		return
	}
	go func() {
		t := time.NewTicker(drainEvery)
		defer t.Stop()
		for {
			select {
			case <-q.answered:
				return
			case <-t.C:
			}
			now, ok := unsent(*c)
			switch {
			case !ok:
				q.w.sent(left)
				return
			case now == 0:
				q.w.sent(0)
				return
			}
			if now < left {
				q.w.sending(left - now)
				left = now
			}
		}
	}()
}

// sendingBody is the body of a request, reporting its bytes as the HTTP
// client reads them to send them, and its end: at EOF, when the bytes
// its length gives are read, or when it is closed.
type sendingBody struct {
	rc   io.ReadCloser
	req  *request
	size int64 // -1: not known
	n    atomic.Int64
	once sync.Once
}

func (b *sendingBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	total := b.n.Add(int64(n))
	if n > 0 {
		b.req.w.sending(n)
	}
	if err == io.EOF || b.size >= 0 && total >= b.size {
		b.end()
	}
	return n, err
}

func (b *sendingBody) Close() error {
	b.end()
	return b.rc.Close()
}

func (b *sendingBody) end() { b.once.Do(func() { b.req.sent(int(b.n.Load())) }) }

// answerBody is the body of an answer, reporting its bytes as they are
// read.
type answerBody struct {
	rc io.ReadCloser
	w  *watch
}

func (b *answerBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.w.answer(n)
	}
	return n, err
}

func (b *answerBody) Close() error { return b.rc.Close() }

// folderBody is the body of an upload to a bucket on disk: data, whose
// bytes are reported as the bucket's driver takes them to write them.
// It is an io.WriterTo, so that blob.Writer.ReadFrom hands it the
// driver's writer: a plain io.Reader is copied through a buffer of 1 MiB
// that gocloud.dev allocates, and zeroes, for every object, most of the
// CPU of a publish of many small files to a folder.
type folderBody struct {
	data []byte
	w    *watch
}

// folderPiece is the most folderBody.WriteTo writes at once: a stalled
// disk is seen between two pieces.
const folderPiece = 256 << 10

func (b *folderBody) Read(p []byte) (int, error) {
	if len(b.data) == 0 {
		return 0, io.EOF
	}
	n := copy(p, b.data)
	b.data = b.data[n:]
	if n > 0 {
		b.w.sending(n)
	}
	return n, nil
}

func (b *folderBody) WriteTo(w io.Writer) (int64, error) {
	var sent int64
	for len(b.data) > 0 {
		piece := b.data[:min(len(b.data), folderPiece)]
		n, err := w.Write(piece)
		b.data = b.data[n:]
		sent += int64(n)
		if n > 0 {
			b.w.sending(n)
		}
		if err == nil && n < len(piece) {
			err = io.ErrShortWrite
		}
		if err != nil {
			return sent, err
		}
	}
	return sent, nil
}
