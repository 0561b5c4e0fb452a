package publish

import (
	"bytes"
	"context"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/publish/versitytest"
	"github.com/feedgen/feedgen/internal/retry"
)

// slowLink starts a proxy to the address to that takes what the client
// sends at rate bytes a second, with a small socket buffer (so that the
// network holds little of it): a slow uplink. Answers go at full speed.
// It returns the proxy's address.
func slowLink(t *testing.T, to string, rate int) string {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4<<10) })
		if err != nil {
			return err
		}
		return serr
	}}
	l, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	const piece = 1 << 10
	every := time.Second * piece / time.Duration(rate)
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", to)
			if err != nil {
				c.Close()
				continue
			}
			go func() {
				defer up.Close()
				io.Copy(c, up)
			}()
			go func() {
				defer c.Close()
				buf := make([]byte, piece)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						if _, err := up.Write(buf[:n]); err != nil {
							return
						}
						time.Sleep(every) // the link's pace
					}
					if err != nil {
						up.(*net.TCPConn).CloseWrite()
						return
					}
				}
			}()
		}
	}()
	return l.Addr().String()
}

// TestUploadSlowLink uploads 96 kB over a link that takes 32 kB a second
// (3 s), with a --connect-timeout of 300 ms and no retries: the body is
// progress as the network takes it (its bytes read by the HTTP client,
// then those the kernel still holds, going), so the upload goes through;
// --timeout bounds its stalls, and --connect-timeout only the wait for
// the answer once the body is gone. (When the body counted for nothing,
// the upload had --connect-timeout and a second per 64 kB: 1.3 s.)
func TestUploadSlowLink(t *testing.T) {
	v := versitytest.Start(t)
	url, _ := v.NewBucket(t)
	host := strings.TrimPrefix(v.Endpoint, "http://")
	url = strings.Replace(url, host, slowLink(t, host, 32<<10), 1)
	bk, err := ParseBucketURL(url)
	if err != nil {
		t.Fatal(err)
	}
	opt := testOptions()
	opt.ConnectTimeout, opt.Timeout, opt.Retries = 300*time.Millisecond, 2*time.Second, -1
	b, err := bk.Open(context.Background(), opt)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var said bytes.Buffer
	opt = opt.withDefaults()
	p := &publisher{bucket: b, opt: opt, notices: &retry.Notices{W: &said, Clock: time.Now}, fence: func() error { return nil }}
	data := bytes.Repeat([]byte("[1234567]\n"), 96<<10/10)
	const key = "articles/big.json"
	start := time.Now()
	if err := p.upload(context.Background(), key, data, p.writerOptions(key, data, nil)); err != nil {
		t.Fatalf("after %v: %v (said: %q)", time.Since(start), err, said.String())
	}
	if took := time.Since(start); took < 2*time.Second {
		t.Errorf("the upload took %v: the link is not slow", took)
	}
	got, err := b.ReadAll(context.Background(), key)
	if err != nil || !bytes.Equal(got, data) {
		t.Errorf("the bucket holds %d bytes (%v), want the %d uploaded", len(got), err, len(data))
	}
}
