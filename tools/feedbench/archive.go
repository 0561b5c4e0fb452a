package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/pool"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/summary"
)

// Targets of the archive benchmark: the goals of issue 38's table, for
// an archive of 1,000,000 articles. Sizes are decimal.
const (
	targetArchiveRebuild    = 5 * time.Second // feedgen build after one new article
	targetArchiveRebuildRSS = 500_000_000     // its peak RSS
	targetArchiveColdRSS    = 1_000_000_000   // peak RSS of the cold build (point 3 of the issue)
	targetArchiveUpload     = 1_000_000       // bytes publish uploads after one new article
	targetArchivePublish    = 5 * time.Second // publish after it, to versitygw and to file://
	targetArchivePublishRSS = 200_000_000     // peak RSS of that publish to versitygw
	targetArchiveUnchanged  = 2 * time.Second // publish of an unchanged build
	targetArchiveEdge       = 1.0             // nginx-njs req/s on the archive over req/s on the reference
	// archiveGoalArticles is the size of archive the goals are for.
	archiveGoalArticles = 1_000_000
	// archiveOutputPerArticle is about how many bytes of disk one copy of
	// the output takes an article, all four filters (9.46 GB at
	// 1,000,000 articles): the output and each bucket hold one.
	archiveOutputPerArticle = 10_000
)

// archivePlan is what one "feedbench archive" measures.
type archivePlan struct {
	feedgen   string
	dir       string
	articles  int // of the archive
	reference int // of the reference site
	seed      int64
	versitygw string
	changes   int  // new articles, one at a time, each built and published
	edge      bool // measure nginx-njs on both builds
	wrkPlan
	quick bool
}

// archiveAbout is what "feedbench archive -h" says the command does.
const archiveAbout = `Measures what one new article costs on a large archive in the chunks layout
(issue 38), against the same on a small one, in one run. Two sites are generated
(internal/corpus: limits [20, 50, 100], every offset, layout: chunks, filters
section, category, tag and author): the reference of -reference articles, then the
archive of -articles (at 1,000,000: 4.3 GB of markdown, about 9.5 GB of output).
For each, in this order, every feedgen command a whole process, its wall time and
peak RSS (rusage) measured, after a sync:
  1. feedgen build, cold (no output, no state), and the output counted by kind:
     chunks, leaves (*.leaf.json, index format 3), root indexes (chunks.json; the
     largest named), manifest.json, the build's state (dot files, never published);
  2. feedgen publish --json of that build to a bucket of a versitygw (posix
     backend, started on a free port over a temporary folder, every request counted
     by a proxy in front of it), then to a file:// bucket;
  3. one new article, the newest (it joins the main listing, a section, a category,
     an author and three tags or more), and feedgen build again, the output and its
     state present: what it wrote, by kind;
  4. feedgen publish to both buckets: files and bytes uploaded (the --json summary,
     and the proxy's PUTs, bytes sent and received);
  5. feedgen publish to both again, unchanged.
After each publish, the bucket must hold every file of the build at its size (and
may keep chunks and leaves of the build before, for a cached index).
Then the edge (unless -edge=false): nginx with njs (feedgen rules nginx-njs, 2
workers, sendfile, open_file_cache) on each build, its answers checked byte for
byte against feedgen serve on the same build; wrk on a hot page and on a shuffled
walk over every page of limit 20 of the main listing, the two nginx alternated
over -rounds rounds: req/s on the archive over req/s on the reference.
The report ends with the issue's table, each row at both sizes with the goal at
1,000,000 beside it: build after one new article <= 5s and <= 500 MB (the cold
build <= 1 GB); <= 1 MB uploaded; publish after it <= 5s (to versitygw also
<= 200 MB); unchanged publish <= 2s; the edge >= 1.0x the reference.
Needs about 35 kB of disk an article (35 GB at 1,000,000: content, output, two
buckets; checked first; the content goes to /dev/shm when it has room), removes
everything it made at the end, also on Ctrl-C. Installs nginx, wrk and
libnginx-mod-http-js with apt-get when they are missing.
`

