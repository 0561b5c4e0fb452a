package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

// Targets of the build benchmark. Sizes are decimal: 1 MB = 10^6 bytes.
const (
	targetColdOverCopy  = 1.5                    // (a)/(c)
	targetNoChangeRatio = 0.25                   // (b)/(a)
	targetLargeWall     = 8 * time.Second        // (d)
	targetLargeRSS      = 1000 * 1000 * 1000     // (d)
	targetAlignedWall   = 250 * time.Millisecond // (e)
	targetSmallRSS      = 250 * 1000 * 1000      // (a), (e)
)

// The targets of (f) and (g) are targetFilteredPerByte and
// targetNoChangeRatio, and a one-edit rebuild that writes exactly the
// pages that hold the article: see filters.go.

// buildPlan is what one "feedbench build" measures.
type buildPlan struct {
	feedgen string // feedgen binary; empty: go build ./cmd/feedgen of the current module
	dir     string // parent of the temporary folder; empty: the system default
	runs    int    // timed runs of (a), (b), (c), (e), (f), (g); (d) gets max(1, runs/2)
	small   int    // articles of (a), (b), (c), (e), (f), (g)
	large   int    // articles of (d)
	seed    int64  // corpus seed
	quick   bool   // smoke-test sizes (only changes the report)
}

// buildAbout is what "feedbench build -h" says the command does.
const buildAbout = `Times whole feedgen build processes on synthetic sites:
  (a) cold build, 10,000 articles, limits [20], offsets all
  (c) cp -a of the tree (a) wrote, alternated with (a)
  (b) rebuild of (a) with no change: must write no file
  (d) cold build, 100,000 articles, limits [20, 50, 100], offsets aligned
  (e) cold build, 10,000 articles, limits [20], offsets aligned
  (f) (e) with filters [section, category, tag, author], its cold builds
      alternated with (e)'s: time per output byte vs (e); rebuild with no
      change; rebuilds after an edit of the body of one article (with tags,
      an author key and no announcement, so that the listing shows its
      first paragraph), which must write exactly the pages that hold it:
      the bench finds them, and the pages whose bytes changed, by reading
      every page before and after
  (g) the same for (a), offsets all (1.8 GB and 70,000 files a build at
      10,000 articles; cold trees are set aside until the end: -dir needs
      about runs x 3 GB free)
`

// parseBuildFlags returns the plan the flags of "feedbench build" ask for.
// Usage errors are printed to stderr before they are returned; -h returns
// flag.ErrHelp.
func parseBuildFlags(args []string, stderr io.Writer) (buildPlan, error) {
	c := newCommandLine("build", stderr, "[-feedgen PATH] [-runs N] [-quick] [-dir DIR] [-seed N]", "-runs 5", buildAbout)
	c.runsFlag("timed `runs` of each scenario; (d) gets max(1, runs/2) (default with -quick: 1)")
	c.seedFlag()
	c.quickFlag("smoke test: 1,000 and 10,000 articles instead of 10,000 and 100,000, 1 run")
	if err := c.parse(args); err != nil {
		return buildPlan{}, err
	}
	plan := buildPlan{
		feedgen: c.feedgen,
		dir:     c.dir,
		runs:    c.runs,
		small:   10_000,
		large:   100_000,
		seed:    c.seed,
		quick:   c.quick,
	}
	if plan.quick {
		plan.small, plan.large = 1_000, 10_000
	}
	quickDefault(c, "runs", &plan.runs, 1)
	if plan.runs < 1 {
		return buildPlan{}, c.usageError("-runs must be at least 1, got %d", plan.runs)
	}
	return plan, nil
}

// runBuild generates the sites in a temporary folder, runs every scenario,
// writes the report to out and removes the folder. It logs nothing.
func runBuild(ctx context.Context, plan buildPlan, out, _ io.Writer) (err error) {
	start := time.Now()
	root, bin, err := workspace(ctx, "build", plan.dir, plan.feedgen)
	if err != nil {
		return err
	}
	defer removeRoot(root, &err)
	if plan.feedgen == "" {
		fmt.Fprintf(out, "go build ./cmd/feedgen: %s\n", formatSeconds(time.Since(start)))
	}
	fmt.Fprintf(out, "feedbench build: %s, runs %d, GOMAXPROCS %d, sites in %s\n", bin, plan.runs, runtime.GOMAXPROCS(0), root)
	if plan.quick {
		fmt.Fprintf(out, "quick mode: %d and %d articles; the targets are meant for 10000 and 100000\n", plan.small, plan.large)
	}
	b := &buildBench{plan: plan, feedgen: bin, root: root, out: out}
	if err := b.run(ctx); err != nil {
		return err
	}
	fmt.Fprintln(out, b.tally)
	return nil
}

