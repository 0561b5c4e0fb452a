package main

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
)

// Targets of the bundle benchmark.
const (
	targetBundleSize  = 0.25 // bundle size over the output's size on disk
	targetBundleTime  = 2.0  // bundle time over a cold build's
	targetBundleServe = 0.8  // serve --bundle req/s over serve --dir req/s, each workload
	diskBlock         = 4096 // the block size of the "on disk" size
)

// bundlePlan is what one "feedbench bundle" measures.
type bundlePlan struct {
	feedgen  string
	dir      string
	articles int
	seed     int64
	runs     int
	wrkPlan
	quick bool
}

// bundleAbout is what "feedbench bundle -h" says the command does.
const bundleAbout = `Builds a site (limits [20], offsets all) and measures feedgen bundle against it:
  bundle time against a cold build (alternated, medians), target <= 2x
  bundle size against the output's size on disk (4 KiB blocks), target <= 0.25
  feedgen verify time
  feedgen serve --bundle req/s against serve --dir (GOMAXPROCS 2 each, wrk on two
  workloads: one hot page, a shuffled walk over every page), target >= 0.8
Installs wrk with apt-get when it is missing.
`

// parseBundleFlags returns the plan the flags of "feedbench bundle" ask
// for. Usage errors are printed to stderr before they are returned; -h
// returns flag.ErrHelp.
func parseBundleFlags(args []string, stderr io.Writer) (bundlePlan, error) {
	c := newCommandLine("bundle", stderr, "[-feedgen PATH] [-articles N] [-runs N] [-duration D] [-quick] [-dir DIR]", "", bundleAbout)
	articles := c.Int("articles", 10_000, "`number` of articles of the site")
	c.seedFlag()
	c.runsFlag("timed `runs` of cold build, bundle and verify; medians are reported")
	var wrk wrkPlan
	wrk.register(c.FlagSet)
	c.quickFlag("smoke test: 1,000 articles, 3 runs, one round of 2s wrk runs after 1s warm-ups")
	if err := c.parse(args); err != nil {
		return bundlePlan{}, err
	}
	plan := bundlePlan{
		feedgen: c.feedgen, dir: c.dir, articles: *articles, seed: c.seed, runs: c.runs, wrkPlan: wrk, quick: c.quick,
	}
	quickDefault(c, "articles", &plan.articles, 1_000)
	quickDefault(c, "runs", &plan.runs, 3)
	plan.wrkPlan.setQuick(c)
	if plan.articles < 100 || plan.runs < 1 || !plan.wrkPlan.ok() {
		return bundlePlan{}, c.usageError("need -articles >= 100, -runs >= 1, " + wrkNeeds)
	}
	return plan, nil
}

// bundleBench holds the state of one run.
type bundleBench struct {
	plan    bundlePlan
	out     io.Writer
	log     io.Writer
	root    string
	feedgen string
	serve   *serveBench // for its wrk runs
	tally
}

// runBundle runs the whole benchmark in a temporary folder.
func runBundle(ctx context.Context, plan bundlePlan, out, log io.Writer) (err error) {
	wrk, err := exec.LookPath("wrk")
	if err != nil {
		if _, wrk, err = ensureTools(ctx, log); err != nil {
			return err
		}
	}
	b := &bundleBench{plan: plan, out: out, log: log}
	b.serve = &serveBench{plan: servePlan{wrkPlan: plan.wrkPlan}, out: out, log: log, wrk: wrk}
	if b.root, b.feedgen, err = workspace(ctx, "bundle", plan.dir, plan.feedgen); err != nil {
		return err
	}
	defer removeRoot(b.root, &err)
	return b.run(ctx)
}

func (b *bundleBench) run(ctx context.Context) error {
	siteDir := filepath.Join(b.root, "site")
	opt := corpus.Options{Articles: b.plan.articles, Limits: []int{20}, Offsets: "all", Seed: b.plan.seed}
	if _, err := corpus.Write(siteDir, opt); err != nil {
		return fmt.Errorf("generate site: %w", err)
	}
	s := site{dir: siteDir, opt: opt}
	archive := filepath.Join(b.root, "feed.zip")
	if b.plan.quick {
		fmt.Fprintf(b.out, "quick mode: %d articles; the targets are meant for 10000\n", b.plan.articles)
	}

	// Cold builds alternated with bundles of the output they wrote.
	var buildRuns, bundleRuns []measurement
	for range b.plan.runs {
		m, err := b.coldBuild(ctx, s)
		if err != nil {
			return err
		}
		buildRuns = append(buildRuns, m)
		if err := removeAndSync(ctx, archive); err != nil {
			return err
		}
		m, err = run(ctx, b.root, b.feedgen, "bundle", "--dir", s.public(), "--config", s.config(), "-o", archive, "--quiet")
		if err != nil {
			return fmt.Errorf("bundle: %w", err)
		}
		bundleRuns = append(bundleRuns, m)
	}
	size, err := treeSize(s.public())
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "feedbench bundle: %s: %d files, %s (%s on disk in 4 KiB blocks)\n",
		s, size.files, formatBytes(size.bytes), formatBytes(size.disk))
	buildMedian, bundleMedian := median(walls(buildRuns)), median(walls(bundleRuns))
	fmt.Fprintf(b.out, "%-14s %s\n", "cold build", timing(buildRuns))
	r := ratio(bundleMedian, buildMedian)
	fmt.Fprintf(b.out, "%-14s %s   bundle/build = %.2f   target <= %.1f %s\n", "bundle", timing(bundleRuns), r, targetBundleTime, b.verdict(r <= targetBundleTime))

	info, err := os.Stat(archive)
	if err != nil {
		return err
	}
	onDisk, apparent := float64(info.Size())/float64(size.disk), float64(info.Size())/float64(size.bytes)
	fmt.Fprintf(b.out, "%-14s %s: %.3f of the output on disk, %.3f of its bytes   target <= %.2f of the output on disk %s\n",
		"bundle size", formatBytes(info.Size()), onDisk, apparent, targetBundleSize, b.verdict(onDisk <= targetBundleSize))

	var verifyRuns []measurement
	for range b.plan.runs {
		m, err := run(ctx, b.root, b.feedgen, "verify", archive)
		if err != nil {
			return fmt.Errorf("verify: %w", err)
		}
		verifyRuns = append(verifyRuns, m)
	}
	fmt.Fprintf(b.out, "%-14s %s   (no target)\n", "verify", timing(verifyRuns))
	return b.serveBoth(ctx, s, archive)
}

