package publish

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// TestParseBucketURL: where each BUCKET_URL publishes (the bucket and the
// folder of the feed in it), what publish says of it, and the URLs it
// refuses, with the URL to write instead. A path in the URL is the
// folder, as aws s3 sync and rclone read it; so is prefix=, as gocloud
// reads it, with the slash it needs.
func TestParseBucketURL(t *testing.T) {
	tests := []struct {
		url    string
		name   string // the bucket (the folder of file://)
		prefix string
		desc   string // String(), "" not to check
		notes  []string
		err    string // the whole message, when refused
	}{
		{url: "s3://mybucket?region=eu-central-1", name: "mybucket", desc: "bucket mybucket, no prefix (s3, region eu-central-1)"},
		{url: "s3://mybucket/?region=eu-central-1", name: "mybucket"},
		{url: "s3://mybucket", name: "mybucket", desc: "bucket mybucket, no prefix (s3, region from the environment)"},
		{url: "s3://mybucket/feed/?endpoint=http://127.0.0.1:9000&use_path_style=true&region=us-east-1", name: "mybucket", prefix: "feed/",
			desc: "bucket mybucket, prefix feed/ (s3, endpoint http://127.0.0.1:9000, region us-east-1)"},
		{url: "s3://mybucket/feed?region=us-east-1", name: "mybucket", prefix: "feed/"},
		{url: "s3://mybucket/sites/news/?region=us-east-1", name: "mybucket", prefix: "sites/news/"},
		{url: "s3://mybucket?prefix=feed/&region=us-east-1", name: "mybucket", prefix: "feed/"},
		{url: "s3://mybucket?prefix=feed&region=us-east-1", name: "mybucket", prefix: "feed/",
			notes: []string{"prefix=feed is the folder feed/ of the bucket (its objects feed/manifest.json, feed/articles/…): write prefix=feed/ to say so"}},
		{url: "s3://mybucket?prefix=feed%2F", name: "mybucket", prefix: "feed/"},
		{url: "s3://mybucket?prefix=", name: "mybucket"},
		{url: "s3://mybucket/feed/?prefix=feed/", name: "mybucket", prefix: "feed/"},
		{url: "s3://mybucket/feed/?region=us-east-1&prefix=other/",
			err: `BUCKET_URL "s3://mybucket/feed/?region=us-east-1&prefix=other/" names the folder of the feed twice, differently: feed/ in its path, and prefix=other/: write s3://mybucket/feed/?region=us-east-1, or s3://mybucket/other/?region=us-east-1`},
		{url: "s3://mybucket/feed/?prefix=",
			err: `BUCKET_URL "s3://mybucket/feed/?prefix=" names the folder of the feed twice, differently: feed/ in its path, and an empty prefix=: write s3://mybucket/feed/, or s3://mybucket/`},
		{url: "s3://mybucket//feed/", err: `BUCKET_URL "s3://mybucket//feed/": the path "//feed/" is not a folder of the bucket: write a folder, as in s3://mybucket/?prefix=feed/`},
		{url: "s3://mybucket/a/../b/?region=x", err: `BUCKET_URL "s3://mybucket/a/../b/?region=x": the path "/a/../b/" is not a folder of the bucket: write a folder, as in s3://mybucket/?region=x&prefix=feed/`},
		{url: "s3://mybucket?prefix=./", err: `BUCKET_URL "s3://mybucket?prefix=./": prefix=./ is not a folder of the bucket: write a folder, as in s3://mybucket/?prefix=feed/`},
		{url: "s3://mybucket?regoin=us-east-1", err: `BUCKET_URL "s3://mybucket?regoin=us-east-1": unknown query parameter "regoin"`},
		{url: "s3://mybucket?use_path_style=yes", err: `BUCKET_URL "s3://mybucket?use_path_style=yes": invalid value for "use_path_style": "yes" is not true or false`},
		{url: "s3://bkt/?region=us-east-1&prefix=a/&prefix=b/",
			err: `BUCKET_URL "s3://bkt/?region=us-east-1&prefix=a/&prefix=b/" gives prefix= 2 times (a/, b/): which one holds is not said: give it once, as in 's3://bkt/?region=us-east-1&prefix=a/' or 's3://bkt/?region=us-east-1&prefix=b/'`},
		{url: "s3://bkt/?endpoint=http://127.0.0.1:9000&use_path_style=true&endpoint=http://127.0.0.1:1",
			err: `BUCKET_URL "s3://bkt/?endpoint=http://127.0.0.1:9000&use_path_style=true&endpoint=http://127.0.0.1:1" gives endpoint= 2 times (http://127.0.0.1:9000, http://127.0.0.1:1): which one holds is not said: give it once, as in 's3://bkt/?endpoint=http://127.0.0.1:9000&use_path_style=true' or 's3://bkt/?use_path_style=true&endpoint=http://127.0.0.1:1'`},
		{url: "s3://bkt/feed/?region=us-east-1&region=eu-west-1",
			err: `BUCKET_URL "s3://bkt/feed/?region=us-east-1&region=eu-west-1" gives region= 2 times (us-east-1, eu-west-1): which one holds is not said: give it once, as in 's3://bkt/feed/?region=us-east-1' or 's3://bkt/feed/?region=eu-west-1'`},
		{url: "file:///srv/fb?prefix=a/&prefix=b/",
			err: `BUCKET_URL "file:///srv/fb?prefix=a/&prefix=b/" gives prefix= 2 times (a/, b/): which one holds is not said: give it once, as in 'file:///srv/fb?prefix=a/' or 'file:///srv/fb?prefix=b/'`},
		{url: "gs://feed-bucket/feed/", name: "feed-bucket", prefix: "feed/", desc: "bucket feed-bucket, prefix feed/ (gs)"},
		{url: "azblob://site/feed", name: "site", prefix: "feed/", desc: "container site, prefix feed/ (azblob)"},
		{url: "file:///srv/www/feed", name: "/srv/www/feed", desc: "folder /srv/www/feed (file)"},
		{url: "file:///srv/www/feed/", name: "/srv/www/feed"},
		{url: "file://localhost/srv/www/feed", name: "/srv/www/feed"},
		{url: "file:///srv/www?prefix=feed/", name: "/srv/www/feed"},
		{url: "file://./public-copy", name: "public-copy"},
		{url: "file://srv/www/feed", err: `BUCKET_URL "file://srv/www/feed": "srv" is read as a host name, not as a folder: write file:///srv/www/feed (three slashes: an absolute path) or file://./srv/www/feed (a relative one)`},
		{url: "file:///srv/feed?create_dir=true", err: `BUCKET_URL "file:///srv/feed?create_dir=true": file:// takes no parameter "create_dir": write file:///PATH`},
		{url: "file://", err: `BUCKET_URL "file://" names no folder: write file:///PATH (an absolute path)`},
		{url: "feed-bucket", err: `BUCKET_URL "feed-bucket" has no scheme: write s3://BUCKET?region=REGION, gs://BUCKET, azblob://CONTAINER or file:///PATH`},
		{url: "ftp://feed-bucket", err: `BUCKET_URL "ftp://feed-bucket": unknown scheme "ftp": feedgen publishes to azblob://, file://, gs://, s3://`},
		{url: "s3://?region=us-east-1", err: `BUCKET_URL "s3://?region=us-east-1" names no bucket: write s3://BUCKET`},
		// No "//": no host, no path (these once sliced past the URL's end).
		{url: "s3:", err: `BUCKET_URL "s3:" names no bucket: write s3://BUCKET`},
		{url: "gs:", err: `BUCKET_URL "gs:" names no bucket: write gs://BUCKET`},
		{url: "azblob:", err: `BUCKET_URL "azblob:" names no bucket: write azblob://BUCKET`},
		{url: "file:", err: `BUCKET_URL "file:" names no folder: write file:///PATH (an absolute path)`},
		{url: "s3:?region=x", err: `BUCKET_URL "s3:?region=x" names no bucket: write s3://BUCKET`},
		{url: "S3:#x", err: `BUCKET_URL "S3:#x" names no bucket: write s3://BUCKET`},
		{url: "s3:/mybucket/feed/", err: `BUCKET_URL "s3:/mybucket/feed/" names no bucket: write s3://BUCKET`},
		{url: "s3://key:secret@mybucket", err: `BUCKET_URL "s3://key:secret@mybucket" holds a user name: credentials come from the environment, never the URL: write s3://mybucket`},
		{url: "s3://feed bucket/%zz", err: `BUCKET_URL "s3://feed bucket/%zz" is not a URL: invalid character " " in host name`},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			b, err := ParseBucketURL(tt.url)
			if tt.err != "" {
				var ue *URLError
				if !errors.As(err, &ue) || err.Error() != tt.err {
					t.Fatalf("got %v (%T)\nwant the URLError %s", err, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if b.Name != tt.name || b.Prefix != tt.prefix || !slices.Equal(b.Notes, tt.notes) {
				t.Errorf("got bucket %q, prefix %q, notes %q; want %q, %q, %q", b.Name, b.Prefix, b.Notes, tt.name, tt.prefix, tt.notes)
			}
			if tt.desc != "" && b.String() != tt.desc {
				t.Errorf("got String() %q, want %q", b.String(), tt.desc)
			}
		})
	}
}

// TestWithParam: the URL a message suggests is the one given with one
// parameter set, in place or added, its other parameters and fragment
// as they were written.
func TestWithParam(t *testing.T) {
	tests := []struct{ raw, key, value, want string }{
		{"s3://feed", "region", "eu-west-1", "s3://feed?region=eu-west-1"},
		{"s3://feed/news/?endpoint=http://x:9000", "region", "us-east-1", "s3://feed/news/?endpoint=http://x:9000&region=us-east-1"},
		{"s3://feed?region=us-east-1&use_path_style=true", "region", "eu-west-1", "s3://feed?region=eu-west-1&use_path_style=true"},
		{"s3://feed?region=&region=x", "region", "eu-west-1", "s3://feed?region=eu-west-1"},
		{"s3://feed?a=1&#frag", "region", "eu-west-1", "s3://feed?a=1&region=eu-west-1#frag"},
		{"s3://feed#frag", "region", "eu-west-1", "s3://feed?region=eu-west-1#frag"},
		{"s3://feed", "prefix", "a b/", "s3://feed?prefix=a+b/"},
	}
	for _, tt := range tests {
		if got := withParam(tt.raw, tt.key, tt.value); got != tt.want {
			t.Errorf("withParam(%q, %q, %q) = %q, want %q", tt.raw, tt.key, tt.value, got, tt.want)
		}
	}
}

// TestPathStyle: which s3:// URLs publish refuses before it tries them
// (the bucket can never be a host name of the endpoint), which get a hint
// when the bucket's host name is not found, and the URL it suggests.
func TestPathStyle(t *testing.T) {
	tests := []struct {
		url   string
		never string // why the URL is refused, "" when it is not
		fixed string // "" when publish says nothing of use_path_style
	}{
		{"s3://feed?endpoint=http://127.0.0.1:9000&region=us-east-1", "an IP address", "s3://feed?endpoint=http://127.0.0.1:9000&region=us-east-1&use_path_style=true"},
		{"s3://feed?region=us-east-1&endpoint=http://10.0.0.7", "an IP address", "s3://feed?region=us-east-1&endpoint=http://10.0.0.7&use_path_style=true"},
		{"s3://feed?endpoint=http://[::1]:9000", "an IP address", "s3://feed?endpoint=http://[::1]:9000&use_path_style=true"},
		{"s3://feed?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1", "an IP address", "s3://feed?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1&use_path_style=true"},
		{"s3://feed?endpoint=127.0.0.1:9000&", "an IP address", "s3://feed?endpoint=127.0.0.1:9000&use_path_style=true"},
		{"s3://feed?endpoint=http://localhost:9000&region=us-east-1", "localhost", "s3://feed?endpoint=http://localhost:9000&region=us-east-1&use_path_style=true"},
		{"s3://feed?endpoint=http://LOCALHOST:9000", "localhost", "s3://feed?endpoint=http://LOCALHOST:9000&use_path_style=true"},
		{"s3://feed?endpoint=http://minio:9000&region=us-east-1", "", "s3://feed?endpoint=http://minio:9000&region=us-east-1&use_path_style=true"},
		{"s3://feed?endpoint=https://s3.example.com&prefix=a/#x", "", "s3://feed?endpoint=https://s3.example.com&prefix=a/&use_path_style=true#x"},
		{"s3://feed/news/?endpoint=http://minio:9000", "", "s3://feed/news/?endpoint=http://minio:9000&use_path_style=true"},
		// Path style asked for, or said no to: nothing to suggest.
		{"s3://feed?endpoint=http://127.0.0.1:9000&use_path_style=true", "", ""},
		{"s3://feed?endpoint=http://127.0.0.1:9000&use_path_style=false", "", ""},
		{"s3://feed?endpoint=http://127.0.0.1:9000&s3ForcePathStyle=true", "", ""},
		// Amazon S3 itself, and other schemes.
		{"s3://feed?region=eu-central-1", "", ""},
		{"gs://feed?endpoint=http://127.0.0.1:4443", "", ""},
		{"azblob://feed?domain=127.0.0.1:10000", "", ""},
		{"file:///srv/feed", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			p := pathStyleOf(tt.url, u)
			var never, fixed string
			if p != nil {
				never, fixed = p.never(), p.fixed
				if fu, err := url.Parse(fixed); err != nil || fu.Query().Get("use_path_style") != "true" || pathStyleOf(fixed, fu) != nil {
					t.Errorf("the fixed URL %s does not ask for path style: %v", fixed, err)
				}
			}
			if never != tt.never || fixed != tt.fixed {
				t.Errorf("got never %q, fixed %q; want %q, %q", never, fixed, tt.never, tt.fixed)
			}
			_, err = ParseBucketURL(tt.url)
			if refused := err != nil && strings.Contains(err.Error(), "add use_path_style=true, as in '"+tt.fixed+"'"); refused != (tt.never != "") {
				t.Errorf("ParseBucketURL: %v; want it refused: %v", err, tt.never != "")
			}
		})
	}
}

