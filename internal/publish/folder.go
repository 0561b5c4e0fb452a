package publish

import (
	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// openFolder opens the bucket on disk in folder dir, which must exist.
func openFolder(dir string) (*blob.Bucket, error) {
	return fileblob.OpenBucket(dir, nil)
}
