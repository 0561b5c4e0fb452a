package publish

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestCheckBucketFolder gives CheckBucketFolder bucket folders that share
// files with the build under other names: a link, and a bind mount (not
// root, the test runs as root of its own user and mount namespaces), of
// the build's folder, of a folder in it, of a folder above it. Each is
// refused as the folder it is; a folder apart is not.
func TestCheckBucketFolder(t *testing.T) {
	if testfiles.InMountNamespace(t) {
		return
	}
	dir := t.TempDir()
	build := filepath.Join(dir, "site", "public")
	testfiles.WriteFile(t, filepath.Join(build, "articles", "index.json"), "[]")
	if err := os.Symlink(build, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		bucket string
		bind   string // a folder mounted at bucket
		into   string // a folder of the build where bucket is mounted
		want   string // "" for none
	}{
		{bucket: "apart", want: ""},
		{bucket: "link", want: "is the build's own folder"},
		{bucket: "link/articles", want: "lies inside the build's folder"},
		{bucket: "bound", bind: "site/public", want: "is the build's own folder"},
		{bucket: "bound-articles", bind: "site/public/articles", want: "lies inside the build's folder"},
		{bucket: "bound-site", bind: "site", want: "holds the build's folder"},
		{bucket: "bound-site/public", bind: "site", want: "is the build's own folder"},
		// Mounted inside the build: the bucket's own parents are not
		// the build's.
		{bucket: "srv", into: "site/public/extra", want: "is " + filepath.Join(dir, "site/public/extra") + ", a folder mounted inside the build's folder"},
		{bucket: "srv2/feed", into: "site/public/extra2", want: "lies inside " + filepath.Join(dir, "site/public/extra2") + ", a folder mounted inside the build's folder"},
	}
	for _, tt := range tests {
		t.Run(tt.bucket, func(t *testing.T) {
			bucket := filepath.Join(dir, tt.bucket)
			if tt.into != "" {
				src := filepath.Join(dir, strings.Split(tt.bucket, "/")[0])
				testfiles.WriteFile(t, filepath.Join(bucket, "x"), "")
				testfiles.WriteFile(t, filepath.Join(dir, tt.into, "x"), "")
				testfiles.BindMount(t, src, filepath.Join(dir, tt.into))
			}
			if tt.bind != "" {
				testfiles.BindMount(t, filepath.Join(dir, tt.bind), filepath.Join(dir, strings.Split(tt.bucket, "/")[0]))
			}
			err := CheckBucketFolder(bucket, build)
			switch {
			case tt.want == "" && err != nil:
				t.Errorf("got %v, want none", err)
			case tt.want != "" && (err == nil || !strings.Contains(err.Error(), tt.want)):
				t.Errorf("got %v, want %q", err, tt.want)
			}
		})
	}
}
