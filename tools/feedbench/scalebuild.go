package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/retry"
)

// Targets of the scale benchmark, part (b). Sizes are decimal.
const (
	targetScaleLinear   = 1.2                    // t(N) over t(N/10) × N/(N/10)
	targetScaleBuildRSS = 2 * 1000 * 1000 * 1000 // peak RSS of the N-article build
	// bytesPerArticleFile is about how many bytes of disk an article of
	// the corpus takes: 1-4 kB of markdown in blocks of 4 kB (936 MB for
	// 200,000 articles).
	bytesPerArticleFile = 5000
	// recentlyFreed is how long ext4 without a journal skips the inodes
	// a removal freed (see buildBench.setAside), after a sync.
	recentlyFreed = 60 * time.Second
)

// scaleBuildSites returns the corpus options of the two sites of part
// (b): articles/10 and articles articles, limits [20, 50, 100], offsets
// aligned, no filters; with layout "chunks", that layout instead (every
// offset).
func scaleBuildSites(articles int, seed int64, layout ...string) [2]corpus.Options {
	opt := func(n int) corpus.Options {
		o := corpus.Options{Articles: n, Limits: scaleLimits, Offsets: "aligned", Seed: seed}
		if len(layout) > 0 && layout[0] == "chunks" {
			o.Offsets, o.Layout = "all", "chunks"
		}
		return o
	}
	return [2]corpus.Options{opt(articles / 10), opt(articles)}
}

// scaleBuildRuns returns the cold builds part (b) times of each site: runs
// of the small one, max(1, runs/2) of the large one.
func scaleBuildRuns(runs int) [2]int { return [2]int{runs, max(1, runs/2)} }

// scaleBuildEstimate is about how many bytes of disk part (b) needs at
// most: the large site, and the output of each of its builds and its copy
// (set aside until the site is removed). The small site is removed before
// the large one is generated.
func scaleBuildEstimate(articles, runs int) int64 {
	opt := scaleBuildSites(articles, 0)[1]
	output := int64(articles) * int64(len(opt.Limits)) * bytesPerArticlePage
	return int64(articles)*bytesPerArticleFile + 2*int64(scaleBuildRuns(runs)[1])*output
}

// linearRatio returns t(large) over the time linear in the number of
// articles from t(small): large / (small × nLarge/nSmall).
func linearRatio(small, large time.Duration, nSmall, nLarge int) float64 {
	if nSmall <= 0 {
		return ratio(large, 0)
	}
	return ratio(large, time.Duration(float64(small)*float64(nLarge)/float64(nSmall)))
}

// scaleBuild is what part (b) measured of one site.
type scaleBuild struct {
	site   site
	runs   []measurement
	copies []measurement // cp -a of the output, after each build
	stats  treeStats
	pages  int // page files of every limit
}