// TestPathStyleVirtualHost: a failed lookup of BUCKET.HOST, however
// wrapped, is the one that gets the hint; another host's is not.
func TestPathStyleVirtualHost(t *testing.T) {
	raw := "s3://feed?endpoint=http://minio:9000"
	u, _ := url.Parse(raw)
	p := pathStyleOf(raw, u)
	tests := []struct {
		err  error
		want bool
	}{
		{fmt.Errorf("listing articles/: %w", &net.OpError{Op: "dial", Err: &net.DNSError{Err: "no such host", Name: "feed.minio", IsNotFound: true}}), true},
		{&net.DNSError{Err: "i/o timeout", Name: "FEED.MINIO.", IsTimeout: true}, true},
		{&net.DNSError{Err: "no such host", Name: "minio", IsNotFound: true}, false},
		{&net.DNSError{Err: "no such host", Name: "other.minio", IsNotFound: true}, false},
		{errors.New("lookup feed.minio: no such host"), false},
	}
	for _, tt := range tests {
		if got := p.virtualHost(tt.err); got != tt.want {
			t.Errorf("virtualHost(%v) = %v, want %v", tt.err, got, tt.want)
		}
	}
}

// TestOpenAzureNoAccount: azblob:// with no storage account in the
// environment or the URL says what to set, not the SDK's own words.
func TestOpenAzureNoAccount(t *testing.T) {
	for _, k := range []string{"AZURE_STORAGE_ACCOUNT", "AZURE_STORAGE_CONNECTION_STRING", "AZURE_STORAGEBLOB_CONNECTIONSTRING"} {
		t.Setenv(k, "")
	}
	b, err := ParseBucketURL("azblob://c/feed/")
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Open(context.Background(), Options{})
	want := "opening azblob://c/feed/: no Azure storage account is named: set AZURE_STORAGE_ACCOUNT (with AZURE_STORAGE_KEY or AZURE_STORAGE_SAS_TOKEN, or az login), or add storage_account=NAME to the URL, as in 'azblob://c/feed/?storage_account=NAME'"
	if err == nil || err.Error() != want {
		t.Errorf("got %v, want %q", err, want)
	}
}
