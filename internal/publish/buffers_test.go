package publish

import (
	"bytes"
	"context"
	"crypto/md5"
	"fmt"
	"io"
	"runtime"
	"testing"

	"gocloud.dev/blob"
)

// TestUploadBuffer: on GCS an upload's chunk is the smallest multiple of
// 256 KiB larger than the object (one request: the client sends one when
// filling the first chunk meets the end), up to the client's default of
// 16 MiB;
// elsewhere the driver's default (0).
func TestUploadBuffer(t *testing.T) {
	const k = 1 << 10
	for _, tt := range []struct {
		gcs  bool
		n    int
		want int
	}{
		{false, 40 * k, 0},
		{false, 64 << 20, 0},
		{true, 0, 256 * k},
		{true, 1, 256 * k},
		{true, 256*k - 1, 256 * k},
		{true, 256 * k, 512 * k},
		{true, 256*k + 1, 512 * k},
		{true, 1 << 20, 1<<20 + 256*k},
		{true, 16<<20 - 1, 16 << 20},
		{true, 16 << 20, 16 << 20},
		{true, 64 << 20, 16 << 20},
	} {
		if got := uploadBuffer(tt.gcs, tt.n); got != tt.want {
			t.Errorf("uploadBuffer(%v, %d) = %d, want %d", tt.gcs, tt.n, got, tt.want)
		}
	}
}

// TestFolderBody: an upload to a bucket on disk reports every byte of
// its body as the driver takes it, and does not go through gocloud.dev's
// buffer of 1 MiB an object (a plain io.Reader does: this test fails with
// one).
func TestFolderBody(t *testing.T) {
	ctx := context.Background()
	b, err := OpenFolder(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	data := bytes.Repeat([]byte("0123456789abcdef"), (folderPiece+folderPiece/2)/16) // two pieces
	var sent int
	w := &watch{sending: func(n int) { sent += n }}
	upload := func(i int, d []byte) {
		sum := md5.Sum(d) // as publish sends it
		if err := b.Upload(ctx, fmt.Sprintf("articles/%d.json", i), &folderBody{d, w}, &blob.WriterOptions{ContentType: "application/json", ContentMD5: sum[:]}); err != nil {
			t.Fatal(err)
		}
	}
	upload(0, data)
	if got, err := b.ReadAll(ctx, "articles/0.json"); err != nil || !bytes.Equal(got, data) || sent != len(data) {
		t.Fatalf("uploaded %d bytes (%v), reported %d; want the %d of the body, all reported", len(got), err, sent, len(data))
	}
	const n = 50
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	for i := range n {
		upload(i+1, data[:1000])
	}
	runtime.ReadMemStats(&after)
	if per := (after.TotalAlloc - before.TotalAlloc) / n; per > 256<<10 {
		t.Errorf("an upload of 1 kB allocated %d bytes, want far less than 1 MiB", per)
	}
}

// stuckWriter takes nothing and says nothing is wrong.
type stuckWriter struct{}

func (stuckWriter) Write([]byte) (int, error) { return 0, nil }

// TestFolderBodyShortWrite: a writer that takes less than it was given
// without an error ends the body's WriteTo with io.ErrShortWrite, as
// io.Copy does, rather than a loop that never ends.
func TestFolderBodyShortWrite(t *testing.T) {
	b := &folderBody{[]byte("data"), &watch{sending: func(int) {}}}
	if n, err := b.WriteTo(stuckWriter{}); n != 0 || err != io.ErrShortWrite {
		t.Errorf("WriteTo = %d, %v; want 0, io.ErrShortWrite", n, err)
	}
}