// coldScale is part (b): cold builds of articles/10 and articles
// articles, each site generated, built and removed in turn.
func (b *scaleBench) coldScale(ctx context.Context) error {
	bb := &buildBench{plan: buildPlan{seed: b.plan.seed, quick: b.plan.quick}, feedgen: b.serve.feedgen, root: filepath.Join(b.serve.root, "build"), out: b.out}
	if err := os.Mkdir(bb.root, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(bb.root)
	opts, runs := scaleBuildSites(b.plan.buildArticles, b.plan.seed, b.plan.layout), scaleBuildRuns(b.plan.buildRuns)
	fmt.Fprintf(b.out, "(b) feedbench scale: cold builds of %d and %d articles, limits %v, offsets aligned, no filters: %d and %d runs, the output moved aside and a sync before each; each build followed by cp -a of its output\n",
		opts[0].Articles, opts[1].Articles, scaleLimits, runs[0], runs[1])
	var res [2]scaleBuild
	for i, name := range [2]string{"small", "large"} {
		var err error
		if res[i], err = b.scaleSite(ctx, bb, name, opts[i], runs[i]); err != nil {
			return err
		}
	}
	small, large := res[0], res[1]
	nSmall, nLarge := small.site.opt.Articles, large.site.opt.Articles
	r := linearRatio(median(walls(small.runs)), median(walls(large.runs)), nSmall, nLarge)
	fmt.Fprintf(b.out, "(b) t(%d) / (%g × t(%d)) = %.2f   target <= %.1f %s\n",
		nLarge, float64(nLarge)/float64(nSmall), nSmall, r, targetScaleLinear, b.verdict(r <= targetScaleLinear))
	// The reference: how this machine's time to write the same output
	// grows, measured in the same run. Writing 4 GB is not ten times
	// writing 0.4 GB on every machine (page cache, dirty-page throttling,
	// a VM's memory), and the build cannot be more linear than its output.
	cp := linearRatio(median(walls(small.copies)), median(walls(large.copies)), nSmall, nLarge)
	fmt.Fprintf(b.out, "(b) the same for cp -a of the output: %.2f (how this machine scales in writing these trees)\n", cp)
	// Reported, not a target: the target is the build's own ratio.
	fmt.Fprintf(b.out, "(b) build over cp -a, %d against %d articles: %.2f\n", nLarge, nSmall, r/cp)
	rss := peak(large.runs)
	fmt.Fprintf(b.out, "(b) peak RSS of the %d-article build %s   target <= %s %s\n",
		nLarge, formatBytes(rss), formatBytes(targetScaleBuildRSS), b.verdict(rss <= targetScaleBuildRSS))
	return nil
}

// scaleSite generates the site name of part (b), times n cold builds of
// it, checks and reports the output of the last one and removes the site
// with every output.
func (b *scaleBench) scaleSite(ctx context.Context, bb *buildBench, name string, opt corpus.Options, n int) (scaleBuild, error) {
	if err := b.settle(ctx); err != nil {
		return scaleBuild{}, err
	}
	var s site
	var err error
	if mem := memoryDir(int64(opt.Articles) * bytesPerArticleFile); mem != "" {
		s, err = memorySite(bb, mem, name, opt)
	} else {
		s, err = bb.generate(name, opt)
	}
	if err != nil {
		return scaleBuild{}, err
	}
	if s.out != "" {
		defer os.RemoveAll(s.dir) // memory, not only disk, on an error
	}
	res := scaleBuild{site: s}
	var fromDisk []string
	for range n {
		// Both sites' builds find their content in memory, as a build
		// after a checkout does (see memoryDir); on disk, it is read into
		// the page cache first.
		if s.out == "" {
			if err := readTree(filepath.Join(s.dir, "content")); err != nil {
				return scaleBuild{}, err
			}
		}
		before := diskReads()
		m, err := bb.coldBuild(ctx, "(b)", s)
		if err != nil {
			return scaleBuild{}, err
		}
		fromDisk = append(fromDisk, formatBytes(diskReads()-before))
		res.runs = append(res.runs, m)
		c, err := bb.copyTree(ctx, "(b)", s.public(), filepath.Join(bb.root, "copy"))
		if err != nil {
			return scaleBuild{}, err
		}
		res.copies = append(res.copies, c)
	}
	where := "in memory (tmpfs)"
	if s.out == "" {
		where = "on disk, read once before each build"
	}
	fmt.Fprintf(b.out, "(b) %s: content %s; read from disk during the builds: %s\n", s, where, strings.Join(fromDisk, ", "))
	if res.stats, err = statTree(s.public()); err != nil {
		return scaleBuild{}, err
	}
	pages, want, err := countPages(s)
	if err != nil {
		return scaleBuild{}, err
	}
	res.pages = pages
	fmt.Fprintf(b.out, "(b) %-20s %-44s %s  CPU median %s  pages %d  %s  peak RSS %s\n",
		"cold build", s, timing(res.runs), formatSeconds(median(cpus(res.runs))), pages, res.stats, formatBytes(peak(res.runs)))
	fmt.Fprintf(b.out, "(b) %-20s %-44s %s  CPU median %s\n", "cp -a", "its output", timing(res.copies), formatSeconds(median(cpus(res.copies))))
	if pages != want {
		return scaleBuild{}, fmt.Errorf("(b) %s: the output holds %d pages, want %d", s, pages, want)
	}
	// The outputs were set aside in bb.root/old.
	if err := b.remove(ctx, s.dir, s.public(), filepath.Join(bb.root, "old")); err != nil {
		return scaleBuild{}, err
	}
	return res, nil
}

// memorySite generates site name with its content in a new folder under
// mem and its output in bb.root, named in its config's output_dir.
func memorySite(bb *buildBench, mem, name string, opt corpus.Options) (site, error) {
	dir, err := os.MkdirTemp(mem, "feedbench-"+name+"-")
	if err != nil {
		return site{}, err
	}
	s := site{dir: dir, opt: opt, out: filepath.Join(bb.root, name+"-public")}
	start := time.Now()
	n, err := corpus.Write(s.dir, opt)
	if err == nil {
		err = setOutputDir(s.config(), s.out)
	}
	if err != nil {
		os.RemoveAll(dir)
		return site{}, fmt.Errorf("generate site (%s): %w", name, err)
	}
	fmt.Fprintf(bb.out, "site (%s): %d files generated in %s, in memory (%s); output to %s\n", name, n, formatSeconds(time.Since(start)), mem, s.out)
	return s, nil
}

// setOutputDir points the output_dir of the config file at dir.
func setOutputDir(config, dir string) error {
	data, err := os.ReadFile(config)
	if err != nil {
		return err
	}
	const line = "\noutput_dir: public\n"
	if !bytes.Contains(data, []byte(line)) {
		return fmt.Errorf("%s has no line %q", config, line[1:len(line)-1])
	}
	data = bytes.Replace(data, []byte(line), []byte("\noutput_dir: "+dir+"\n"), 1)
	return os.WriteFile(config, data, 0o644)
}

// countPages returns how many page files the output of s holds under
// public/articles/LIMIT for its limits, and how many it should.
func countPages(s site) (got, want int, err error) {
	if s.opt.Layout == "chunks" {
		return 0, 0, nil // no page files
	}
	for _, limit := range s.opt.Limits {
		entries, err := os.ReadDir(filepath.Join(s.public(), "articles", strconv.Itoa(limit)))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, 0, fmt.Errorf("count pages: %w", err)
		}
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
				got++
			}
		}
		want += expectedPages(s.opt.Articles, limit, s.opt.Offsets)
	}
	return got, want, nil
}

