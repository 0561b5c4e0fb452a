package publish

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/folder"
)

// CheckBucketFolder refuses a bucket on disk (file://) whose folder
// bucket shares files with the output folder dir being published: a
// bucket that holds the build would delete the build's pages as stale
// objects under its articles/ (deleting the very files it uploads); one
// inside the build, or the build's own folder, would leave its objects
// and their attribute files (.attrs) among the pages, which the next
// build refuses as files it did not write.
func CheckBucketFolder(bucket, dir string) error {
	rel, err := folder.Relate(bucket, dir)
	if err != nil {
		return fmt.Errorf("checking the bucket folder %s: %w", bucket, err)
	}
	var why string
	switch rel {
	case folder.Same:
		why = "is the build's own folder: its objects and their .attrs files would go among the pages"
	case folder.Inside:
		why = "lies inside the build's folder " + dir + ": its objects and their .attrs files would go among the pages"
	case folder.Holds:
		why = "holds the build's folder " + dir + ": publishing would delete the build's pages as stale objects of the bucket"
	default:
		return nil
	}
	return fmt.Errorf("the bucket folder %s %s; publish to a folder apart from the build", bucket, why)
}

// BucketFolder returns the folder of a file:// bucket URL, as
// gocloud.dev/blob/fileblob opens it: file:///srv/feed is /srv/feed, and
// file://./feed (host ".") the relative folder feed.
func BucketFolder(u *url.URL) string {
	p := u.Path
	if u.Host == "." || os.PathSeparator != '/' {
		p = strings.TrimPrefix(p, "/")
	}
	return filepath.FromSlash(p)
}
