package publish

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/folder"
)

// CheckBucketFolder refuses a bucket on disk (file://) whose folder
// bucket shares files with the output folder dir being published: a
// bucket that holds the build would delete the build's pages as stale
// objects under its articles/ (deleting the very files it uploads); one
// inside the build, or the build's own folder, would leave its objects
// among the pages, which the next build refuses as files it did not
// write. Publish checks each folder of the bucket it writes into too
// (see checkFolders).
func CheckBucketFolder(bucket, dir string) error {
	loc, err := folder.NewLocator(dir)
	if err != nil {
		return fmt.Errorf("finding the build's folder %s: %w", dir, err)
	}
	return checkBucketFolder(loc, bucket, dir)
}

// checkBucketFolder is CheckBucketFolder with the Locator of dir.
func checkBucketFolder(loc *folder.Locator, bucket, dir string) error {
	if dir == "" {
		return nil
	}
	rel, mount, err := loc.Shares(bucket)
	if err != nil {
		return fmt.Errorf("checking the bucket folder %s: %w", bucket, err)
	}
	var why string
	switch {
	case rel == folder.Apart:
		return nil
	case mount != "":
		// A folder mounted inside the build, seen elsewhere: publishing
		// into it writes among the pages.
		why = rel.Verb() + " " + mount + ", a folder mounted inside the build's folder " + dir + ", under another name (a bind mount?): its objects would go among the pages"
	case rel == folder.Same:
		why = "is the build's own folder: its objects would go among the pages"
	case rel == folder.Inside:
		why = "lies inside the build's folder " + dir + ": its objects would go among the pages"
	case rel == folder.Holds:
		why = "holds the build's folder " + dir + ": publishing would delete the build's pages as stale objects of the bucket"
	}
	return fmt.Errorf("the bucket folder %s %s; publish to a folder apart from the build", bucket, why)
}

// CheckBucketSite refuses a bucket on disk (file://) whose folder bucket
// is the site's content folder, lies in it or holds it, or holds the
// site's config file (a site's own folder): a publish writes under
// articles/ there, and the next build reads what it wrote as content, or
// finds the bucket's files among its own. contentDir and configFile are
// the site's (config.Config's ContentDir and Path).
func CheckBucketSite(bucket, contentDir, configFile string) error {
	for _, c := range []struct {
		dir  string
		site bool // the config's folder: only one that holds it is refused
	}{{contentDir, false}, {filepath.Dir(configFile), true}} {
		if c.dir == "" || c.site && configFile == "" {
			continue
		}
		rel, err := folder.Relate(bucket, c.dir)
		if err != nil {
			return fmt.Errorf("checking the bucket folder %s: %w", bucket, err)
		}
		var why string
		switch {
		case c.site && (rel == folder.Same || rel == folder.Holds):
			why = "holds the site's " + configFile + ": its articles/ would go into the site"
		case c.site:
		case rel == folder.Same:
			why = "is the site's content folder " + contentDir + ": its pages would go among the articles, and the next build would read them"
		case rel == folder.Inside:
			why = "lies inside the site's content folder " + contentDir + ": its pages would go among the articles, and the next build would read them"
		case rel == folder.Holds:
			why = "holds the site's content folder " + contentDir + ": its pages would go beside the articles"
		}
		if why != "" {
			return fmt.Errorf("the bucket folder %s %s; publish to a folder apart from the site", bucket, why)
		}
	}
	return nil
}

// checkFolders refuses a publish to a bucket on disk (Options.Folder)
// that would write into, or delete from, a folder that is the build's
// (Options.OutputDir), lies in it or holds it, however the bucket reaches
// it: a link in the bucket (articles -> ../site/public/articles), a
// mount. It checks every folder of the bucket that holds one of keys,
// and the folders above it, once each, before anything is written: as
// the walk of the bucket found them (see walk), which relates each to
// the build as the kernel resolves it (folder.Locator); one it did not
// find is made by the publish, in a folder that it found.
func (p *publisher) checkFolders(ctx context.Context, keys []string) error {
	if p.opt.Folder == "" || p.opt.OutputDir == "" {
		return nil
	}
	seen := map[string]bool{".": true} // the bucket's own: checked before the lock
	made := map[string]bool{}
	for _, key := range keys {
		// The folders of key, from the bucket's down: the first that
		// reaches the build is the one to name.
		var down []string
		for d := path.Dir(key); !seen[d]; d = path.Dir(d) {
			down = append(down, d)
		}
		for _, d := range slices.Backward(down) {
			if err := ctx.Err(); err != nil {
				return err
			}
			seen[d] = true
			rel, err := p.folderOf(d, made)
			if err != nil {
				return fmt.Errorf("checking the folder %s of the bucket: %w", d, err)
			}
			var how string
			switch rel {
			case folder.Same:
				how = "is the build's folder " + p.opt.OutputDir
			case folder.Inside:
				how = "lies inside the build's folder " + p.opt.OutputDir
			case folder.Holds:
				how = "holds the build's folder " + p.opt.OutputDir
			default:
				continue
			}
			return fmt.Errorf("the folder %s of the bucket %s %s (through a link, or a mount): publishing would write into the build; nothing was written: remove the link from the bucket, or publish to a folder apart from the build",
				d, p.opt.Folder, how)
		}
	}
	return nil
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
