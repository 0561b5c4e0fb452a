package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
)

// Targets of the scale benchmark, part (a).
const (
	targetScaleMemory = 256_000_000 // RssAnon + RssShmem of feedgen serve, bytes
	targetScaleHot    = 1.0         // feedgen req/s over nginx req/s, hot page
	targetScaleWalk   = 0.9         // feedgen req/s over nginx req/s, shuffled walk
	// bytesPerArticlePage is about how many bytes an article takes in a
	// page of the corpus, to tell the size of an output before building it.
	bytesPerArticlePage = 1500
)

// scaleLimits are the limits of part (a).
var scaleLimits = []int{20, 50, 100}

// scalePlan is what one "feedbench scale" measures.
type scalePlan struct {
	feedgen       string
	dir           string
	articles      int // of the sites of (a) and (c)
	buildArticles int // of the large site of (b)
	buildRuns     int // cold builds of the small site of (b); see scaleBuildRuns
	seed          int64
	parts         string // of "abc": which parts to run
	layout        string // of the builds of (b)
	wrkPlan
	quick bool
}

// scaleAbout is what "feedbench scale -h" says the command does.
const scaleAbout = `Measures feedgen serve on an output larger than the memory it may take, and
feedgen build on a corpus of a million articles:
  (a) a site of -articles articles with limits [20, 50, 100] and every offset (2.4 GB for
      10,000 articles) served by nginx (2 workers, sendfile, open_file_cache) and by
      feedgen serve (GOMAXPROCS 2) on the same tree, wrk on one hot page and on a shuffled
      walk over every page of every limit, same run; feedgen's start-up time, and its
      memory from /proc/PID/status (VmRSS, RssAnon, RssFile, RssShmem, VmHWM) sampled
      during the runs: targets RssAnon + RssShmem <= 256 MB, req/s >= 1.0x nginx on the
      hot page and >= 0.9x on the walk;
  (b) cold builds (whole feedgen build processes, as feedbench build times them: the
      output moved aside, every content file read into the page cache and a sync
      before each, no cache dropped; the bytes read from disk during each build
      printed) of two sites of
      -build-articles / 10 and -build-articles articles (1,000,000 by default: 1M files,
      4.7 GB, generated in parallel, removed when measured, and 4 GB of output a build),
      limits [20, 50, 100], offsets aligned, no filters: -build-runs runs of the small
      one, half as many (at least one) of the large one; wall and CPU time, peak RSS
      from rusage, pages and bytes written, the page count checked; targets peak RSS
      <= 2 GB for the large one and its median time <= 1.2x linear from the small one's:
      t(N) / (10 x t(N/10)); each site is generated a minute after the last removal,
      which slows the creation of files on ext4 without a journal (not with -quick);
  (c) the serve benchmark (see feedbench serve -h: -articles articles, limits [20], every
      offset), to show that nothing got slower: req/s >= 1.0x nginx.
Checks first that the folder has room for the output. Installs nginx and wrk with
apt-get when they are missing.
`

