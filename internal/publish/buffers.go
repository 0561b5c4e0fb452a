package publish

import (
	"cloud.google.com/go/storage"
	"gocloud.dev/blob"
	"google.golang.org/api/googleapi"
)

// On GCS, gocloud.dev leaves an upload's chunk at the storage client's
// default, googleapi.DefaultUploadChunkSize (16 MiB): a buffer allocated
// and zeroed for every object, 16 MiB for a chunk of 40 kB. That was most
// of the CPU of a publish of many small files to gs://. An upload there
// gets the smallest chunk larger than the object instead (the client's
// chunks are multiples of googleapi.MinUploadChunkSize), so it stays one
// request the client retries as before; an object of the default or more
// keeps the default. The other drivers keep theirs: S3's parts and
// Azure's blocks are not allocated whole for a small object.

// isGCS reports whether bucket is gocloud.dev's gcsblob.
func isGCS(bucket *blob.Bucket) bool {
	var c *storage.Client
	return bucket.As(&c)
}

// uploadBuffer is the WriterOptions.BufferSize of an upload of n bytes:
// 0 (the driver's default) but on GCS.
func uploadBuffer(gcs bool, n int) int {
	if !gcs {
		return 0
	}
	// Strictly larger than n: the client sends one request only when
	// filling the first chunk meets the object's end.
	const unit = googleapi.MinUploadChunkSize
	return min((n/unit+1)*unit, googleapi.DefaultUploadChunkSize)
}
