package main

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"testing"
)

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