// parseScaleFlags returns the plan the flags of "feedbench scale" ask for.
func parseScaleFlags(args []string, stderr io.Writer) (scalePlan, error) {
	c := newCommandLine("scale", stderr, "[-feedgen PATH] [-articles N] [-build-articles N] [-build-runs N] [-parts abc] [-duration D] [-quick] [-dir DIR]", "", scaleAbout)
	articles := c.Int("articles", 10_000, "`number` of articles of the sites of (a) and (c)")
	buildArticles := c.Int("build-articles", 1_000_000, "`number` of articles of the large site of (b); the small one has a tenth (default with -quick: 20000)")
	// Three runs of the large site: its time varies by 15% from one run
	// to the next on this VM, and one run made the ratio a draw.
	buildRuns := c.Int("build-runs", 6, "cold builds of the small site of (b); the large one gets max(1, `runs`/2) (default with -quick: 3)")
	layout := c.String("layout", "pages", "`layout` of the builds of (b): pages (limits [20, 50, 100], aligned) or chunks")
	parts := c.String("parts", "abc", "`parts` to run, any of a (the large output), b (the million-article build), c (the serve benchmark)")
	c.seedFlag()
	var wrk wrkPlan
	wrk.register(c.FlagSet)
	c.quickFlag("smoke test: 1,000 articles, one round of 2s runs after 1s warm-ups; 2,000 and 20,000 in (b)")
	if err := c.parse(args); err != nil {
		return scalePlan{}, err
	}
	plan := scalePlan{feedgen: c.feedgen, dir: c.dir, articles: *articles, buildArticles: *buildArticles, buildRuns: *buildRuns, seed: c.seed, parts: *parts, layout: *layout, wrkPlan: wrk, quick: c.quick}
	quickDefault(c, "articles", &plan.articles, 1_000)
	quickDefault(c, "build-articles", &plan.buildArticles, 20_000)
	quickDefault(c, "build-runs", &plan.buildRuns, 3)
	plan.wrkPlan.setQuick(c)
	if plan.layout != "pages" && plan.layout != "chunks" {
		return scalePlan{}, c.usageError("-layout: %q is neither pages nor chunks", plan.layout)
	}
	if plan.parts == "" || strings.Trim(plan.parts, "abc") != "" {
		return scalePlan{}, c.usageError("-parts: %q is not made of a, b and c", plan.parts)
	}
	if plan.articles < 100 || !plan.wrkPlan.ok() {
		return scalePlan{}, c.usageError("need -articles >= 100, " + wrkNeeds)
	}
	if plan.buildArticles < 1_000 || plan.buildRuns < 1 {
		return scalePlan{}, c.usageError("need -build-articles >= 1000 and -build-runs >= 1, got %d and %d", plan.buildArticles, plan.buildRuns)
	}
	return plan, nil
}

// scaleBench holds the state of one run.
type scaleBench struct {
	plan  scalePlan
	out   io.Writer
	serve *serveBench // nginx, wrk and their runs
	tally
	removed time.Time // when the bench last removed a tree, for settle
}

