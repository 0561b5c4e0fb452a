package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/feedgen/feedgen/internal/corpus"
)

// Targets of feedbench serve -source bucket (issue 40).
const (
	targetBucketFirst = time.Second // from the server's start to its first answer
	targetBucketRatio = 0.9         // its req/s over serve --dir's, on the hot page
	targetBucketRSS   = 16 << 20    // its memory above --cache-size and what it held once it answered
	servedBucket      = "served"
)

// runBucket is feedbench serve -source bucket: the build published to a
// versitygw's bucket, served from there, against serve --dir on the
// same build.
func (b *serveBench) runBucket(ctx context.Context) error {
	cache, err := humanize.ParseBytes(b.plan.cacheSize)
	if err != nil {
		return fmt.Errorf("-cache-size %q: %w", b.plan.cacheSize, err)
	}
	gwBin, err := findVersitygw(os.Getenv("FEEDGEN_VERSITYGW"))
	if err != nil {
		return err
	}
	site := filepath.Join(b.root, "site")
	opt := corpus.Options{Articles: b.plan.articles, Limits: []int{20}, Offsets: "all", Seed: b.plan.seed}
	if _, err := corpus.Write(site, opt); err != nil {
		return fmt.Errorf("generate site: %w", err)
	}
	served := filepath.Join(site, "public")
	if b.plan.chunked {
		if _, served, err = b.buildChunks(ctx, site, opt); err != nil {
			return err
		}
	} else if _, err := run(ctx, b.root, b.feedgen, "build", "--config", filepath.Join(site, corpus.ConfigPath), "--quiet"); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	st, err := statTree(filepath.Join(served, "articles"))
	if err != nil {
		return err
	}
	layout := "pages"
	if b.plan.chunked {
		layout = "chunks (max_limit 100)"
	}
	fmt.Fprintf(b.out, "feedbench serve -source bucket: %d articles, layout %s: %d files, %s; wrk %d threads, %d connections, %s after %s warm-up\n",
		b.plan.articles, layout, st.files, formatBytes(st.bytes), b.plan.threads, b.plan.connections, b.plan.duration, b.plan.warmup)

	store := filepath.Join(b.root, "store")
	if err := os.MkdirAll(filepath.Join(store, servedBucket), 0o755); err != nil {
		return err
	}
	gw, err := startVersitygw(ctx, gwBin, store, filepath.Join(b.root, "iam"))
	if err != nil {
		return err
	}
	defer gw.stop()
	url := "s3://" + servedBucket + "?endpoint=http://" + gw.endpoint + "&use_path_style=true&region=us-east-1"
	env := toolEnv(b.root)
	publish := exec.CommandContext(ctx, b.feedgen, "publish", "--dir", served, "-q", url)
	publish.Dir, publish.Env = b.root, env
	m, _, _, err := runCmd(publish)
	if err != nil {
		return fmt.Errorf("publish: %w", err)
	}
	fmt.Fprintf(b.out, "published to versitygw %s (posix backend) in %s\n", gw.endpoint, m.wall.Round(time.Millisecond))

	folder, err := b.startFeedgen(ctx, served)
	if err != nil {
		return err
	}
	defer folder.stop()
	bucket, first, err := b.startBucketServer(ctx, url, env)
	if err != nil {
		return err
	}
	defer bucket.stop()
	// What it holds having answered one page: the runtime, the indexes.
	base, err := serverMemory(bucket.cmd.Process.Pid)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "feedgen serve --dir %s --cache-size %s: first answer %s after its start   target <= %s %s\n",
		url, b.plan.cacheSize, first.Round(time.Millisecond), targetBucketFirst, b.verdict(first <= targetBucketFirst))

	// Both must give the same bytes before their speed means anything.
	offsets := shuffledOffsets(b.plan.articles, b.plan.seed, 2)
	for _, off := range append([]int{min(40, len(offsets)-1), 0, len(offsets) - 1}, offsets[:min(50, len(offsets))]...) {
		target := "/articles/?limit=20&offset=" + strconv.Itoa(off)
		want, err := fetchPage(ctx, folder.addr, target)
		if err != nil {
			return err
		}
		if got, err := fetchPage(ctx, bucket.addr, target); err != nil {
			return err
		} else if !bytes.Equal(got, want) {
			return fmt.Errorf("http://%s%s (the bucket) does not answer what serve --dir does", bucket.addr, target)
		}
	}
	workloads, err := writeWorkloads(b.root, offsets)
	if err != nil {
		return err
	}
	sampler := sampleRSS(bucket.cmd.Process.Pid, 100*time.Millisecond)
	for i, w := range workloads {
		res, err := b.compare(ctx, [2]*serverProcess{folder, bucket}, [2]string{"folder", "bucket"}, w, func() {})
		if err != nil {
			return err
		}
		r := res[1].reqPerSec / res[0].reqPerSec
		target := "(no target: the walk reads what the cache cannot hold)"
		if i == 0 {
			target = fmt.Sprintf("target >= %.1f %s", targetBucketRatio, b.verdict(r >= targetBucketRatio))
		}
		fmt.Fprintf(b.out, "%-38s serve --dir %9.0f req/s p99 %-9s bucket %9.0f req/s p99 %-9s bucket/folder %.2f  %s\n",
			w.name, res[0].reqPerSec, res[0].p99, res[1].reqPerSec, res[1].p99, r, target)
	}
	maxRSS, _ := sampler.stop()
	fmt.Fprintf(b.out, "bucket server memory (RssAnon + memfd): %s once it answered (the build's indexes, the runtime), max %s: %s more; --cache-size %s   target more <= cache + %s %s\n",
		formatBytes(base), formatBytes(maxRSS), formatBytes(maxRSS-base), formatBytes(int64(cache)), formatBytes(targetBucketRSS),
		b.verdict(maxRSS-base <= int64(cache)+targetBucketRSS))
	fmt.Fprintln(b.out, b.tally)
	return nil
}

// startBucketServer starts feedgen serve --dir url on a free loopback
// port, with two cores, and returns once it answers the hot page with
// 200: how long that took from the start of the process.
func (b *serveBench) startBucketServer(ctx context.Context, url string, env []string) (*serverProcess, time.Duration, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, 0, err
	}
	start := time.Now()
	p, err := startServerProcess(b.feedgen, append(env, "GOMAXPROCS=2"), b.log, "serve", "--dir", url, "--addr", addr, "--cache-size", b.plan.cacheSize)
	if err != nil {
		return nil, 0, err
	}
	p.addr = addr
	deadline := start.Add(60 * time.Second)
	for {
		if _, err := fetchPage(ctx, addr, hotTarget); err == nil {
			return p, time.Since(start), nil
		}
		select {
		case <-p.done:
			return nil, 0, errors.New("feedgen serve --dir " + url + " exited before it answered (its output is in the log)")
		case <-ctx.Done():
			p.stop()
			return nil, 0, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			p.stop()
			return nil, 0, fmt.Errorf("feedgen serve --dir %s did not answer within 60s", url)
		}
	}
}