// parseArchiveFlags returns the plan the flags of "feedbench archive"
// ask for.
func parseArchiveFlags(args []string, stderr io.Writer) (archivePlan, error) {
	c := newCommandLine("archive", stderr, "[-feedgen PATH] [-articles N] [-reference N] [-changes N] [-versitygw PATH] [-edge=false] [-duration D] [-quick] [-dir DIR]", "-articles 100000", archiveAbout)
	articles := c.Int("articles", archiveGoalArticles, "`number` of articles of the archive (default with -quick: 2000)")
	reference := c.Int("reference", 10_000, "`number` of articles of the reference site: the other column of the table, and the edge's baseline (default with -quick: 1000)")
	versitygw := c.String("versitygw", os.Getenv("FEEDGEN_VERSITYGW"), "versitygw `binary` (default: $FEEDGEN_VERSITYGW, else .cache/versitygw-*/versitygw, else $PATH)")
	changes := c.Int("changes", 3, "new `articles`, one at a time, each built and published then published unchanged: the table gives medians (default with -quick: 1)")
	edge := c.Bool("edge", true, "measure nginx-njs on both builds (needs nginx, libnginx-mod-http-js and wrk)")
	c.seedFlag()
	var wrk wrkPlan
	wrk.register(c.FlagSet)
	c.quickFlag("smoke test: 2,000 articles, a reference of 1,000, one round of 2s wrk runs after 1s warm-ups")
	if err := c.parse(args); err != nil {
		return archivePlan{}, err
	}
	plan := archivePlan{feedgen: c.feedgen, dir: c.dir, articles: *articles, reference: *reference, seed: c.seed,
		versitygw: *versitygw, changes: *changes, edge: *edge, wrkPlan: wrk, quick: c.quick}
	quickDefault(c, "articles", &plan.articles, 2_000)
	quickDefault(c, "changes", &plan.changes, 1)
	quickDefault(c, "reference", &plan.reference, 1_000)
	plan.wrkPlan.setQuick(c)
	if plan.articles < 100 || plan.reference < 100 || plan.changes < 1 || plan.changes > 50 || !plan.wrkPlan.ok() {
		return archivePlan{}, c.usageError("need -articles >= 100, -reference >= 100, 1 <= -changes <= 50, " + wrkNeeds)
	}
	return plan, nil
}

// archiveEstimate is about how many bytes of disk a run needs: the
// content of both sites unless it is in memory, and three copies of each
// output (the output and two buckets), with a margin.
func archiveEstimate(articles, reference int, contentInMemory bool) int64 {
	per := int64(3 * archiveOutputPerArticle)
	if !contentInMemory {
		per += bytesPerArticleFile
	}
	need := int64(articles+reference) * per
	return need + need/8 + 256<<20
}

// Where each publish goes.
const (
	destVersitygw = iota
	destFile
	dests
)

var destNames = [dests]string{"versitygw", "file://"}

// archiveSite is one of the two sites and what was measured of it.
type archiveSite struct {
	name     string // "reference" or "archive": its folders, buckets, servers
	opt      corpus.Options
	dir      string // the content and config
	config   string
	public   string // the output
	folder   string // the file:// bucket
	markdown int64  // bytes of the articles generated

	cold    buildRun
	built   outputStats // the output after the cold build
	first   [dests]publishRun
	changes []changeRun
}

// changeRun is one new article: the build after it, its publish to each
// bucket, and a publish to each again.
type changeRun struct {
	added          editTarget
	rebuild        buildRun
	wrote, deleted outputStats // the files the build wrote, and deleted
	publish        [dests]publishRun
	unchanged      [dests]publishRun
}

// articles returns how many articles the site has after its changes.
func (s *archiveSite) articles() int { return s.opt.Articles + len(s.changes) }

// bucket is the site's bucket of the versitygw.
func (s *archiveSite) bucket() string { return "archive-" + s.name }

// buildRun is one feedgen build --json.
type buildRun struct {
	m   measurement
	sum summary.BuildJSON
}

// publishRun is one feedgen publish --json.
type publishRun struct {
	m        measurement
	sum      summary.PublishJSON
	counts   requestCounts // the proxy's, to versitygw
	warnings []string      // what it printed on stderr
	kept     int           // files of the bucket the build does not have
}

// archiveBench holds the state of one run.
type archiveBench struct {
	plan    archivePlan
	out     io.Writer
	log     io.Writer
	root    string
	feedgen string
	env     []string // of feedgen publish
	store   string   // the versitygw's folder, a folder per bucket
	proxy   *countingProxy
	serve   *serveBench // nginx, wrk, and their runs
	tally
}