// runScale runs the benchmark in a temporary folder.
func runScale(ctx context.Context, plan scalePlan, out, log io.Writer) (err error) {
	b := &scaleBench{plan: plan, out: out}
	sb := &serveBench{plan: servePlan{articles: plan.articles, seed: plan.seed, wrkPlan: plan.wrkPlan, quick: plan.quick}, out: out, log: log}
	b.serve = sb
	if strings.ContainsAny(plan.parts, "ac") {
		if sb.nginx, sb.wrk, err = ensureTools(ctx, log); err != nil {
			return err
		}
	}
	if err := checkRoom(plan.dir, scaleEstimate(plan)); err != nil {
		return err
	}
	if sb.root, sb.feedgen, err = workspace(ctx, "scale", plan.dir, plan.feedgen); err != nil {
		return err
	}
	defer removeRoot(sb.root, &err)
	// nginx's workers may run as another user: let them read the output.
	if err := os.Chmod(sb.root, 0o755); err != nil {
		return fmt.Errorf("create temporary folder: %w", err)
	}
	if plan.quick {
		fmt.Fprintf(out, "quick mode: %d articles, %d in (b); the targets are meant for 10000 and 1000000\n", plan.articles, plan.buildArticles)
	}
	if strings.Contains(plan.parts, "a") {
		if err := b.large(ctx); err != nil {
			return err
		}
	}
	if strings.Contains(plan.parts, "b") {
		if err := b.coldScale(ctx); err != nil {
			return err
		}
	}
	if strings.Contains(plan.parts, "c") {
		if err := b.existing(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintln(out, b.tally)
	return nil
}

// scaleEstimate is about how many bytes of disk the parts of plan need,
// with a margin: (a) and (c) together, as their trees may be, or (b),
// which runs after (a) has removed its own and before (c) starts.
func scaleEstimate(plan scalePlan) int64 {
	need := int64(0)
	if strings.Contains(plan.parts, "a") {
		need = outputEstimate(plan.articles, scaleLimits)
	}
	if strings.Contains(plan.parts, "c") {
		need += outputEstimate(plan.articles, []int{20})
	}
	if strings.Contains(plan.parts, "b") {
		need = max(need, scaleBuildEstimate(plan.buildArticles, plan.buildRuns))
	}
	return need + need/4 + 256<<20
}

// outputEstimate is about how many bytes the output of n articles takes
// with limits and every offset.
func outputEstimate(n int, limits []int) int64 {
	var sum int64
	for _, l := range limits {
		sum += int64(l)
	}
	return int64(n) * sum * bytesPerArticlePage
}

// checkRoom fails when the file system of dir (the system's temporary
// folder when empty) has less than need bytes free. Where the system does
// not say (freeSpace), it does not check.
func checkRoom(dir string, need int64) error {
	if dir == "" {
		dir = os.TempDir()
	}
	free, ok, err := freeSpace(dir)
	if err != nil {
		return fmt.Errorf("free space of %s: %w", dir, err)
	}
	if ok && free < need {
		return fmt.Errorf("%s has %s free, the sites need about %s: pass -dir with more room, or fewer -articles", dir, formatBytes(free), formatBytes(need))
	}
	return nil
}

// large is part (a).
func (b *scaleBench) large(ctx context.Context) error {
	sb := b.serve
	dir := filepath.Join(sb.root, "large")
	opt := corpus.Options{Articles: b.plan.articles, Limits: scaleLimits, Offsets: "all", Seed: b.plan.seed}
	if _, err := corpus.Write(dir, opt); err != nil {
		return fmt.Errorf("generate site: %w", err)
	}
	built, err := run(ctx, sb.root, sb.feedgen, "build", "--config", filepath.Join(dir, corpus.ConfigPath), "--quiet")
	if err != nil {
		return fmt.Errorf("build: %w", err)
	}
	defer b.remove(ctx, dir) // 2.4 GB: not kept for parts (b) and (c)
	public := filepath.Join(dir, "public")
	st, err := statTree(filepath.Join(public, "articles"))
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "(a) feedbench scale: %d articles, limits %v, offsets all: %d pages, %s (built in %s); wrk %d threads, %d connections, %s after %s warm-up\n",
		b.plan.articles, scaleLimits, st.files, formatBytes(st.bytes), formatSeconds(built.wall), b.plan.threads, b.plan.connections, b.plan.duration, b.plan.warmup)

	// nginx's open_file_cache (max=20000) holds a descriptor per page it
	// has served: on 30,000 pages it runs out of descriptors where the
	// process may have 20,000, and then fails requests. It runs with a
	// limit of 65,536 when that can be had (root with CAP_SYS_RESOURCE),
	// else with open_file_cache max at half its limit: on a walk over more
	// pages than either, its cache finds as few pages one way as the other.
	ng := *sb
	if ng.nginx, err = nginxWrapper(sb.root, sb.nginx, nginxNofile); err != nil {
		return err
	}
	nginx, err := ng.startNginx(ctx, public)
	if err != nil {
		return err
	}
	defer nginx.stop()
	nofile, err := processNofile(nginx.cmd.Process.Pid)
	if err != nil {
		return err
	}
	cacheMax := "?"
	if conf, err := os.ReadFile(filepath.Join(sb.root, "nginx", "nginx.conf")); err == nil {
		if m := openFileCacheMax.FindSubmatch(conf); m != nil {
			cacheMax = string(m[1])
		}
	}
	start := time.Now()
	fg, err := sb.startFeedgen(ctx, public)
	if err != nil {
		return err
	}
	defer fg.stop()
	started := time.Since(start)
	atStart, _ := readProcStatus(fg.cmd.Process.Pid)
	fmt.Fprintf(b.out, "nginx %s: 2 workers, sendfile, open_file_cache max=%s, %d descriptors on %s; feedgen serve with GOMAXPROCS 2 on %s, listening %s after it started (it reads and checks every page once), memory then %s\n",
		nginx.version, cacheMax, nofile, nginx.addr, fg.addr, formatSeconds(started), atStart)

	targets := scaleTargets(b.plan.articles, scaleLimits, b.plan.seed)
	if err := checkSameTargets(ctx, public, []*serverProcess{nginx, fg}, targets); err != nil {
		return err
	}
	walk, err := writeWalk(sb.root, "large", targets)
	if err != nil {
		return err
	}
	workloads := []struct {
		w      workload
		target float64
	}{
		{workload{"hot page " + hotTarget, hotTarget, ""}, targetScaleHot},
		{workload{"shuffled walk over " + strconv.Itoa(len(targets)) + " pages", "/articles/", walk}, targetScaleWalk},
	}
	mem := sampleStatus(fg.cmd.Process.Pid, 100*time.Millisecond)
	for _, w := range workloads {
		res, err := sb.compare(ctx, [2]*serverProcess{nginx, fg}, [2]string{"nginx", "feedgen"}, w.w, func() {})
		if err != nil {
			mem.stop()
			return err
		}
		r := res[1].reqPerSec / res[0].reqPerSec
		fmt.Fprintf(b.out, "%-38s nginx %9.0f req/s p99 %-9s feedgen %9.0f req/s p99 %-9s feedgen/nginx %.2f  target >= %.1f %s\n",
			w.w.name, res[0].reqPerSec, res[0].p99, res[1].reqPerSec, res[1].p99, r, w.target, b.verdict(r >= w.target))
	}
	peak, last := mem.stop()
	memfd := memfdBytes(fg.cmd.Process.Pid)
	fmt.Fprintf(b.out, "feedgen memory, largest during the runs: %s; at the end: %s; memfd %s; output %s\n", peak, last, formatBytes(memfd), formatBytes(st.bytes))
	// Pages in memory files count whether mapped or not, once.
	anon := peak.anon + max(peak.shmem, memfd)
	fmt.Fprintf(b.out, "feedgen RssAnon+RssShmem max %s   target <= %s %s\n", formatBytes(anon), formatBytes(targetScaleMemory), b.verdict(anon <= targetScaleMemory))
	return nil
}

// nginxNofile is the limit of open descriptors nginx runs with in part
// (a), when it can be had.
const nginxNofile = 65536

// openFileCacheMax finds the size of nginx's open_file_cache in its conf.
var openFileCacheMax = regexp.MustCompile(`open_file_cache max=(\d+)`)

// nginxWrapper writes into dir a script that runs nginx (bin) with its
// limit of open descriptors raised to nofile, or, when that is not
// allowed, with the open_file_cache max of its -c conf lowered to half
// the limit it has; it returns the script's path.
func nginxWrapper(dir, bin string, nofile int) (string, error) {
	script := filepath.Join(dir, "nginx-nofile")
	body := fmt.Sprintf(`#!/bin/sh
ulimit -n %d 2>/dev/null
n=$(ulimit -n)
if [ "$n" != unlimited ] && [ $((n / 2)) -lt 20000 ]; then
	prev=
	for a; do
		[ "$prev" = -c ] && sed -i "s/open_file_cache max=[0-9]*/open_file_cache max=$((n / 2))/" "$a"
		prev=$a
	done
fi
exec %s "$@"
`, nofile, shellQuote(bin))
	if err := os.WriteFile(script, []byte(body), 0o755); err != nil {
		return "", err
	}
	return script, nil
}

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// processNofile returns the soft limit of open descriptors of process pid.
func processNofile(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/limits")
	if err != nil {
		return 0, err
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "Max open files"); ok {
			if f := strings.Fields(rest); len(f) > 0 {
				if f[0] == "unlimited" {
					return 1 << 30, nil
				}
				return strconv.ParseInt(f[0], 10, 64)
			}
		}
	}
	return 0, errors.New("no Max open files in /proc/" + strconv.Itoa(pid) + "/limits")
}

