package main

import (
	"errors"
	"net"
	"net/url"
	"strings"
)

// pathStyle is what publish knows of an s3:// BUCKET_URL with an endpoint
// and no use_path_style: the SDK then names the bucket as a host name of
// the endpoint (virtual-hosted style, BUCKET.HOST), which an S3-compatible
// server at an IP address, at localhost or behind a name of its own
// (minio, in a compose file) does not answer.
type pathStyle struct {
	bucket string // the URL's bucket
	host   string // the endpoint's host, without its port
	fixed  string // the URL with use_path_style=true added
}

// pathStyleOf returns the pathStyle of a BUCKET_URL, nil when it is not an
// s3:// URL with an endpoint that leaves use_path_style (or its older
// name s3ForcePathStyle) out.
func pathStyleOf(raw string, u *url.URL) *pathStyle {
	if u.Scheme != "s3" {
		return nil
	}
	q := u.Query()
	endpoint := q.Get("endpoint")
	if endpoint == "" || q.Has("use_path_style") || q.Has("s3ForcePathStyle") {
		return nil
	}
	if !strings.Contains(endpoint, "://") {
		endpoint = "https://" + endpoint // as the SDK reads a bare host:port
	}
	e, err := url.Parse(endpoint)
	if err != nil || e.Hostname() == "" {
		return nil
	}
	fixed, fragment, _ := strings.Cut(raw, "#")
	if !strings.HasSuffix(fixed, "&") {
		fixed += "&"
	}
	fixed += "use_path_style=true"
	if fragment != "" {
		fixed += "#" + fragment
	}
	return &pathStyle{bucket: u.Host, host: e.Hostname(), fixed: fixed}
}

// never says why the bucket can never be a host name of the endpoint: its
// host is an IP address, or localhost. "" when it may be.
func (p *pathStyle) never() string {
	switch {
	case net.ParseIP(p.host) != nil:
		return "an IP address"
	case strings.EqualFold(p.host, "localhost"):
		return "localhost"
	}
	return ""
}

// virtualHost reports whether err is the failed lookup of the bucket as a
// host name of the endpoint.
func (p *pathStyle) virtualHost(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de) && strings.EqualFold(strings.TrimSuffix(de.Name, "."), p.bucket+"."+p.host)
}