// runArchive runs the benchmark in a temporary folder.
func runArchive(ctx context.Context, plan archivePlan, stdout, stderr io.Writer) (err error) {
	if plan.versitygw, err = findVersitygw(plan.versitygw); err != nil {
		return err
	}
	b := &archiveBench{plan: plan, out: stdout, log: stderr}
	b.serve = &serveBench{plan: servePlan{articles: plan.articles, seed: plan.seed, wrkPlan: plan.wrkPlan, quick: plan.quick,
		chunked: true, server: serverNJS}, out: stdout, log: stderr}
	if plan.edge {
		if b.serve.nginx, b.serve.wrk, err = ensureTools(ctx, stderr); err != nil {
			return err
		}
		if err := ensureNJS(ctx, stderr); err != nil {
			return err
		}
	}
	mem := memoryDir(int64(plan.articles+plan.reference) * bytesPerArticleFile)
	if err := checkRoom(plan.dir, archiveEstimate(plan.articles, plan.reference, mem != "")); err != nil {
		return err
	}
	start := time.Now()
	if b.root, b.feedgen, err = workspace(ctx, "archive", plan.dir, plan.feedgen); err != nil {
		return err
	}
	defer removeRoot(b.root, &err)
	defer fmt.Fprintf(stderr, "feedbench archive: removing %s\n", b.root)
	if plan.feedgen == "" {
		fmt.Fprintf(stdout, "go build ./cmd/feedgen: %s\n", formatSeconds(time.Since(start)))
	}
	// nginx's workers may run as another user: let them read the output.
	if err := os.Chmod(b.root, 0o755); err != nil {
		return fmt.Errorf("create temporary folder: %w", err)
	}
	content := b.root
	if mem != "" {
		if content, err = os.MkdirTemp(mem, "feedbench-archive-"); err != nil {
			return err
		}
		defer os.RemoveAll(content)
	}
	b.serve.root, b.serve.feedgen = b.root, b.feedgen
	version, _ := exec.CommandContext(ctx, b.feedgen, "version").Output()
	fmt.Fprintf(stdout, "feedbench archive: %s (%s), GOMAXPROCS %d, in %s; %s\n", b.feedgen, strings.TrimSpace(string(version)), runtime.GOMAXPROCS(0), b.root, loadAverage())
	if plan.quick {
		fmt.Fprintf(stdout, "quick mode: %d articles and a reference of %d; the goals are meant for %d and 10000\n", plan.articles, plan.reference, archiveGoalArticles)
	}

	sites := [2]*archiveSite{b.newSite("reference", plan.reference, content), b.newSite("archive", plan.articles, content)}
	b.store = filepath.Join(b.root, "store")
	for _, s := range sites {
		if err := os.MkdirAll(filepath.Join(b.store, s.bucket()), 0o755); err != nil {
			return err
		}
	}
	gw, err := startVersitygw(ctx, plan.versitygw, b.store, filepath.Join(b.root, "iam"))
	if err != nil {
		return err
	}
	defer gw.stop()
	if b.proxy, err = newCountingProxy(gw.endpoint); err != nil {
		return err
	}
	defer b.proxy.Close()
	b.env = toolEnv(b.root)
	fmt.Fprintf(stdout, "versitygw %s (posix backend) on %s, every request counted by a proxy in front of it on %s\n", plan.versitygw, gw.endpoint, b.proxy.Addr())

	for _, s := range sites {
		if err := b.runSite(ctx, s); err != nil {
			return fmt.Errorf("%s of %d articles: %w", s.name, s.opt.Articles, err)
		}
	}
	// The edge comes last: when it fails, the table still says what the
	// hour before it measured.
	var edge *edgeResult
	var edgeErr error
	if plan.edge {
		if edge, edgeErr = b.edge(ctx, sites[0], sites[1]); edgeErr != nil {
			edgeErr = fmt.Errorf("edge: %w", edgeErr)
			fmt.Fprintf(stdout, "\n%v\n", edgeErr)
		}
	}
	fmt.Fprintf(stdout, "\nat the end: %s\n", loadAverage())
	b.table(sites[0], sites[1], edge, edgeErr)
	fmt.Fprintln(stdout, b.tally)
	return edgeErr
}

// newSite returns the site name of n articles, its content in a folder of
// content, its output and file:// bucket in the temporary folder.
func (b *archiveBench) newSite(name string, n int, content string) *archiveSite {
	opt := corpus.Options{Articles: n, Limits: scaleLimits, Offsets: listing.OffsetsAll, Layout: "chunks", Seed: b.plan.seed, Filters: listing.FilterNames()}
	dir := filepath.Join(content, name)
	return &archiveSite{name: name, opt: opt, dir: dir, config: filepath.Join(dir, corpus.ConfigPath),
		public: filepath.Join(b.root, name+"-public"), folder: filepath.Join(b.root, name+"-file-bucket")}
}

