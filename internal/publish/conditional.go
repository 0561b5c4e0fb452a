package publish

import (
	"errors"

	"cloud.google.com/go/storage"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/storage/azblob"
	azblobblob "github.com/Azure/azure-sdk-for-go/sdk/storage/azblob/blob"
	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/feature/s3/transfermanager"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// Writes conditional on an object's version, through each driver's own
// options (gocloud.dev/blob has IfNotExist only): S3's If-Match on the
// ETag, Azure's If-Match on the ETag, GCS's generation match. The bucket's
// lock is taken over, and renewed, only with them; manifest.json is
// written with them where the service has them. The tests run them
// against versitygw, fake-gcs-server and Azurite.

// version names one version of an object, as a conditional write needs it.
type version struct {
	etag       string // S3's and Azure's
	generation int64  // GCS's
}

// versionOf returns the version of the object whose attributes are a.
func versionOf(a *blob.Attributes) version {
	v := version{etag: a.ETag}
	var oa storage.ObjectAttrs
	if a.As(&oa) {
		v.generation = oa.Generation
	}
	return v
}

// errNoCondition stops a write that the service cannot make conditional
// on the object's version.
var errNoCondition = errors.New("the bucket's service has no write conditional on an object's version")

// ifVersion returns a BeforeWrite that makes a write conditional on the
// object being at version v; where the service has no such write, the
// write fails with errNoCondition.
func ifVersion(v version) func(as func(any) bool) error {
	return func(as func(any) bool) error {
		var s3in *transfermanager.UploadObjectInput
		if v.etag != "" && as(&s3in) {
			s3in.IfMatch = aws.String(v.etag)
			return nil
		}
		var gcs **storage.ObjectHandle
		if v.generation != 0 && as(&gcs) {
			*gcs = (*gcs).If(storage.Conditions{GenerationMatch: v.generation})
			return nil
		}
		var az *azblob.UploadStreamOptions
		if v.etag != "" && as(&az) {
			etag := azcore.ETag(v.etag)
			az.AccessConditions = &azblob.AccessConditions{ModifiedAccessConditions: &azblobblob.ModifiedAccessConditions{IfMatch: &etag}}
			return nil
		}
		return errNoCondition
	}
}

// preconditionFailed reports whether a conditional write failed because
// the object is there, or not at the version named.
func preconditionFailed(err error) bool {
	if gcerrors.Code(err) == gcerrors.FailedPrecondition {
		return true
	}
	var ae apiError
	return errors.As(err, &ae) && (ae.ErrorCode() == "PreconditionFailed" || ae.ErrorCode() == "ConditionalRequestConflict")
}