// coldBuild removes the output of s, syncs, and times a build.
func (b *bundleBench) coldBuild(ctx context.Context, s site) (measurement, error) {
	if err := removeAndSync(ctx, s.public()); err != nil {
		return measurement{}, err
	}
	m, err := run(ctx, b.root, b.feedgen, "build", "--config", s.config(), "--quiet")
	if err != nil {
		return m, fmt.Errorf("cold build: %w", err)
	}
	return m, checkIndex("cold build", s)
}

// removeAndSync removes name and flushes the file system buffers, so that
// what the last step wrote does not slow down the next timed one.
func removeAndSync(ctx context.Context, name string) error {
	if err := os.RemoveAll(name); err != nil {
		return fmt.Errorf("remove %s: %w", name, err)
	}
	return syncDisk(ctx)
}

// serveBoth serves the output with serve --dir and its bundle with serve
// --bundle, checks that they answer the same, and compares their req/s
// with wrk on two workloads.
func (b *bundleBench) serveBoth(ctx context.Context, s site, archive string) error {
	start := time.Now()
	dir, err := startServing(ctx, b.feedgen, b.log, "serve", "--dir", s.public(), "--addr", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer dir.stop()
	dirStart := time.Since(start)
	start = time.Now()
	zipped, err := startServing(ctx, b.feedgen, b.log, "serve", "--bundle", archive, "--addr", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer zipped.stop()
	zipStart := time.Since(start)
	servers := []*serverProcess{dir, zipped}

	offsets := shuffledOffsets(b.plan.articles, b.plan.seed, 3)
	if err := checkSamePages(ctx, s.public(), servers, offsets); err != nil {
		return err
	}
	rss := func(p *serverProcess) string {
		n, err := serverMemory(p.cmd.Process.Pid)
		if err != nil {
			return "?"
		}
		return formatBytes(n)
	}
	fmt.Fprintf(b.out, "serve --dir started in %s, memory %s; serve --bundle (verify, then load) started in %s, memory %s (RssAnon + memfd); wrk %d threads, %d connections, %s after %s warm-up\n",
		formatSeconds(dirStart), rss(dir), formatSeconds(zipStart), rss(zipped),
		b.plan.threads, b.plan.connections, b.plan.duration, b.plan.warmup)

	workloads, err := writeWorkloads(b.root, offsets)
	if err != nil {
		return err
	}
	for _, w := range workloads {
		res, err := b.serve.compare(ctx, [2]*serverProcess{dir, zipped}, [2]string{"serve --dir", "serve --bundle"}, w, func() {})
		if err != nil {
			return err
		}
		r := res[1].reqPerSec / res[0].reqPerSec
		fmt.Fprintf(b.out, "%-38s --dir %9.0f req/s p99 %-9s --bundle %9.0f req/s p99 %-9s bundle/dir %.2f  target >= %.1f %s\n",
			w.name, res[0].reqPerSec, res[0].p99, res[1].reqPerSec, res[1].p99, r, targetBundleServe, b.verdict(r >= targetBundleServe))
	}
	fmt.Fprintln(b.out, b.tally)
	return nil
}

// diskStats is the size of a tree: its files, their bytes, and the space
// they take in 4 KiB blocks (what du shows on most file systems).
type diskStats struct {
	files int
	bytes int64
	disk  int64
}

// treeSize measures every file under root.
func treeSize(root string) (diskStats, error) {
	var st diskStats
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		st.files++
		st.bytes += info.Size()
		st.disk += roundUp(info.Size(), diskBlock)
		return nil
	})
	if err != nil {
		return diskStats{}, fmt.Errorf("measure %s: %w", root, err)
	}
	return st, nil
}

// roundUp returns n rounded up to a multiple of block.
func roundUp(n, block int64) int64 {
	return (n + block - 1) / block * block
}