// runSite generates s, builds it cold and publishes it to both buckets,
// then, for each of the plan's changes, adds one article, builds and
// publishes again, and publishes unchanged.
func (b *archiveBench) runSite(ctx context.Context, s *archiveSite) error {
	fmt.Fprintf(b.log, "feedbench archive: generating %d articles in %s\n", s.opt.Articles, s.dir)
	start := time.Now()
	n, err := writeCorpus(ctx, s.dir, s.opt)
	if err != nil {
		return fmt.Errorf("generate site: %w", err)
	}
	s.markdown = n
	if err := setOutputDir(s.config, s.public); err != nil {
		return err
	}
	fmt.Fprintf(b.out, "\n%s: %d articles, %s of markdown in %s, generated in %s; limits %v, every offset, layout chunks, filters %v\n",
		s.name, s.opt.Articles, formatBytes(s.markdown), s.dir, formatSeconds(time.Since(start)), s.opt.Limits, s.opt.Filters)

	// The cold build and its first publishes.
	if s.cold, err = b.build(ctx, s); err != nil {
		return err
	}
	before, err := snapshot(s.public)
	if err != nil {
		return err
	}
	s.built = statsOf(before, slices.Collect(maps.Keys(before)))
	fmt.Fprintf(b.out, "%s: cold build %s (CPU %s), peak RSS %s\n", s.name, formatSeconds(s.cold.m.wall), formatSeconds(s.cold.m.cpu), formatBytes(s.cold.m.rss))
	fmt.Fprintf(b.out, "%s: output %s\n", s.name, s.built)
	for d := range dests {
		if s.first[d], err = b.publish(ctx, s, "first publish", d); err != nil {
			return err
		}
	}

	// Each change: one new article, the newest, and the build after it
	// (the output and its state present), its publishes, unchanged ones.
	next := s.opt.Articles
	for k := range b.plan.changes {
		var c changeRun
		// Each one later than the one before, all after the corpus.
		if c.added, next, err = newArticleFrom(s.opt, next, fmt.Sprintf("2026-01-01T00:%02d:00", k)); err != nil {
			return err
		}
		p := filepath.Join(s.dir, filepath.FromSlash(c.added.path))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, c.added.data, 0o644); err != nil {
			return err
		}
		s.changes = append(s.changes, c)
		cur := &s.changes[len(s.changes)-1]
		if cur.rebuild, err = b.build(ctx, s); err != nil {
			return err
		}
		after, err := snapshot(s.public)
		if err != nil {
			return err
		}
		var wrote, deleted []string
		for _, p := range diff(before, after) {
			if _, ok := after[p]; ok {
				wrote = append(wrote, p)
			} else {
				deleted = append(deleted, p)
			}
		}
		cur.wrote, cur.deleted = statsOf(after, wrote), statsOf(before, deleted)
		before = after
		fmt.Fprintf(b.out, "%s: new article %d of %d (%s, %s): build %s (CPU %s), peak RSS %s; it wrote %s; deleted %s\n",
			s.name, k+1, b.plan.changes, cur.added, cur.added.path, formatSeconds(cur.rebuild.m.wall), formatSeconds(cur.rebuild.m.cpu),
			formatBytes(cur.rebuild.m.rss), cur.wrote, cur.deleted)
		for d := range dests {
			if cur.publish[d], err = b.publish(ctx, s, "after the new article", d); err != nil {
				return err
			}
		}
		for d := range dests {
			if cur.unchanged[d], err = b.publish(ctx, s, "unchanged", d); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeCorpus writes the site of opt into dir as corpus.Write does, but
// stops when ctx is done, and returns the bytes of its articles.
func writeCorpus(ctx context.Context, dir string, opt corpus.Options) (int64, error) {
	folders := opt
	folders.Articles = 0 // the config and every category's folder
	if _, err := corpus.Write(dir, folders); err != nil {
		return 0, err
	}
	if err := os.WriteFile(filepath.Join(dir, corpus.ConfigPath), corpus.Config(opt), 0o644); err != nil {
		return 0, err
	}
	var n atomic.Int64
	err := pool.Each(ctx, opt.Articles, min(max(runtime.GOMAXPROCS(0), 2), 8), func(_ context.Context, i int) error {
		p, data := corpus.Article(opt, i)
		n.Add(int64(len(data)))
		return os.WriteFile(filepath.Join(dir, filepath.FromSlash(p)), data, 0o644)
	})
	return n.Load(), err
}

// build runs feedgen build --json on s after a sync and checks that it
// lists every article of s.
func (b *archiveBench) build(ctx context.Context, s *archiveSite) (buildRun, error) {
	if err := syncDisk(ctx); err != nil {
		return buildRun{}, err
	}
	m, stdout, err := runOutput(ctx, b.root, b.feedgen, "build", "--config", s.config, "--json")
	if err != nil {
		return buildRun{}, fmt.Errorf("build: %w", err)
	}
	r := buildRun{m: m}
	if err := json.Unmarshal([]byte(stdout), &r.sum); err != nil {
		return r, fmt.Errorf("build --json printed %q: %w", stdout, err)
	}
	if r.sum.Articles != s.articles() {
		return r, fmt.Errorf("the build lists %d articles, want %d", r.sum.Articles, s.articles())
	}
	return r, nil
}

// publish runs feedgen publish --json of s to the bucket of dest after a
// sync, reports it as step and checks the bucket against the build.
func (b *archiveBench) publish(ctx context.Context, s *archiveSite, step string, dest int) (publishRun, error) {
	if err := syncDisk(ctx); err != nil {
		return publishRun{}, err
	}
	url, folder := "file://"+filepath.ToSlash(s.folder), s.folder
	if dest == destVersitygw {
		url = "s3://" + s.bucket() + "?endpoint=http://" + b.proxy.Addr() + "&use_path_style=true&region=us-east-1"
		folder = filepath.Join(b.store, s.bucket())
	}
	cmd := exec.CommandContext(ctx, b.feedgen, "publish", "--config", s.config, "--json", url)
	cmd.Dir, cmd.Env = b.root, b.env
	b.proxy.reset()
	m, stdout, stderr, err := runCmd(cmd)
	what := fmt.Sprintf("%s, publish to %s (%s)", s.name, destNames[dest], step)
	if err != nil {
		return publishRun{}, fmt.Errorf("%s: %w", what, err)
	}
	r := publishRun{m: m, warnings: lines(stderr)}
	if err := json.Unmarshal([]byte(stdout), &r.sum); err != nil {
		return r, fmt.Errorf("%s: --json printed %q: %w", what, stdout, err)
	}
	if dest == destVersitygw {
		r.counts = b.proxy.counts(s.bucket())
	}
	if r.kept, err = checkBucket(s.public, folder); err != nil {
		return r, fmt.Errorf("%s: the bucket is not the build: %w", what, err)
	}
	fmt.Fprintf(b.out, "%s: %s (CPU %s), peak RSS %s: uploaded %d files, %s; unchanged %d, deleted %d, kept %d; the bucket holds the build and %d files more",
		what, formatSeconds(m.wall), formatSeconds(m.cpu), formatBytes(m.rss), r.sum.Uploaded, formatBytes(r.sum.UploadedBytes), r.sum.Unchanged, r.sum.Deleted, r.sum.Kept, r.kept)
	if dest == destVersitygw {
		c := r.counts
		fmt.Fprintf(b.out, "; the proxy: %d requests, %d objects written, %d deleted, %s sent, %s received", c.requests, c.puts, c.deletes, formatBytes(c.sent), formatBytes(c.received))
	}
	fmt.Fprintln(b.out)
	for _, w := range r.warnings {
		fmt.Fprintf(b.out, "    feedgen publish said: %s\n", w)
	}
	return r, nil
}

// lines returns the lines of s that are not blank.
func lines(s string) []string {
	var ls []string
	for l := range strings.SplitSeq(s, "\n") {
		if strings.TrimSpace(l) != "" {
			ls = append(ls, l)
		}
	}
	return ls
}

// checkBucket checks the bucket folder against the output folder public
// (names that start with a dot aside: the build's state, the lock, the
// server's own): every file of the output is there at its size, and
// manifest.json with its bytes. It returns how many files the bucket has
// besides, which must be chunks or leaves (kept for the manifest before),
// publish's record of them aside.
func checkBucket(public, bucket string) (extra int, err error) {
	sizes := func(root string) (map[string]int64, error) {
		files := map[string]int64{}
		err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if strings.HasPrefix(d.Name(), ".") && p != root {
				if d.IsDir() {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = info.Size()
			return nil
		})
		return files, err
	}
	want, err := sizes(public)
	if err != nil {
		return 0, err
	}
	got, err := sizes(bucket)
	if err != nil {
		return 0, err
	}
	for p, size := range want {
		switch g, ok := got[p]; {
		case !ok:
			return 0, fmt.Errorf("%s is missing", p)
		case g != size:
			return 0, fmt.Errorf("%s has %d bytes, the build's %d", p, g, size)
		}
	}
	for p := range got {
		if _, ok := want[p]; ok || p == publish.KeptName {
			continue // publish's record of what the bucket keeps is its own
		}
		if k := fileKind(p); k != kindChunk && k != kindLeaf {
			return 0, fmt.Errorf("%s is not in the build", p)
		}
		extra++
	}
	built, err := os.ReadFile(filepath.Join(public, "manifest.json"))
	if err != nil {
		return 0, err
	}
	if held, err := os.ReadFile(filepath.Join(bucket, "manifest.json")); err != nil {
		return 0, err
	} else if !bytes.Equal(held, built) {
		return 0, errors.New("manifest.json has other bytes")
	}
	return extra, nil
}

// The kinds of the files of an output folder, as the report counts them.
const (
	kindChunk    = "chunks"
	kindLeaf     = "leaves"
	kindRoot     = "root indexes"
	kindManifest = "manifest.json"
	kindState    = "state"
	kindOther    = "other"
)

var kindOrder = []string{kindChunk, kindLeaf, kindRoot, kindManifest, kindState, kindOther}

// fileKind returns the kind of the file at the slash-separated path rel
// of an output folder: a leaf is any *.leaf.json among the chunks (index
// format 3), a root index a collection's chunks.json (the whole index in
// format 2), state anything under a name with a dot at the top (the
// build's own files, never published).
func fileKind(rel string) string {
	switch {
	case rel == "manifest.json":
		return kindManifest
	case strings.HasPrefix(rel, "."):
		return kindState
	case strings.HasPrefix(rel, chunk.Dir+"/") && strings.HasSuffix(rel, ".leaf.json"):
		return kindLeaf
	case chunk.IsChunk(rel):
		return kindChunk
	case chunk.IsIndex(rel):
		return kindRoot
	}
	return kindOther
}

// kindStats counts the files of one kind.
type kindStats struct {
	files   int
	bytes   int64
	largest int64
	path    string // of the largest
}

// outputStats counts files by kind.
type outputStats map[string]*kindStats

// statsOf counts the files paths of snapshot files by kind.
func statsOf(files map[string]fileState, paths []string) outputStats {
	st := outputStats{}
	slices.Sort(paths) // the same largest among equals
	for _, p := range paths {
		k := fileKind(p)
		ks := st[k]
		if ks == nil {
			ks = &kindStats{}
			st[k] = ks
		}
		size := files[p].size
		ks.files++
		ks.bytes += size
		if ks.path == "" || size > ks.largest {
			ks.largest, ks.path = size, p
		}
	}
	return st
}

// total returns the files and bytes of every kind.
func (st outputStats) total() (int, int64) {
	var files int
	var n int64
	for _, ks := range st {
		files += ks.files
		n += ks.bytes
	}
	return files, n
}

// get returns the count of kind k, zero when there is none.
func (st outputStats) get(k string) kindStats {
	if ks := st[k]; ks != nil {
		return *ks
	}
	return kindStats{}
}

// String says the files of each kind: "12 files, 1.2 MB: chunks 9 (…),
// leaves none, …".
func (st outputStats) String() string {
	files, n := st.total()
	if files == 0 {
		return "no file"
	}
	parts := []string{}
	for _, k := range kindOrder {
		ks := st.get(k)
		switch {
		case ks.files == 0 && k == kindLeaf && st.get(kindRoot).files > 0:
			parts = append(parts, "leaves none (no *.leaf.json)")
		case ks.files == 0:
		case k == kindManifest:
			parts = append(parts, "manifest.json "+formatBytes(ks.bytes))
		case k == kindRoot:
			parts = append(parts, fmt.Sprintf("%s %d, %s (the largest %s, %s)", k, ks.files, formatBytes(ks.bytes), ks.path, formatBytes(ks.largest)))
		case k == kindState || k == kindOther:
			parts = append(parts, fmt.Sprintf("%s %d, %s (the largest %s, %s)", k, ks.files, formatBytes(ks.bytes), ks.path, formatBytes(ks.largest)))
		default:
			parts = append(parts, fmt.Sprintf("%s %d, %s (mean %s, largest %s)", k, ks.files, formatBytes(ks.bytes), formatBytes(ks.bytes/int64(ks.files)), formatBytes(ks.largest)))
		}
	}
	return fmt.Sprintf("%d files, %s: %s", files, formatBytes(n), strings.Join(parts, "; "))
}

// edgeResult is what the edge measured: each workload on the reference
// and on the archive.
type edgeResult struct {
	hot, walk [2]wrkResult // [reference, archive]
	walked    [2]int       // pages of each walk
}

// edge serves each build with nginx-njs, checks its answers against
// feedgen serve, and measures both on a hot page and on a walk.
func (b *archiveBench) edge(ctx context.Context, ref, big *archiveSite) (*edgeResult, error) {
	sites := [2]*archiveSite{ref, big}
	var servers [2]*serverProcess
	var walks [2]workload
	res := &edgeResult{}
	for i, s := range sites {
		njs, err := b.serve.startNginxNJSIn(ctx, filepath.Join(b.root, "nginx-njs-"+s.name), s.config)
		if err != nil {
			return nil, err
		}
		defer njs.stop()
		servers[i] = njs
		count := s.articles()
		offsets := shuffledOffsets(count, b.plan.seed, 2)
		if err := b.checkEdge(ctx, s, njs, offsets); err != nil {
			return nil, err
		}
		targets := make([]string, len(offsets))
		for k, off := range offsets {
			targets[k] = "/articles/?limit=20&offset=" + strconv.Itoa(off)
		}
		script, err := writeWalk(b.root, "walk-"+s.name, targets)
		if err != nil {
			return nil, err
		}
		walks[i] = workload{"shuffled walk over every page of limit 20", "/articles/", script}
		res.walked[i] = len(targets)
	}
	fmt.Fprintf(b.out, "\nedge: nginx %s with njs %s (feedgen rules nginx-njs; 2 workers, sendfile, open_file_cache) on each build: reference on %s, archive on %s; wrk %d threads, %d connections, %s after %s warm-up, %d rounds alternated, medians\n",
		servers[0].version, njsVersion(ctx), servers[0].addr, servers[1].addr, b.plan.threads, b.plan.connections, b.plan.duration, b.plan.warmup, b.plan.rounds)
	names := [2]string{"nginx-njs (reference)", "nginx-njs (archive)"}
	hot := workload{"hot page " + hotTarget, hotTarget, ""}
	var err error
	if res.hot, err = b.serve.compareEach(ctx, servers, names, [2]workload{hot, hot}, func() {}); err != nil {
		return nil, err
	}
	if res.walk, err = b.serve.compareEach(ctx, servers, names, walks, func() {}); err != nil {
		return nil, err
	}
	for _, w := range []struct {
		name string
		r    [2]wrkResult
	}{{hot.name, res.hot}, {fmt.Sprintf("shuffled walk (%d and %d pages)", res.walked[0], res.walked[1]), res.walk}} {
		fmt.Fprintf(b.out, "edge: %-36s reference %9.0f req/s p99 %-9s archive %9.0f req/s p99 %s\n", w.name, w.r[0].reqPerSec, w.r[0].p99, w.r[1].reqPerSec, w.r[1].p99)
	}
	return res, nil
}

// checkEdge checks that nginx-njs answers pages of s's build with the
// bytes feedgen serve gives for them (the hot page, the first, the last,
// a page of limit 100 and 50 of offsets), and that the newest article is
// the one the bench added.
func (b *archiveBench) checkEdge(ctx context.Context, s *archiveSite, njs *serverProcess, offsets []int) error {
	start := time.Now()
	// It reads and checks every chunk before it answers: 9.5 GB at a
	// million articles.
	fg, err := startServingWithin(ctx, b.feedgen, io.Discard, 15*time.Minute, "serve", "--dir", s.public, "--addr", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("feedgen serve of the %s: %w", s.name, err)
	}
	defer fg.stop()
	fmt.Fprintf(b.log, "feedbench archive: feedgen serve of the %s listening after %s\n", s.name, formatSeconds(time.Since(start)))
	count := len(offsets)
	targets := []string{hotTarget, "/articles/?limit=20&offset=0", "/articles/?limit=20&offset=" + strconv.Itoa(count-1),
		"/articles/?limit=100&offset=" + strconv.Itoa(count/3)}
	for _, off := range offsets[:min(50, count)] {
		targets = append(targets, "/articles/?limit=20&offset="+strconv.Itoa(off))
	}
	for _, t := range targets {
		want, err := fetchPage(ctx, fg.addr, t)
		if err != nil {
			return fmt.Errorf("feedgen serve: %w", err)
		}
		got, err := fetchPage(ctx, njs.addr, t)
		if err != nil {
			return fmt.Errorf("nginx-njs: %w", err)
		}
		if !bytes.Equal(got, want) {
			return fmt.Errorf("nginx-njs answers %s of the %s with other bytes than feedgen serve", t, s.name)
		}
	}
	first, err := fetchPage(ctx, njs.addr, "/articles/?limit=1")
	if err != nil {
		return err
	}
	var page struct {
		Count   int `json:"count"`
		Results []struct {
			ID int `json:"id"`
		} `json:"results"`
	}
	if err := json.Unmarshal(first, &page); err != nil {
		return fmt.Errorf("/articles/?limit=1: %w", err)
	}
	newest := s.changes[len(s.changes)-1].added.id
	if page.Count != count || len(page.Results) != 1 || page.Results[0].ID != newest {
		return fmt.Errorf("/articles/?limit=1 of the %s: count %d, first %+v; want count %d, first id %d (the last new article)", s.name, page.Count, page.Results, count, newest)
	}
	return nil
}

// changeFigures are what a site's changes measured: for each step, the
// runs' median time (and range) and largest RSS; the most bytes uploaded.
type changeFigures struct {
	rebuild            runsFigure
	publish, unchanged [dests]runsFigure
	puts               int   // objects written to versitygw, the proxy's count, at most
	sent               int64 // bytes sent to versitygw, at most
	uploaded           int   // files uploaded to file://, --json, at most
	uploadedBytes      int64
}

// runsFigure sums up the runs of one step.
type runsFigure struct {
	median, fastest, slowest time.Duration
	rss                      int64 // the largest
	runs                     int
}

func summarize(ms []measurement) runsFigure {
	ws := walls(ms)
	return runsFigure{median: median(ws), fastest: slices.Min(ws), slowest: slices.Max(ws), rss: peak(ms), runs: len(ms)}
}

// String is "median (fastest-slowest), RSS" or, for one run, "time, RSS".
func (f runsFigure) String() string {
	s := formatSeconds(f.median)
	if f.runs > 1 {
		s += " (" + formatSeconds(f.fastest) + "-" + formatSeconds(f.slowest) + ")"
	}
	return s + ", " + formatBytes(f.rss)
}

// figures sums up the changes of s.
func (s *archiveSite) figures() changeFigures {
	var f changeFigures
	var rebuilds []measurement
	var publish, unchanged [dests][]measurement
	for _, c := range s.changes {
		rebuilds = append(rebuilds, c.rebuild.m)
		for d := range dests {
			publish[d] = append(publish[d], c.publish[d].m)
			unchanged[d] = append(unchanged[d], c.unchanged[d].m)
		}
		vs, file := c.publish[destVersitygw], c.publish[destFile]
		f.puts, f.sent = max(f.puts, vs.counts.puts), max(f.sent, vs.counts.sent)
		f.uploaded, f.uploadedBytes = max(f.uploaded, file.sum.Uploaded), max(f.uploadedBytes, file.sum.UploadedBytes)
	}
	f.rebuild = summarize(rebuilds)
	for d := range dests {
		f.publish[d], f.unchanged[d] = summarize(publish[d]), summarize(unchanged[d])
	}
	return f
}

// table prints issue 38's table: each row at both sizes, the goal at
// 1,000,000 articles and the verdict.
func (b *archiveBench) table(ref, big *archiveSite, edge *edgeResult, edgeErr error) {
	type row struct {
		what, ref, big, goal string
		ok                   *bool // nil: no goal
	}
	goal := func(ok bool) *bool { return &ok }
	one := func(m measurement) string { return summarize([]measurement{m}).String() }
	rf, bf := ref.figures(), big.figures()
	rows := []row{
		{"feedgen build after it (output and state present)", rf.rebuild.String(), bf.rebuild.String(),
			fmt.Sprintf("<= %v, <= %s", targetArchiveRebuild, formatBytes(targetArchiveRebuildRSS)),
			goal(bf.rebuild.median <= targetArchiveRebuild && bf.rebuild.rss <= targetArchiveRebuildRSS)},
		{"  the cold build before them", one(ref.cold.m), one(big.cold.m),
			"RSS <= " + formatBytes(targetArchiveColdRSS), goal(big.cold.m.rss <= targetArchiveColdRSS)},
		{"bytes publish uploads (to versitygw, the proxy's count)", fmt.Sprintf("%d files, %s", rf.puts, formatBytes(rf.sent)),
			fmt.Sprintf("%d files, %s", bf.puts, formatBytes(bf.sent)), "<= " + formatBytes(targetArchiveUpload), goal(bf.sent <= targetArchiveUpload)},
		{"  the same to file:// (its --json)", fmt.Sprintf("%d files, %s", rf.uploaded, formatBytes(rf.uploadedBytes)),
			fmt.Sprintf("%d files, %s", bf.uploaded, formatBytes(bf.uploadedBytes)), "", nil},
		{"publish to versitygw after it", rf.publish[destVersitygw].String(), bf.publish[destVersitygw].String(),
			fmt.Sprintf("<= %v, <= %s", targetArchivePublish, formatBytes(targetArchivePublishRSS)),
			goal(bf.publish[destVersitygw].median <= targetArchivePublish && bf.publish[destVersitygw].rss <= targetArchivePublishRSS)},
		{"publish of an unchanged build, to versitygw", rf.unchanged[destVersitygw].String(), bf.unchanged[destVersitygw].String(),
			fmt.Sprintf("<= %v", targetArchiveUnchanged), goal(bf.unchanged[destVersitygw].median <= targetArchiveUnchanged)},
		{"publish of an unchanged build, to file://", rf.unchanged[destFile].String(), bf.unchanged[destFile].String(),
			fmt.Sprintf("<= %v", targetArchiveUnchanged), goal(bf.unchanged[destFile].median <= targetArchiveUnchanged)},
		{"publish to a file:// bucket after a change", rf.publish[destFile].String(), bf.publish[destFile].String(),
			fmt.Sprintf("<= %v", targetArchivePublish), goal(bf.publish[destFile].median <= targetArchivePublish)},
		{"  first publish of the cold build, to versitygw", one(ref.first[destVersitygw].m), one(big.first[destVersitygw].m), "", nil},
		{"  first publish of the cold build, to file://", one(ref.first[destFile].m), one(big.first[destFile].m), "", nil},
	}
	if edge != nil {
		for _, w := range []struct {
			name string
			r    [2]wrkResult
		}{{"edge, nginx-njs: hot page", edge.hot}, {"edge, nginx-njs: shuffled walk, limit 20", edge.walk}} {
			r := w.r[1].reqPerSec / w.r[0].reqPerSec
			rows = append(rows, row{w.name, fmt.Sprintf("%.0f req/s", w.r[0].reqPerSec), fmt.Sprintf("%.0f req/s: %.2fx", w.r[1].reqPerSec, r),
				fmt.Sprintf(">= %.1fx the reference's", targetArchiveEdge), goal(r >= targetArchiveEdge)})
		}
	} else {
		why := "not measured (-edge=false)"
		if edgeErr != nil {
			why = "failed (above)"
		}
		rows = append(rows, row{"edge, nginx-njs", why, "", "", nil})
	}

	fmt.Fprintln(b.out)
	w := tabwriter.NewWriter(b.out, 0, 0, 2, ' ', 0)
	head := "one new article (the newest)"
	if n := len(big.changes); n > 1 {
		head = fmt.Sprintf("one new article (the newest), %d in turn", n)
	}
	fmt.Fprintf(w, "%s\t%s articles\t%s articles\tgoal at %s\t\n", head, formatCount(ref.opt.Articles), formatCount(big.opt.Articles), formatCount(archiveGoalArticles))
	for _, r := range rows {
		verdict := ""
		if r.ok != nil {
			verdict = b.verdict(*r.ok)
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%s\n", r.what, r.ref, r.big, r.goal, verdict)
	}
	w.Flush()
	if big.opt.Articles != archiveGoalArticles {
		fmt.Fprintf(b.out, "(the goals are for %s articles; this archive has %s)\n", formatCount(archiveGoalArticles), formatCount(big.opt.Articles))
	}
	fmt.Fprintln(b.out, "times: wall time of the whole feedgen process, the median of the changes (fastest-slowest) when there are several; RSS: its peak (rusage), the largest;")
	fmt.Fprintln(b.out, "bytes uploaded: the request bodies the proxy in front of versitygw counted (the lock's included), the most of any change; the goals are judged on the archive's column")
	for _, s := range []*archiveSite{ref, big} {
		fmt.Fprintf(b.out, "output of the %s (%s articles, cold build): %s\n", s.name, formatCount(s.opt.Articles), s.built)
		last := s.changes[len(s.changes)-1]
		fmt.Fprintf(b.out, "  the build after the last new article wrote %s; deleted %s\n", last.wrote, last.deleted)
	}
}

// loadAverage says the machine's load from /proc/loadavg, where there is
// one: on a shared machine, what the times mean depends on it.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(data)); err == nil && len(f) >= 3 {
		return fmt.Sprintf("load average %s, %s, %s on %d cores", f[0], f[1], f[2], runtime.NumCPU())
	}
	return "load average unknown"
}

// formatCount formats n with a comma between thousands: 1,000,000.
func formatCount(n int) string {
	s := strconv.Itoa(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}