// buildFeedgen builds ./cmd/feedgen of the module the current folder is in
// into dir and returns the binary's path.
func buildFeedgen(ctx context.Context, dir string) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			return "", fmt.Errorf("go env GOMOD: %w: %s", err, strings.TrimSpace(string(ee.Stderr)))
		}
		return "", fmt.Errorf("go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("not inside the feedgen module: run from the repository or pass -feedgen")
	}
	bin := filepath.Join(dir, "feedgen")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	if _, err := run(ctx, filepath.Dir(gomod), "go", "build", "-o", bin, "./cmd/feedgen"); err != nil {
		return "", fmt.Errorf("build feedgen: %w", err)
	}
	return bin, nil
}

// resolveBinary returns the absolute path of a -feedgen value: a path, or a
// bare name looked up in PATH.
func resolveBinary(name string) (string, error) {
	p := name
	if !strings.ContainsRune(name, '/') && !strings.ContainsRune(name, filepath.Separator) {
		var err error
		if p, err = exec.LookPath(name); err != nil {
			return "", fmt.Errorf("-feedgen: %w", err)
		}
	}
	p, err := filepath.Abs(p)
	if err != nil {
		return "", fmt.Errorf("-feedgen: %w", err)
	}
	info, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("-feedgen: %w", err)
	}
	if info.IsDir() {
		return "", fmt.Errorf("-feedgen: %s is a folder", p)
	}
	return p, nil
}

// site is one generated corpus.
type site struct {
	dir string
	opt corpus.Options
	out string // the output folder when not dir/public (see memorySite)
}

func (s site) config() string { return filepath.Join(s.dir, corpus.ConfigPath) }

func (s site) public() string {
	if s.out != "" {
		return s.out
	}
	return filepath.Join(s.dir, "public")
}

func (s site) String() string {
	str := fmt.Sprintf("%d articles limits %v %s", s.opt.Articles, s.opt.Limits, s.opt.Offsets)
	if len(s.opt.Filters) > 0 {
		str += fmt.Sprintf(" filters %v", s.opt.Filters)
	}
	return str
}

// buildBench runs the scenarios of one plan and keeps the count of targets.
type buildBench struct {
	plan    buildPlan
	feedgen string
	root    string
	out     io.Writer
	tally
	asides int // trees set aside (setAside)
}

