package main

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishS3 runs feedgen publish against a versitygw server: a first
// and an unchanged publish, then the errors a CI job meets (refused,
// missing and forbidden credentials, a missing bucket, a missing or wrong
// region), each with exit code 1, a message that says which and what to
// do, and the bucket left as it was; and a folder of the bucket, named by
// the URL's path or by prefix=, where the objects land.
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
	noRegion := strings.Replace(url, "&region=us-east-1", "", 1)
	wrongRegion := strings.Replace(url, "&region=us-east-1", "&region=eu-west-1", 1)
	inFolder := strings.Replace(url, "?", "/sites/news/?", 1)
	withPrefix := url + "&prefix=feed"
	dir := t.TempDir()
	bundleSite(t, dir)
	// An instance metadata service that answers no to IMDSv2 (as some
	// do): the SDK falls back to IMDSv1, and would say so on stderr.
	imds := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPut {
			w.WriteHeader(http.StatusMethodNotAllowed)
			return
		}
		http.NotFound(w, r)
	}))
	defer imds.Close()

	const hint = `(?m)^S3 credentials come from AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or the profile AWS_PROFILE names in ~/\.aws; publishing needs s3:ListBucket, s3:GetObject, s3:PutObject and s3:DeleteObject\n\z`
	lookedFor := func(imds string) string {
		return `(?m)^S3 credentials were looked for in AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY \(not set\), in the profile default of \S+/none and \S+/none \(neither exists\), and in the EC2 instance metadata service \(IMDS: ` + imds + `\): set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE to a profile of ~/\.aws/credentials\n\z`
	}
	tests := []struct {
		name   string
		env    []string
		url    string
		code   int
		stdout string // regexps
		stderr string
		// bucketChange: what the publish changes in the bucket: "" nothing,
		// else the folder of its manifest.json ("." for the root)
		bucketChange string
	}{
		{"no use_path_style", nil, noPathStyle, 2, `\A\z`,
			`\Afeedgen: BUCKET_URL '` + regexp.QuoteMeta(noPathStyle) + `': the endpoint is an IP address, which cannot name the bucket as the host feed-1\.127\.0\.0\.1 \(virtual-hosted style, the default\): add use_path_style=true, as in '` + regexp.QuoteMeta(url) + `'\n`, ""},
		{"first", nil, url, 0, `\Auploaded 5 files \(\d+\.\d kB\), unchanged 0, deleted 0, in [0-9.]+m?s\n\z`, `\A\z`, "."},
		{"unchanged", nil, url, 0, `\Auploaded 0 files \(0 B\), unchanged 5, deleted 0, in `, `\A\z`, ""},
		{"missing bucket", nil, v.BucketURL("no-such-bucket"), 1, `\A\z`,
			`\Afeedgen: the bucket does not exist \(listing articles/: NoSuchBucket: The specified bucket does not exist\.\)\n\z`, ""},
		{"wrong secret", []string{"AWS_SECRET_ACCESS_KEY=wrong"}, url, 1, `\A\z`,
			`\Afeedgen: the bucket's service refused the credentials \(listing articles/: SignatureDoesNotMatch: .*\)\n` + hint, ""},
		{"no credentials", []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY="}, url, 1, `\A\z`,
			`\Afeedgen: no credentials for the bucket were found \(finding credentials: .*\)\n` + lookedFor("not asked, AWS_EC2_METADATA_DISABLED=true"), ""},
		{"no credentials, IMDSv1", []string{"AWS_ACCESS_KEY_ID=", "AWS_SECRET_ACCESS_KEY=", "AWS_EC2_METADATA_DISABLED=", "AWS_EC2_METADATA_SERVICE_ENDPOINT=" + imds.URL}, url, 1, `\A\z`,
			`\Afeedgen: no credentials for the bucket were found \(finding credentials: .*\)\n` + lookedFor("no role found"), ""},
		{"forbidden", []string{"AWS_ACCESS_KEY_ID=reader", "AWS_SECRET_ACCESS_KEY=readersecret"}, url, 1, `\A\z`,
			`\Afeedgen: access denied: the credentials may not do this \(listing articles/: AccessDenied: .*\)\n` + hint, ""},
		{"no region", nil, noRegion, 1, `\A\z`,
			`\Afeedgen: no region is set for the bucket, which is in us-east-1 \(finding the bucket's region: it answers requests signed for us-east-1\)\n` +
				`the bucket is in the region us-east-1: add region=us-east-1 to the URL, as in '` + regexp.QuoteMeta(noRegion+"&region=us-east-1") + `', or set AWS_REGION=us-east-1\n\z`, ""},
		{"wrong region", nil, wrongRegion, 1, `\A\z`,
			`\Afeedgen: the bucket is in the region us-east-1, not eu-west-1 \(listing articles/: AuthorizationHeaderMalformed: .*\)\n` +
				`the bucket is in the region us-east-1: add region=us-east-1 to the URL, as in '` + regexp.QuoteMeta(url) + `', or set AWS_REGION=us-east-1\n\z`, ""},
		{"folder, dry run", nil, inFolder, 0,
			`\Abucket feed-1, prefix sites/news/ \(s3, endpoint http://127\.0\.0\.1:\d+, region us-east-1\)\n(upload articles/\S+ \(.*\)\n)+upload manifest\.json .*\ndry run: would upload 5 files `, `\A\z`, ""},
		{"folder", nil, inFolder, 0, `\Auploaded 5 files `, `\A\z`, "sites/news"},
		{"prefix", nil, withPrefix, 0, `\Auploaded 5 files `,
			`\Aprefix=feed is the folder feed/ of the bucket \(its objects feed/manifest\.json, feed/articles/…\): write prefix=feed/ to say so\n\z`, "feed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			before := storeFiles(t, store)
			args := []string{"publish", "--dir", "site/public", tt.url}
			if strings.HasSuffix(tt.name, "dry run") {
				args = append(args, "--dry-run")
			}
			r := runFeedgen(t, dir, tt.env, args...)
			if r.code != tt.code || !regexp.MustCompile(tt.stdout).MatchString(r.stdout) || !regexp.MustCompile(tt.stderr).MatchString(r.stderr) {
				t.Errorf("got exit %d\nstdout: %s\nstderr: %s\nwant exit %d, stdout %s, stderr %s", r.code, r.stdout, r.stderr, tt.code, tt.stdout, tt.stderr)
			}
			after := storeFiles(t, store)
			if changed := after != before; changed != (tt.bucketChange != "") {
				t.Errorf("the bucket changed: %v, want %v", changed, tt.bucketChange != "")
			}
			if tt.bucketChange != "" {
				got, err := os.ReadFile(filepath.Join(store, tt.bucketChange, "manifest.json"))
				want, _ := os.ReadFile(filepath.Join(dir, "site/public/manifest.json"))
				if err != nil || !bytes.Equal(got, want) {
					t.Errorf("%s/manifest.json in the bucket: %v; want the build's", tt.bucketChange, err)
				}
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

// TestPublishJSONInterrupted: an interrupted publish --json says
// "interrupted", as the text does, not "context canceled".
func TestPublishJSONInterrupted(t *testing.T) {
	err := fmt.Errorf("uploading articles/20/0.json: %w", context.Canceled)
	j := newPublishJSON("file:///srv/feed", nil, false, nil, err, 0)
	if j.OK || j.Error != "interrupted" {
		t.Errorf("got ok %v, error %q, want \"interrupted\"", j.OK, j.Error)
	}
}