// remove removes the folders dirs, syncs, and notes the time for settle.
func (b *scaleBench) remove(ctx context.Context, dirs ...string) error {
	for _, dir := range dirs {
		if err := os.RemoveAll(dir); err != nil {
			return err
		}
	}
	b.removed = time.Now()
	return syncDisk(ctx)
}

// settle waits until recentlyFreed has passed since the bench last removed
// a tree: until then each new file skips past the inodes it freed, which
// made writing 50,000 files four times as slow on this machine's disk, and
// would slow the next generated site and its builds. Not with -quick.
func (b *scaleBench) settle(ctx context.Context) error {
	wait := time.Until(b.removed.Add(recentlyFreed))
	if b.plan.quick || b.removed.IsZero() || wait <= 0 {
		return nil
	}
	fmt.Fprintf(b.out, "waiting %s: the files removed last were freed less than %s ago\n", formatSeconds(wait), recentlyFreed)
	return retry.Sleep(ctx, wait)
}

// readTree reads every file under dir, on all cores, into the page cache.
func readTree(dir string) error {
	var paths []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("read content: %w", err)
	}
	workers := runtime.GOMAXPROCS(0)
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(paths) && errs[w] == nil; i += workers {
				_, errs[w] = os.ReadFile(paths[i])
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// diskReads returns how many bytes the system has read from disk since it
// started (pgpgin of /proc/vmstat); 0 where it cannot tell.
func diskReads() int64 {
	data, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		return 0
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "pgpgin "); ok {
			kb, _ := strconv.ParseInt(rest, 10, 64)
			return kb * 1024
		}
	}
	return 0
}