func (b *buildBench) run(ctx context.Context) error {
	small := func(offsets string) corpus.Options {
		return corpus.Options{Articles: b.plan.small, Limits: []int{20}, Offsets: offsets, Seed: b.plan.seed}
	}
	filtered := func(offsets string) corpus.Options {
		opt := small(offsets)
		opt.Filters = listing.FilterNames() // every filter kind
		return opt
	}

	// (a) cold builds alternated with (c) copies of the tree they wrote.
	a, err := b.generate("a", small("all"))
	if err != nil {
		return err
	}
	copyDir := filepath.Join(b.root, "copy")
	var aRuns, cRuns []measurement
	for range b.plan.runs {
		m, err := b.coldBuild(ctx, "(a)", a)
		if err != nil {
			return err
		}
		aRuns = append(aRuns, m)
		if m, err = b.copyTree(ctx, "(c)", a.public(), copyDir); err != nil {
			return err
		}
		cRuns = append(cRuns, m)
	}
	aStats, err := b.checkOutput("(a)", a)
	if err != nil {
		return err
	}
	aMedian, cMedian := median(walls(aRuns)), median(walls(cRuns))
	aRSS := peak(aRuns)
	fmt.Fprintf(b.out, "(a) %-20s %-42s %s  %s  peak RSS %s\n", "cold build", a, timing(aRuns), aStats, formatBytes(aRSS))
	fmt.Fprintf(b.out, "(c) %-20s %-42s %s\n", "cp -a", "same tree", timing(cRuns))
	ac := ratio(aMedian, cMedian)
	fmt.Fprintf(b.out, "(a)/(c) = %.2f   target <= %.1f   %s\n", ac, targetColdOverCopy, b.verdict(ac <= targetColdOverCopy))
	fmt.Fprintf(b.out, "(a) peak RSS %s   target <= %d MB   %s\n", formatBytes(aRSS), targetSmallRSS/1_000_000, b.verdict(aRSS <= targetSmallRSS))

	// (b) rebuilds with no change on the tree the last (a) wrote.
	bRuns, changed, err := b.rebuilds(ctx, "(b)", a)
	if err != nil {
		return err
	}
	ba := ratio(median(walls(bRuns)), aMedian)
	fmt.Fprintf(b.out, "(b) %-20s %-42s %s  files changed %d   (b)/(a) = %.2f  target <= %.2f, 0 files changed  %s\n",
		"no-change rebuild", "same tree", timing(bRuns), len(changed), ba, targetNoChangeRatio,
		b.verdict(ba <= targetNoChangeRatio && len(changed) == 0))
	b.listPaths("changed", changed)

	// (d) the large site, aligned offsets.
	d, err := b.generate("d", corpus.Options{
		Articles: b.plan.large,
		Limits:   []int{20, 50, 100},
		Offsets:  "aligned",
		Seed:     b.plan.seed,
	})
	if err != nil {
		return err
	}
	dRuns, dStats, err := b.coldBuilds(ctx, "(d)", d, max(1, b.plan.runs/2))
	if err != nil {
		return err
	}
	dMedian, dRSS := median(walls(dRuns)), peak(dRuns)
	fmt.Fprintf(b.out, "(d) %-20s %-42s %s  %s  peak RSS %s   target <= %s %s, peak RSS <= %d GB %s\n",
		"cold build", d, timing(dRuns), dStats, formatBytes(dRSS),
		targetLargeWall, b.verdict(dMedian <= targetLargeWall), targetLargeRSS/1_000_000_000, b.verdict(dRSS <= targetLargeRSS))

	// (e) the small site, aligned offsets.
	e, err := b.generate("e", small("aligned"))
	if err != nil {
		return err
	}
	eRuns, eStats, err := b.coldBuilds(ctx, "(e)", e, b.plan.runs)
	if err != nil {
		return err
	}
	eMedian, eRSS := median(walls(eRuns)), peak(eRuns)
	fmt.Fprintf(b.out, "(e) %-20s %-42s %s  %s  peak RSS %s   target <= %s %s, peak RSS <= %d MB %s\n",
		"cold build", e, timing(eRuns), eStats, formatBytes(eRSS),
		targetAlignedWall, b.verdict(eMedian <= targetAlignedWall), targetSmallRSS/1_000_000, b.verdict(eRSS <= targetSmallRSS))

	// (f) and (g): (e) and (a) with every filter.
	f, err := b.generate("f", filtered("aligned"))
	if err != nil {
		return err
	}
	if err := b.filtered(ctx, "(f)", "(e)", f, e); err != nil {
		return err
	}
	g, err := b.generate("g", filtered("all"))
	if err != nil {
		return err
	}
	return b.filtered(ctx, "(g)", "(a)", g, a)
}

// generate writes a corpus into the folder name of the temporary folder.
func (b *buildBench) generate(name string, opt corpus.Options) (site, error) {
	s := site{dir: filepath.Join(b.root, name), opt: opt}
	start := time.Now()
	n, err := corpus.Write(s.dir, opt)
	if err != nil {
		return site{}, fmt.Errorf("generate site (%s): %w", name, err)
	}
	fmt.Fprintf(b.out, "site (%s): %d files generated in %s\n", name, n, formatSeconds(time.Since(start)))
	return s, nil
}

// build runs "feedgen build" on s once. The working folder is the temporary
// folder, so that a build resolving output_dir against it rather than the
// config's folder is caught by checkOutput.
func (b *buildBench) build(ctx context.Context, label string, s site) (measurement, error) {
	m, err := run(ctx, b.root, b.feedgen, "build", "--config", s.config(), "--quiet")
	if err != nil {
		return m, fmt.Errorf("%s build failed: %w", label, err)
	}
	return m, nil
}

// coldBuild moves the output of s aside, syncs, and times a build.
func (b *buildBench) coldBuild(ctx context.Context, label string, s site) (measurement, error) {
	if err := b.setAside(s.public()); err != nil {
		return measurement{}, fmt.Errorf("%s: %w", label, err)
	}
	if err := syncDisk(ctx); err != nil {
		return measurement{}, err
	}
	m, err := b.build(ctx, label, s)
	if err != nil {
		return m, err
	}
	return m, checkIndex(label, s)
}

// checkIndex fails when the output of s has no index page: the build wrote
// nothing where it should have.
func checkIndex(label string, s site) error {
	index := filepath.Join(s.public(), "articles", "index.json")
	if s.opt.Layout == "chunks" {
		index = filepath.Join(s.public(), "articles", "chunks.json") // the main listing's chunk index
	}
	if _, err := os.Stat(index); err != nil {
		return fmt.Errorf("%s build wrote no index page: %w", label, err)
	}
	return nil
}

