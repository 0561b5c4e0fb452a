//go:build unix

package main

import (
	"regexp"
	"syscall"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishStalledS3 stops the S3 service (SIGSTOP) under feedgen
// publish: it says each try that found no answer, after the short wait
// for a first byte (--connect-timeout, not --timeout), then exits 1 with
// a message that says the service did not answer and how to give it
// longer, and does not hang.
func TestPublishStalledS3(t *testing.T) {
	v := versitytest.Start(t)
	url, _ := v.NewBucket(t)
	dir := t.TempDir()
	bundleSite(t, dir)
	if err := v.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	defer v.Process.Signal(syscall.SIGCONT)
	start := time.Now()
	r := runFeedgen(t, dir, nil, "publish", "--dir", "site/public", "--connect-timeout", "300ms", url)
	want := `\Areading the attributes of manifest\.json: no answer for 300ms \(try 1 of 3\); trying again
reading the attributes of manifest\.json: no answer for 300ms \(try 2 of 3\); trying again
feedgen: reading the attributes of manifest\.json: the bucket's service did not answer for 300ms, tried 3 times \(--connect-timeout sets how long a request may wait for the first byte of an answer\)
\z`
	if r.code != 1 || !regexp.MustCompile(want).MatchString(r.stderr) {
		t.Errorf("got exit %d, stderr %q; want 1, %s", r.code, r.stderr, want)
	}
	if d := time.Since(start); d > 15*time.Second {
		t.Errorf("took %v", d)
	}
}