// existing is part (c): the serve benchmark, as "feedbench serve" runs it.
func (b *scaleBench) existing(ctx context.Context) error {
	sb := *b.serve
	sb.tally = tally{}
	sb.root = filepath.Join(b.serve.root, "serve")
	if err := os.Mkdir(sb.root, 0o755); err != nil {
		return err
	}
	defer os.RemoveAll(sb.root)
	fmt.Fprintln(b.out, "(c) the serve benchmark:")
	if err := sb.run(ctx); err != nil {
		return err
	}
	b.ok += sb.ok
	b.missed += sb.missed
	return nil
}

// scaleTargets returns the request targets of every page of every limit
// of a site of n articles with every offset, shuffled by seed.
func scaleTargets(n int, limits []int, seed int64) []string {
	targets := make([]string, 0, n*len(limits))
	for _, l := range limits {
		for off := range n {
			targets = append(targets, "/articles/?limit="+strconv.Itoa(l)+"&offset="+strconv.Itoa(off))
		}
	}
	rand.New(rand.NewPCG(uint64(seed), 4)).Shuffle(len(targets), func(i, j int) { targets[i], targets[j] = targets[j], targets[i] })
	return targets
}

// checkSameTargets checks that every server answers the first 100 targets
// and the hot page with the bytes of their files in public.
func checkSameTargets(ctx context.Context, public string, servers []*serverProcess, targets []string) error {
	for _, target := range append([]string{hotTarget}, targets[:min(100, len(targets))]...) {
		var limit, offset string
		for kv := range strings.SplitSeq(strings.TrimPrefix(target, "/articles/?"), "&") {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "limit":
				limit = v
			case "offset":
				offset = v
			}
		}
		want, err := os.ReadFile(filepath.Join(public, "articles", limit, offset+".json"))
		if err != nil {
			return err
		}
		for _, srv := range servers {
			if got, err := fetchPage(ctx, srv.addr, target); err != nil {
				return err
			} else if !bytes.Equal(got, want) {
				return fmt.Errorf("http://%s%s does not answer the page file", srv.addr, target)
			}
		}
	}
	return nil
}