// coldBuilds runs n cold builds of s and checks the last output.
func (b *buildBench) coldBuilds(ctx context.Context, label string, s site, n int) ([]measurement, treeStats, error) {
	var ms []measurement
	for range n {
		m, err := b.coldBuild(ctx, label, s)
		if err != nil {
			return nil, treeStats{}, err
		}
		ms = append(ms, m)
	}
	st, err := b.checkOutput(label, s)
	return ms, st, err
}

// copyTree times "cp -a src dst" into a fresh dst after a sync, then moves
// dst aside; label names the part in errors.
func (b *buildBench) copyTree(ctx context.Context, label, src, dst string) (measurement, error) {
	if err := syncDisk(ctx); err != nil {
		return measurement{}, err
	}
	m, err := run(ctx, b.root, "cp", "-a", src, dst)
	if err != nil {
		return m, fmt.Errorf("%s copy failed: %w", label, err)
	}
	if err := b.setAside(dst); err != nil {
		return m, fmt.Errorf("%s: %w", label, err)
	}
	return m, nil
}

// setAside renames the folder dir, if there is one, into the bench's
// folder of trees no longer needed, removed when the bench ends. Nothing
// is deleted while the bench runs: on ext4 without a journal (this
// machine's disk) every new file skips past each inode freed in the last
// 60 seconds, which made a build right after the removal of a large tree
// up to twice as slow as in a fresh checkout: a cost of the bench's own
// clean-up, not of the build.
func (b *buildBench) setAside(dir string) error {
	if _, err := os.Lstat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	old := filepath.Join(b.root, "old")
	if err := os.MkdirAll(old, 0o755); err != nil {
		return fmt.Errorf("set aside %s: %w", dir, err)
	}
	b.asides++
	if err := os.Rename(dir, filepath.Join(old, strconv.Itoa(b.asides))); err != nil {
		return fmt.Errorf("set aside %s: %w", dir, err)
	}
	return nil
}

// checkOutput counts the output of s and warns when the number of pages of a
// limit is not what the pagination settings give.
func (b *buildBench) checkOutput(label string, s site) (treeStats, error) {
	st, err := statTree(s.public())
	if err != nil {
		return treeStats{}, err
	}
	for _, limit := range s.opt.Limits {
		dir := filepath.Join(s.public(), "articles", strconv.Itoa(limit))
		entries, err := os.ReadDir(dir)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return treeStats{}, fmt.Errorf("%s count pages: %w", label, err)
		}
		got := 0
		for _, e := range entries {
			if e.Type().IsRegular() && strings.HasSuffix(e.Name(), ".json") {
				got++
			}
		}
		if want := expectedPages(s.opt.Articles, limit, s.opt.Offsets); got != want {
			fmt.Fprintf(b.out, "warning: %s public/articles/%d holds %d pages, want %d\n", label, limit, got, want)
		}
	}
	return st, nil
}

// expectedPages returns how many page files a limit has for n articles:
// one per offset with "all", one per multiple of the limit with "aligned",
// and always at least offset 0.
func expectedPages(n, limit int, offsets string) int {
	if offsets == "aligned" {
		return max(1, (n+limit-1)/limit)
	}
	return max(1, n)
}

func (st treeStats) String() string {
	return fmt.Sprintf("files %d  bytes %s", st.files, formatBytes(st.bytes))
}

// timing formats the median of ms, with the range when there are several.
func timing(ms []measurement) string {
	ws := walls(ms)
	s := "median " + formatSeconds(median(ws))
	if len(ws) > 1 {
		s += " (" + formatSeconds(slices.Min(ws)) + "-" + formatSeconds(slices.Max(ws)) + ")"
	}
	return s + "  runs " + strconv.Itoa(len(ws))
}

func walls(ms []measurement) []time.Duration {
	ws := make([]time.Duration, len(ms))
	for i, m := range ms {
		ws[i] = m.wall
	}
	return ws
}

// cpus returns the CPU times of ms.
func cpus(ms []measurement) []time.Duration {
	cs := make([]time.Duration, len(ms))
	for i, m := range ms {
		cs[i] = m.cpu
	}
	return cs
}

// peak returns the largest peak RSS of ms.
func peak(ms []measurement) int64 {
	var p int64
	for _, m := range ms {
		p = max(p, m.rss)
	}
	return p
}

// ratio returns a/b, or +Inf when b is not positive.
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		return math.Inf(1)
	}
	return float64(a) / float64(b)
}
