package publish

import "testing"

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
