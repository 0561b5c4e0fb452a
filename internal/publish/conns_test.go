package publish

import (
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/publish/emulatortest"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishKeepsConnections publishes a build of some hundreds of files
// to each bucket server through a stand-in that counts the connections
// made to it: publish keeps one open per worker between uploads, instead
// of closing all but two (net/http's default) as each upload ends and
// dialling again, a TLS handshake each time on a real cloud. Without
// keepConns, 952 files took 388 connections to fake-gcs-server and 47 to
// Azurite. (The AWS SDK keeps 10: versitygw, answering at once on this
// machine, sees 16 or 17 either way.)
func TestPublishKeepsConnections(t *testing.T) {
	s := newSite(t, corpus.Options{Articles: 120, Limits: []int{2, 5}, Seed: 3, Filters: []string{"tag"}})
	files := len(readManifest(t, s.out).Files)
	if files < 200 {
		t.Fatalf("the build has %d files, want some hundreds", files)
	}
	const workers = DefaultWorkers // more than the AWS SDK keeps
	for _, tt := range []struct {
		name string
		// bucket starts the server and returns the URL of a bucket on
		// it, reached through a stand-in.
		bucket func(t *testing.T) (string, *standIn)
	}{
		{"s3", func(t *testing.T) (string, *standIn) {
			v := versitytest.Start(t)
			url, _ := v.NewBucket(t)
			srv := startStandIn(t, v.Endpoint, false, nil)
			return strings.Replace(url, "endpoint="+v.Endpoint, "endpoint="+srv.URL, 1), srv
		}},
		{"gcs", func(t *testing.T) (string, *standIn) {
			gcs := emulatortest.GCS(t)
			url, _ := gcs.NewBucket(t)
			srv := startStandIn(t, "http://"+gcs.Endpoint, true, nil)
			t.Setenv("STORAGE_EMULATOR_HOST", srv.Addr)
			return url, srv
		}},
		{"azblob", func(t *testing.T) (string, *standIn) {
			az := shared.Azurite(t)
			url, _ := az.NewBucket(t)
			srv := startStandIn(t, "http://"+az.Endpoint, false, nil)
			return strings.Replace(url, "domain="+az.Endpoint, "domain="+srv.Addr, 1), srv
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, srv := tt.bucket(t)
			opt := lockOptions(url, "")
			opt.Workers = workers
			res := publishDir(t, open(t, url), s.out, opt)
			if res.Uploaded != files+1 {
				t.Fatalf("uploaded %d, want %d", res.Uploaded, files+1)
			}
			// A connection a worker dials while another is being
			// handed back may stay idle: a few more than the workers.
			n := srv.conns.Load()
			t.Logf("%d files uploaded over %d connections", files+1, n)
			if n > 2*workers {
				t.Errorf("%d files uploaded over %d connections, want at most %d (one per worker, and a few)", files+1, n, 2*workers)
			}
		})
	}
}