// writeWalk writes into dir the wrk script of a walk over targets, in
// their order, and returns its path.
func writeWalk(dir, name string, targets []string) (string, error) {
	paths := filepath.Join(dir, name+"-paths.txt")
	if err := os.WriteFile(paths, []byte(strings.Join(targets, "\n")+"\n"), 0o644); err != nil {
		return "", err
	}
	script := filepath.Join(dir, name+"-walk.lua")
	if err := os.WriteFile(script, []byte(walkScript(paths)), 0o644); err != nil {
		return "", err
	}
	return script, nil
}

// procMemory is the memory of a process, from /proc/PID/status.
type procMemory struct {
	rss, anon, file, shmem, hwm int64 // VmRSS, RssAnon, RssFile, RssShmem, VmHWM
}

func (m procMemory) String() string {
	return fmt.Sprintf("VmRSS %s (RssAnon %s, RssFile %s, RssShmem %s), VmHWM %s",
		formatBytes(m.rss), formatBytes(m.anon), formatBytes(m.file), formatBytes(m.shmem), formatBytes(m.hwm))
}

// readProcStatus reads the memory of process pid.
func readProcStatus(pid int) (procMemory, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return procMemory{}, err
	}
	return parseProcStatus(data)
}

// parseProcStatus reads the memory fields of a /proc/PID/status.
func parseProcStatus(data []byte) (procMemory, error) {
	var m procMemory
	var errs []error
	for _, f := range []struct {
		key string
		v   *int64
	}{{"VmRSS:", &m.rss}, {"RssAnon:", &m.anon}, {"RssFile:", &m.file}, {"RssShmem:", &m.shmem}, {"VmHWM:", &m.hwm}} {
		n, err := statusBytes(data, f.key)
		*f.v = n
		errs = append(errs, err)
	}
	return m, errors.Join(errs...)
}

// sampleStatus samples the memory fields of process pid every period,
// keeping the largest value of each.
func sampleStatus(pid int, period time.Duration) *sampler[procMemory] {
	return sample(period, func() (procMemory, error) { return readProcStatus(pid) }, func(a, b procMemory) procMemory {
		return procMemory{rss: max(a.rss, b.rss), anon: max(a.anon, b.anon), file: max(a.file, b.file), shmem: max(a.shmem, b.shmem), hwm: max(a.hwm, b.hwm)}
	})
}
