package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishS3 runs feedgen publish against a versitygw server: a first
// and an unchanged publish, then the errors a CI job meets (refused,
// missing and forbidden credentials, a missing bucket), each with exit
// code 1, a message that says which, and the bucket left as it was.
// testdata/script/publish*.txtar are the sessions with file:// buckets.
func TestPublishS3(t *testing.T) {
	v := versitytest.Start(t)
	v.AddUser(t, "reader", "readersecret")
	url, store := v.NewBucket(t)
	// Without use_path_style, the endpoint at 127.0.0.1 is refused before
	// anything is sent, with the URL that works, which the first publish
	// then uses.
	noPathStyle := strings.Replace(url, "&use_path_style=true", "", 1)
	url = noPathStyle + "&use_path_style=true"
	dir := t.TempDir()
	bundleSite(t, dir)

	const hint = `(?m)^S3 credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the profile AWS_PROFILE names in ~/\.aws; publishing needs s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject\n\z`
	tests := []struct {
		name         string
		env          []string
		url          string
		code         int
		stdout       string // regexps
		stderr       string
		bucketChange bool
	}{
		{"no use_path_style", nil, noPathStyle, 2, `\A\z`,
			`\Afeedgen: BUCKET_URL '` + regexp.QuoteMeta(noPathStyle) + `': the endpoint is an IP address, which cannot name the bucket as the host feed-1\.127\.0\.0\.1 \(virtual-hosted style, the default\): add use_path_style=true, as in '` + regexp.QuoteMeta(url) + `'\n`, false},
		{"first", nil, url, 0, `\Auploaded 5 files \(\d+\.\d kB\), unchanged 0, deleted 0, in [0-9.]+m?s\n\z`, `\A\z`, true},
		{"unchanged", nil, url, 0, `\Auploaded 0 files \(0 B\), unchanged 5, deleted 0, in `, `\A\z`, false},
		{"missing bucket", nil, v.BucketURL("no-such-bucket"), 1, `\A\z`,
			`\Afeedgen: the bucket does not exist \(listing articles/: NoSuchBucket: The specified bucket does not exist\.\)\n\z`, false},
		{"wrong secret", []string{"AWS_SECRET_ACCESS_KEY=wrong"}, url, 1, `\A\z`,
			`\Afeedgen: the bucket's service refused the credentials \(listing articles/: SignatureDoesNotMatch: .*\)\n` + hint, false},
		{"no credentials", []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}, url, 1, `\A\z`,
			`\Afeedgen: no credentials for the bucket were found \(listing articles/: .*get credentials: .*\)\n` + hint, false},
		{"forbidden", []string{"AWS_ACCESS_KEY_ID=reader", "AWS_SECRET_ACCESS_KEY=readersecret"}, url, 1, `\A\z`,
			`\Afeedgen: access denied: the credentials may not do this \(listing articles/: AccessDenied: .*\)\n` + hint, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := storeFiles(t, store)
			r := runFeedgen(t, dir, tt.env, "publish", "--dir", "site/public", tt.url)
			if r.code != tt.code || !regexp.MustCompile(tt.stdout).MatchString(r.stdout) || !regexp.MustCompile(tt.stderr).MatchString(r.stderr) {
				t.Errorf("got exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
			if changed := storeFiles(t, store) != before; changed != tt.bucketChange {
				t.Errorf("the bucket changed: %v, want %v", changed, tt.bucketChange)
			}
		})
	}
}

// storeFiles describes every file under dir (name, size, modification
// time), so that any upload or deletion changes the description.
func storeFiles(t *testing.T, dir string) string {
	t.Helper()
	var s string
	err := filepath.Walk(dir, func(p string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			s += p + " " + info.ModTime().String() + "\n"
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}
