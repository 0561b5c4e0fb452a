package publish

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/publish/versitytest"
)

// TestPublishBench measures publishing to versitygw a generated site of
// $FEEDGEN_BENCH_PUBLISH articles, limits [20], every offset (make
// bench-publish: 10,000): the first publish, an unchanged one, and one
// after an edited article. It is skipped unless the variable is set.
func TestPublishBench(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("FEEDGEN_BENCH_PUBLISH"))
	if n <= 0 {
		t.Skip("set FEEDGEN_BENCH_PUBLISH=ARTICLES to run (make bench-publish)")
	}
	start := time.Now()
	s := newSite(t, corpus.Options{Articles: n, Limits: []int{20}, Offsets: "all", Seed: 1})
	pages := len(readManifest(t, s.out).Files)
	t.Logf("site: %d articles, %d pages, built in %s", n, pages, time.Since(start).Round(time.Millisecond))

	v := versitytest.Start(t)
	url, _ := v.NewBucket(t)
	b := open(t, url)
	run := func(name string) (*Result, time.Duration) {
		start := time.Now()
		res, err := Publish(context.Background(), b, os.DirFS(s.out), Options{MaxDeletes: -1})
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		d := time.Since(start)
		t.Logf("%-10s %6d objects (%s) uploaded, %6d unchanged, %d checked, %d deleted, in %s",
			name+":", res.Uploaded, human.Bytes(res.UploadedBytes), res.Unchanged, res.Checked, res.Deleted, d.Round(time.Millisecond))
		return res, d
	}
	_, first := run("first")
	res, unchanged := run("unchanged")
	if res.Uploaded != 0 {
		t.Errorf("the unchanged publish uploaded %d objects", res.Uploaded)
	}
	t.Logf("unchanged / first: %.3f", unchanged.Seconds()/first.Seconds())

	before := readManifest(t, s.out)
	s.edit(t, n/2, "One edited title")
	up, del := changed(before, readManifest(t, s.out))
	res, _ = run("one edit")
	if res.Uploaded != up+1 || res.Deleted != del {
		t.Errorf("one edit: got %d uploads and %d deletes, want the %d pages that changed and the manifest, and %d", res.Uploaded, res.Deleted, up, del)
	}
}
