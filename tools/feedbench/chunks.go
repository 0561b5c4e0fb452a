package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
)

// Targets of the chunks benchmark (SPEC §12). Sizes are decimal.
const (
	targetChunksOverhead  = 1.1       // chunks output over the sum of its collections' articles' bytes
	targetChunksCold      = 1.0       // chunks cold build over pages [20] aligned's
	targetNewArticleShare = 0.02      // bytes one new article changes, chunks over pages [20 50 100]
	targetNewArticleBytes = 4_000_000 // bytes one new article changes, chunks
	targetEditBytes       = 1_000_000 // bytes one edited title changes, chunks
	// chunksOutputPerArticle is about how many bytes of disk the three
	// outputs of one article take together, all filters (28 kB, 10 kB and
	// 10 kB in blocks of 4 kB), to tell the room a run needs.
	chunksOutputPerArticle = 65_000
	// newestPublished is the publication time of the article the bench
	// adds: after every article of the corpus (its last is
	// 2025-12-31T23:59:59), so it is first in every collection it joins.
	newestPublished = "2026-01-01T00:00:00"
)

// chunksPlan is what one "feedbench chunks" measures.
type chunksPlan struct {
	feedgen  string
	dir      string
	articles int
	runs     int // cold builds of each layout
	seed     int64
	publish  bool // also feedgen publish each build to a file:// bucket
	json     bool // the report as JSON on stdout, the table on stderr
	quick    bool
}

// chunksAbout is what "feedbench chunks -h" says the command does.
const chunksAbout = `Compares the chunks layout (pagination.layout: chunks, SPEC §12) with the
pages layout on one synthetic site of -articles articles with every filter
(section, category, tag, author), built from the same content into three outputs:
  pages [20 50 100] aligned   the pages layout as SPEC §12 measures it (567 MB at 20,000)
  pages [20] aligned          the pages layout with one limit
  chunks                      layout: chunks, max_limit 100
and reports, for each:
  - the output: files and bytes; for chunks also the sum over the collections of
    their articles' bytes (each article's JSON as it stands in a page's results,
    once per collection it is in: read from the limit-100 pages of the pages layout,
    where each article of a collection is on exactly one page, and checked against
    the chunks' indexes), and the output over that sum: target <= 1.1;
  - cold builds (the output moved aside and a sync before each, the three layouts
    alternated): target chunks <= pages [20] aligned;
  - what a rebuild changes after one new article (the newest, with 3+ tags and an
    author), after an edit of one article's title, and with no change: the files of
    the new manifest whose path is new or whose sha256 differs, plus manifest.json
    when its bytes differ (what feedgen publish uploads), and the files it no longer
    has; targets: a new article changes in chunks <= 2% of the bytes it changes in
    pages [20 50 100] and <= 4 MB, an edited title <= 1 MB, no change 0 files;
  - with -publish, the summary line of a real feedgen publish of each build to a
    file:// bucket of its own (the first one, then after each change).
The manifests are checked against the files on disk (paths and sizes).
`

// parseChunksFlags returns the plan the flags of "feedbench chunks" ask for.
func parseChunksFlags(args []string, stderr io.Writer) (chunksPlan, error) {
	c := newCommandLine("chunks", stderr, "[-feedgen PATH] [-articles N] [-runs N] [-publish] [-json] [-quick] [-dir DIR]", "", chunksAbout)
	articles := c.Int("articles", 20_000, "`number` of articles of the site")
	c.runsFlag("cold builds of each layout (default with -quick: 1)")
	c.seedFlag()
	publish := c.Bool("publish", false, "also feedgen publish each build to a file:// bucket in the temporary folder, and report its summary lines")
	asJSON := c.Bool("json", false, "write the report as JSON to stdout (the table goes to stderr)")
	c.quickFlag("smoke test: 1,000 articles, 1 cold build of each layout")
	if err := c.parse(args); err != nil {
		return chunksPlan{}, err
	}
	plan := chunksPlan{feedgen: c.feedgen, dir: c.dir, articles: *articles, runs: c.runs, seed: c.seed,
		publish: *publish, json: *asJSON, quick: c.quick}
	quickDefault(c, "articles", &plan.articles, 1_000)
	quickDefault(c, "runs", &plan.runs, 1)
	if plan.articles < 100 || plan.runs < 1 {
		return chunksPlan{}, c.usageError("need -articles >= 100 and -runs >= 1, got %d and %d", plan.articles, plan.runs)
	}
	return plan, nil
}

// layout is one of the outputs the benchmark builds from its content.
type layout struct {
	Key     string `json:"key"`  // pages, pages1 or chunks: its config and output folder
	Name    string `json:"name"` // as the table heads it
	opt     corpus.Options
	chunked bool
	config  string // the config file
	public  string // the output folder
}

// chunksLayouts returns the three layouts of a site of n articles: pages
// [20 50 100] aligned, pages [20] aligned and chunks (max_limit 100), all
// with every filter. The first is the site corpus.Write writes.
func chunksLayouts(n int, seed int64) []layout {
	opt := func(limits []int, offsets string) corpus.Options {
		return corpus.Options{Articles: n, Limits: limits, Offsets: offsets, Seed: seed, Filters: listing.FilterNames()}
	}
	return []layout{
		{Key: "pages", Name: "pages [20 50 100] aligned", opt: opt(scaleLimits, "aligned")},
		{Key: "pages1", Name: "pages [20] aligned", opt: opt([]int{20}, "aligned")},
		// offsets: all, as chunks answer every offset (aligned is an error).
		{Key: "chunks", Name: "chunks, max_limit 100", opt: opt(scaleLimits, "all"), chunked: true},
	}
}

// layoutConfig returns the config.yaml of opt writing to outputDir, with
// pagination.layout: chunks when chunked.
func layoutConfig(opt corpus.Options, chunked bool, outputDir string) ([]byte, error) {
	data := corpus.Config(opt)
	const out = "\noutput_dir: public\n"
	if !bytes.Contains(data, []byte(out)) {
		return nil, fmt.Errorf("the corpus config has no line %q", out[1:len(out)-1])
	}
	data = bytes.Replace(data, []byte(out), []byte("\noutput_dir: "+outputDir+"\n"), 1)
	if chunked {
		const pagination = "\npagination:\n"
		if !bytes.Contains(data, []byte(pagination)) {
			return nil, errors.New("the corpus config has no pagination")
		}
		data = bytes.Replace(data, []byte(pagination), []byte(pagination+"  layout: chunks\n"), 1)
	}
	return data, nil
}

// chunksBench holds the state of one run.
type chunksBench struct {
	plan    chunksPlan
	out     io.Writer
	root    string
	feedgen string
	site    string // the content's folder
	aside   *buildBench
	tally
}

// chunksReport is what one run measured: the -json output.
type chunksReport struct {
	Articles int            `json:"articles"`
	Filters  []string       `json:"filters"`
	Runs     int            `json:"runs"`
	Layouts  []layoutReport `json:"layouts"`
	// ArticleBytes is the sum over the collections of their articles'
	// bytes; Entries the number of articles summed (an article counts
	// once per collection it is in).
	ArticleBytes int64          `json:"article_bytes"`
	Entries      int            `json:"article_entries"`
	Targets      []targetReport `json:"targets"`
}

// layoutReport is what one run measured of one layout.
type layoutReport struct {
	layout
	Files       int   `json:"files"`
	Bytes       int64 `json:"bytes"`
	Chunks      int   `json:"chunks,omitempty"`
	Indexes     int   `json:"indexes,omitempty"`
	ChunkBytes  int64 `json:"chunk_bytes,omitempty"`
	Collections int   `json:"collections"`
	// ManifestBytes is the size of manifest.json, counted in Files and Bytes.
	ManifestBytes int64           `json:"manifest_bytes"`
	Cold          []float64       `json:"cold_build_seconds"`
	ColdCPU       []float64       `json:"cold_build_cpu_seconds"`
	ColdRSS       int64           `json:"cold_build_peak_rss"`
	Publish       *publishSummary `json:"publish,omitempty"` // of the cold build
	Changes       []changeReport  `json:"changes"`
	cold          []measurement
}

// changeReport is what one change did to one layout's build.
type changeReport struct {
	Change  string `json:"change"`
	Article string `json:"article,omitempty"`
	Files   int    `json:"files"` // uploaded by a publish: new or changed, manifest.json included
	Bytes   int64  `json:"bytes"`
	Deleted int    `json:"deleted"`
	// Of Files and Bytes: chunks, and manifest.json's bytes.
	Chunks        int             `json:"chunks,omitempty"`
	ChunkBytes    int64           `json:"chunk_bytes,omitempty"`
	ManifestBytes int64           `json:"manifest_bytes"`
	Rebuild       float64         `json:"rebuild_seconds"`
	Publish       *publishSummary `json:"publish,omitempty"`
}

// targetReport is one target and whether the run met it.
type targetReport struct {
	What   string  `json:"what"`
	Value  float64 `json:"value"`
	Target float64 `json:"target"`
	OK     bool    `json:"ok"`
}

// runChunks runs the benchmark in a temporary folder.
func runChunks(ctx context.Context, plan chunksPlan, stdout, stderr io.Writer) (err error) {
	out := stdout
	if plan.json {
		out = stderr
	}
	need := int64(plan.articles) * (chunksOutputPerArticle*int64(plan.runs+1) + bytesPerArticleFile)
	if plan.publish {
		need += int64(plan.articles) * chunksOutputPerArticle
	}
	if err := checkRoom(plan.dir, need+need/4); err != nil {
		return err
	}
	start := time.Now()
	root, bin, err := workspace(ctx, "chunks", plan.dir, plan.feedgen)
	if err != nil {
		return err
	}
	defer removeRoot(root, &err)
	if plan.feedgen == "" {
		fmt.Fprintf(out, "go build ./cmd/feedgen: %s\n", formatSeconds(time.Since(start)))
	}
	b := &chunksBench{plan: plan, out: out, root: root, feedgen: bin,
		aside: &buildBench{root: root, out: out}}
	fmt.Fprintf(out, "feedbench chunks: %s, %d articles, filters %v, runs %d, GOMAXPROCS %d, sites in %s\n",
		bin, plan.articles, listing.FilterNames(), plan.runs, runtime.GOMAXPROCS(0), root)
	if plan.quick {
		fmt.Fprintf(out, "quick mode: %d articles; the targets are meant for 20000\n", plan.articles)
	}
	rep, err := b.run(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintln(out, b.tally)
	if plan.json {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(rep)
	}
	return nil
}

func (b *chunksBench) run(ctx context.Context) (*chunksReport, error) {
	layouts := chunksLayouts(b.plan.articles, b.plan.seed)
	b.site = filepath.Join(b.root, "site")
	gen := time.Now()
	n, err := corpus.Write(b.site, layouts[0].opt)
	if err != nil {
		return nil, fmt.Errorf("generate site: %w", err)
	}
	fmt.Fprintf(b.out, "site: %d files generated in %s\n", n, formatSeconds(time.Since(gen)))
	for i := range layouts {
		l := &layouts[i]
		data, err := layoutConfig(l.opt, l.chunked, l.Key)
		if err != nil {
			return nil, err
		}
		l.config, l.public = filepath.Join(b.site, l.Key+".yaml"), filepath.Join(b.site, l.Key)
		if err := os.WriteFile(l.config, data, 0o644); err != nil {
			return nil, err
		}
	}
	rep := &chunksReport{Articles: b.plan.articles, Filters: listing.FilterNames(), Runs: b.plan.runs}
	reps := make([]layoutReport, len(layouts))
	for i, l := range layouts {
		reps[i].layout = l
	}

	// Cold builds, the layouts alternated, each run starting with the
	// next one: this machine's speed drifts.
	for r := range b.plan.runs {
		var line []string
		for k := range layouts {
			i := (k + r) % len(layouts)
			m, err := b.coldBuild(ctx, layouts[i])
			if err != nil {
				return nil, err
			}
			reps[i].cold = append(reps[i].cold, m)
			line = append(line, layouts[i].Key+" "+formatSeconds(m.wall))
		}
		fmt.Fprintf(b.out, "cold builds, run %d: %s\n", r+1, strings.Join(line, ", "))
	}
	manifests := make([]*buildManifest, len(layouts))
	for i, l := range layouts {
		lr := &reps[i]
		for _, m := range lr.cold {
			lr.Cold = append(lr.Cold, m.wall.Seconds())
			lr.ColdCPU = append(lr.ColdCPU, m.cpu.Seconds())
		}
		lr.ColdRSS = peak(lr.cold)
		if manifests[i], err = b.checkBuild(l); err != nil {
			return nil, err
		}
		m := manifests[i]
		lr.Collections = len(m.Collections)
		lr.ManifestBytes = int64(len(m.raw))
		lr.Files, lr.Bytes = len(m.Files)+1, m.bytes()+lr.ManifestBytes
		for _, f := range m.Files {
			if chunk.IsChunk(f.Path) {
				lr.Chunks++
				lr.ChunkBytes += f.Size
			} else if chunk.IsIndex(f.Path) {
				lr.Indexes++
			}
		}
		if b.plan.publish {
			if lr.Publish, err = b.publish(ctx, l, "the first publish", lr.Files); err != nil {
				return nil, err
			}
		}
	}

	// The articles' bytes, once per collection: from the pages of limit
	// 100 of the pages layout, checked against the chunks' indexes.
	pagesBytes, pagesEntries, err := pageArticleBytes(layouts[0].public, manifests[0], 100)
	if err != nil {
		return nil, err
	}
	chunksBytes, chunksEntries, err := chunkArticleBytes(layouts[2].public, manifests[2])
	if err != nil {
		return nil, err
	}
	if pagesBytes != chunksBytes || pagesEntries != chunksEntries {
		fmt.Fprintf(b.out, "warning: the chunks' indexes hold %d articles' entries, %d bytes; the pages of limit 100 %d, %d bytes\n",
			chunksEntries, chunksBytes, pagesEntries, pagesBytes)
	}
	rep.ArticleBytes, rep.Entries = pagesBytes, pagesEntries

	if err := b.changes(ctx, layouts, manifests, reps); err != nil {
		return nil, err
	}
	rep.Layouts = reps
	b.table(reps)
	rep.Targets = b.targets(rep)
	return rep, nil
}

// coldBuild moves the output of l aside, syncs, and times a build.
func (b *chunksBench) coldBuild(ctx context.Context, l layout) (measurement, error) {
	if err := b.aside.setAside(l.public); err != nil {
		return measurement{}, err
	}
	if err := syncDisk(ctx); err != nil {
		return measurement{}, err
	}
	return b.build(ctx, l)
}

// build runs "feedgen build" for l once, from the temporary folder.
func (b *chunksBench) build(ctx context.Context, l layout) (measurement, error) {
	m, err := run(ctx, b.root, b.feedgen, "build", "--config", l.config, "--quiet")
	if err != nil {
		return m, fmt.Errorf("%s build failed: %w", l.Name, err)
	}
	return m, nil
}

// checkBuild reads the manifest of l's output and checks it against the
// files on disk and the layout: page files (articles/index.json) in the
// pages layout, an index of the main listing and no page in chunks.
func (b *chunksBench) checkBuild(l layout) (*buildManifest, error) {
	m, err := readManifest(l.public)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", l.Name, err)
	}
	files, err := snapshot(l.public)
	if err != nil {
		return nil, err
	}
	if bad := manifestMismatch(files, m); len(bad) > 0 {
		fmt.Fprintf(b.out, "warning: %s: the manifest and the files on disk differ on %d paths\n", l.Name, len(bad))
		b.aside.listPaths("differ", bad)
	}
	want := "articles/index.json"
	if l.chunked {
		want = chunk.IndexPath(listing.Dir)
	}
	if _, ok := files[want]; !ok {
		return nil, fmt.Errorf("%s: the build wrote no %s", l.Name, want)
	}
	if l.chunked {
		if _, ok := files["articles/index.json"]; ok {
			return nil, fmt.Errorf("%s: the chunks build wrote page files (articles/index.json)", l.Name)
		}
	}
	return m, nil
}

// changes makes each change to the content in turn, rebuilds every
// layout after it and counts what changed against the build before.
func (b *chunksBench) changes(ctx context.Context, layouts []layout, manifests []*buildManifest, reps []layoutReport) error {
	opt := layouts[0].opt
	added, err := newArticle(opt)
	if err != nil {
		return err
	}
	edit, err := pickEditTarget(site{opt: opt})
	if err != nil {
		return err
	}
	edited, err := editTitle(edit.data)
	if err != nil {
		return fmt.Errorf("%s: %w", edit.path, err)
	}
	steps := []struct {
		name  string
		about string // the article changed
		file  string
		data  []byte
		// articles is the count of articles the builds must list after
		// the change; newest, the id that must be first, or 0.
		articles, newest int
	}{
		{"new article", added.String(), added.path, added.data, opt.Articles + 1, added.id},
		{"edited title", edit.String(), edit.path, edited, opt.Articles + 1, added.id},
		{"unchanged rebuild", "", "", nil, opt.Articles + 1, added.id},
	}
	for _, st := range steps {
		if st.file != "" {
			if err := os.WriteFile(filepath.Join(b.site, filepath.FromSlash(st.file)), st.data, 0o644); err != nil {
				return err
			}
		}
		var line []string
		for i, l := range layouts {
			if err := syncDisk(ctx); err != nil {
				return err
			}
			m, err := b.build(ctx, l)
			if err != nil {
				return err
			}
			next, err := b.checkBuild(l)
			if err != nil {
				return err
			}
			if next.Articles != st.articles {
				return fmt.Errorf("%s, %s: the build lists %d articles, want %d", st.name, l.Name, next.Articles, st.articles)
			}
			if id, err := firstID(l.public, l.chunked); err != nil {
				return fmt.Errorf("%s, %s: %w", st.name, l.Name, err)
			} else if id != st.newest {
				return fmt.Errorf("%s, %s: the first article of the main listing is %d, not the new one, %d", st.name, l.Name, id, st.newest)
			}
			up := changedFiles(manifests[i], next)
			manifests[i] = next
			if files := up.files; st.file != "" && (files == 0 || files == 1 && up.manifest > 0) {
				return fmt.Errorf("%s, %s: the build changed no file but its manifest", st.name, l.Name)
			}
			c := changeReport{Change: st.name, Article: st.about, Files: up.files, Bytes: up.bytes, Deleted: up.deleted,
				Chunks: up.chunks, ChunkBytes: up.chunkBytes, ManifestBytes: up.manifest, Rebuild: m.wall.Seconds()}
			if b.plan.publish {
				if c.Publish, err = b.publish(ctx, l, st.name, up.files); err != nil {
					return err
				}
			}
			reps[i].Changes = append(reps[i].Changes, c)
			line = append(line, fmt.Sprintf("%s %s (%d files, %s)", l.Key, formatSeconds(m.wall), up.files, formatBytes(up.bytes)))
		}
		what := st.name
		if st.about != "" {
			what += " (" + st.about + ")"
		}
		fmt.Fprintf(b.out, "%s: rebuilt %s\n", what, strings.Join(line, ", "))
	}
	return nil
}

// publish runs feedgen publish of l's output to its own file:// bucket in
// the temporary folder and returns its summary line, warning when it
// uploaded another number of files than want, the manifests' count.
func (b *chunksBench) publish(ctx context.Context, l layout, what string, want int) (*publishSummary, error) {
	bucket := filepath.Join(b.root, "buckets", l.Key)
	if err := os.MkdirAll(bucket, 0o755); err != nil {
		return nil, err
	}
	_, stdout, err := runOutput(ctx, b.root, b.feedgen, "publish", "--config", l.config, "file://"+filepath.ToSlash(bucket))
	if err != nil {
		return nil, fmt.Errorf("%s publish failed: %w", l.Name, err)
	}
	s, err := parsePublishSummary(stdout)
	if err != nil {
		return nil, fmt.Errorf("%s publish: %w", l.Name, err)
	}
	if s.Uploaded != want {
		fmt.Fprintf(b.out, "warning: %s, %s: feedgen publish uploaded %d files, the manifests say %d changed\n", what, l.Name, s.Uploaded, want)
	}
	return &s, nil
}

// table prints what the run measured, a column for each layout.
func (b *chunksBench) table(reps []layoutReport) {
	w := tabwriter.NewWriter(b.out, 0, 0, 3, ' ', 0)
	row := func(head string, cell func(lr *layoutReport) string) {
		cells := []string{head}
		for i := range reps {
			cells = append(cells, cell(&reps[i]))
		}
		fmt.Fprintln(w, strings.Join(cells, "\t"))
	}
	fmt.Fprintln(w)
	row("", func(lr *layoutReport) string { return lr.Name })
	row("output", func(lr *layoutReport) string { return filesBytes(lr.Files, lr.Bytes) })
	row("  collections / chunks, indexes", func(lr *layoutReport) string {
		if lr.chunked {
			return fmt.Sprintf("%d / %d (%s), %d", lr.Collections, lr.Chunks, formatBytes(lr.ChunkBytes), lr.Indexes)
		}
		return strconv.Itoa(lr.Collections)
	})
	row("  manifest.json", func(lr *layoutReport) string { return formatBytes(lr.ManifestBytes) })
	row(fmt.Sprintf("cold build, median of %d", b.plan.runs), func(lr *layoutReport) string { return medianRange(lr.cold) })
	row("  CPU time, median", func(lr *layoutReport) string { return formatSeconds(median(cpus(lr.cold))) })
	row("  peak RSS", func(lr *layoutReport) string { return formatBytes(lr.ColdRSS) })
	if b.plan.publish {
		row("  feedgen publish to file://", func(lr *layoutReport) string { return lr.Publish.String() })
	}
	for k := range reps[0].Changes {
		row(reps[0].Changes[k].Change, func(lr *layoutReport) string {
			c := lr.Changes[k]
			return filesBytes(c.Files, c.Bytes)
		})
		row("  chunks; manifest.json", func(lr *layoutReport) string {
			c := lr.Changes[k]
			if !lr.chunked {
				return "-; " + formatBytes(c.ManifestBytes)
			}
			return fmt.Sprintf("%d, %s; %s", c.Chunks, formatBytes(c.ChunkBytes), formatBytes(c.ManifestBytes))
		})
		row("  files deleted; rebuild time", func(lr *layoutReport) string {
			c := lr.Changes[k]
			return fmt.Sprintf("%d; %.3fs", c.Deleted, c.Rebuild)
		})
		if b.plan.publish {
			row("  feedgen publish to file://", func(lr *layoutReport) string { return lr.Changes[k].Publish.String() })
		}
	}
	w.Flush()
	fmt.Fprintln(b.out, "new article, edited title, unchanged rebuild: the files of the new manifest whose path is new or whose sha256 differs, and manifest.json when its bytes differ (what feedgen publish uploads)")
	fmt.Fprintln(b.out)
}

// targets prints the targets against what the run measured and returns
// them. The layouts are chunksLayouts'.
func (b *chunksBench) targets(rep *chunksReport) []targetReport {
	pages, pages1, chunks := &rep.Layouts[0], &rep.Layouts[1], &rep.Layouts[2]
	var ts []targetReport
	check := func(what string, value, target float64, detail string) {
		ok := value <= target
		ts = append(ts, targetReport{What: what, Value: value, Target: target, OK: ok})
		fmt.Fprintf(b.out, "%s   %s\n", detail, b.verdict(ok))
	}
	over := float64(chunks.Bytes) / float64(max(1, rep.ArticleBytes))
	check("chunks output / sum of articles' bytes", over, targetChunksOverhead,
		fmt.Sprintf("sum over the %d collections of their articles' bytes: %s (%d articles' entries); chunks output %s / that = %.3f   target <= %.1f",
			chunks.Collections, formatBytes(rep.ArticleBytes), rep.Entries, formatBytes(chunks.Bytes), over, targetChunksOverhead))
	// The target is on the median wall times; the fastest runs, the
	// least disturbed by other processes, and the CPU times are shown
	// for comparison: on a shared machine they vary less.
	cold := ratio(median(walls(chunks.cold)), median(walls(pages1.cold)))
	fastest := ratio(slices.Min(walls(chunks.cold)), slices.Min(walls(pages1.cold)))
	cpu := ratio(median(cpus(chunks.cold)), median(cpus(pages1.cold)))
	check("chunks cold build / pages [20] aligned", cold, targetChunksCold,
		fmt.Sprintf("cold build: chunks %s / pages [20] aligned %s = %.2f (fastest runs %.2f, CPU time %.2f; pages [20 50 100] aligned %s)   target <= %.1f",
			formatSeconds(median(walls(chunks.cold))), formatSeconds(median(walls(pages1.cold))), cold, fastest, cpu, formatSeconds(median(walls(pages.cold))), targetChunksCold))
	add, addPages := chunks.Changes[0], pages.Changes[0]
	share := float64(add.Bytes) / float64(max(1, addPages.Bytes))
	check("new article: chunks bytes / pages bytes", share, targetNewArticleShare,
		fmt.Sprintf("new article: chunks %s / pages [20 50 100] %s = %.2f%%   target <= %.0f%%",
			filesBytes(add.Files, add.Bytes), filesBytes(addPages.Files, addPages.Bytes), 100*share, 100*targetNewArticleShare))
	check("new article: chunks bytes", float64(add.Bytes), targetNewArticleBytes,
		fmt.Sprintf("new article: chunks %s   target <= %s", formatBytes(add.Bytes), formatBytes(targetNewArticleBytes)))
	edit := chunks.Changes[1]
	check("edited title: chunks bytes", float64(edit.Bytes), targetEditBytes,
		fmt.Sprintf("edited title: chunks %s (pages [20 50 100] %s)   target <= %s",
			filesBytes(edit.Files, edit.Bytes), formatBytes(pages.Changes[1].Bytes), formatBytes(targetEditBytes)))
	var files []string
	most := 0
	for _, lr := range rep.Layouts {
		c := lr.Changes[2]
		files = append(files, fmt.Sprintf("%s %d", lr.Key, c.Files+c.Deleted))
		most = max(most, c.Files+c.Deleted)
	}
	check("unchanged rebuild: files changed, any layout", float64(most), 0,
		fmt.Sprintf("unchanged rebuild: files changed or deleted: %s   target 0", strings.Join(files, ", ")))
	return ts
}

// filesBytes formats a count of files and their bytes.
func filesBytes(files int, n int64) string {
	return fmt.Sprintf("%d files, %s", files, formatBytes(n))
}

// medianRange formats the median wall time of ms, with the range when
// there are several.
func medianRange(ms []measurement) string {
	ws := walls(ms)
	s := formatSeconds(median(ws))
	if len(ws) > 1 {
		s += " (" + formatSeconds(slices.Min(ws)) + "-" + formatSeconds(slices.Max(ws)) + ")"
	}
	return s
}

// buildManifest is what the bench reads of a build's manifest.json.
type buildManifest struct {
	raw         []byte // the file
	Articles    int    `json:"articles"`
	Collections []struct {
		Dir   string `json:"dir"`
		Count int    `json:"count"`
	} `json:"collections"`
	Files []manifestFile `json:"files"`
}

// manifestFile is one file a manifest lists.
type manifestFile struct {
	Path   string `json:"path"`
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"`
}

// bytes returns the size of the files m lists.
func (m *buildManifest) bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

// readManifest reads the manifest.json of the output folder public.
func readManifest(public string) (*buildManifest, error) {
	// manifest.Read, for the chunks its indexes name: the manifest of
	// the chunks layout lists its indexes only.
	r, err := manifest.Read(os.DirFS(public))
	if err == nil {
		err = r.Complete()
	}
	if err != nil {
		return nil, err
	}
	m := &buildManifest{raw: r.Data, Articles: r.Articles}
	for _, c := range r.Collections {
		m.Collections = append(m.Collections, struct {
			Dir   string `json:"dir"`
			Count int    `json:"count"`
		}{c.Dir, c.Count})
	}
	for _, f := range r.Files {
		m.Files = append(m.Files, manifestFile{Path: f.Path, Size: f.Size, SHA256: f.SHA256})
	}
	return m, nil
}

// manifestMismatch returns the sorted paths where the files on disk (a
// snapshot of the output folder) and the manifest disagree: listed and
// missing or of another size, or there and not listed (manifest.json
// aside).
func manifestMismatch(files map[string]fileState, m *buildManifest) []string {
	var bad []string
	listed := make(map[string]bool, len(m.Files))
	for _, f := range m.Files {
		listed[f.Path] = true
		if st, ok := files[f.Path]; !ok || st.size != f.Size {
			bad = append(bad, f.Path)
		}
	}
	for p := range files {
		if !listed[p] && p != "manifest.json" && !strings.HasPrefix(p, ".") {
			bad = append(bad, p) // the build's state (.feedgen-*) is never listed
		}
	}
	slices.Sort(bad)
	return bad
}

// upload is what a publish of a build moves after the build before it.
type upload struct {
	files    int   // files new or changed, manifest.json included when its bytes changed
	bytes    int64 // their bytes
	deleted  int   // files of the build before that this one does not have
	manifest int64 // of bytes, those of manifest.json
	// Of files and bytes, those of chunks (chunk.IsChunk).
	chunks     int
	chunkBytes int64
}

// changedFiles compares the manifests of two builds of one output: the
// files of next whose path prev does not list or lists with another
// sha256 (or size), and manifest.json when its bytes differ, are what
// feedgen publish uploads; the paths of prev that next does not list are
// deleted (in the chunks layout, publish deletes a chunk one build later).
func changedFiles(prev, next *buildManifest) upload {
	old := make(map[string]manifestFile, len(prev.Files))
	for _, f := range prev.Files {
		old[f.Path] = f
	}
	var up upload
	for _, f := range next.Files {
		if o, ok := old[f.Path]; !ok || o.SHA256 != f.SHA256 || o.Size != f.Size {
			up.files++
			up.bytes += f.Size
			if chunk.IsChunk(f.Path) {
				up.chunks++
				up.chunkBytes += f.Size
			}
		}
		delete(old, f.Path)
	}
	up.deleted = len(old)
	if !bytes.Equal(prev.raw, next.raw) {
		up.files++
		up.manifest = int64(len(next.raw))
		up.bytes += up.manifest
	}
	return up
}

// pageArticleBytes returns the sum over the collections of m of their
// articles' bytes, as they stand in the results of their pages of limit
// (pre-rendered, offsets aligned, so that each article of a collection
// is on exactly one of them), and the number of articles on them.
func pageArticleBytes(public string, m *buildManifest, limit int) (int64, int, error) {
	var sum int64
	n, want := 0, 0
	for _, c := range m.Collections {
		want += c.Count
		for off := 0; off == 0 || off < c.Count; off += limit {
			p := c.Dir + "/" + strconv.Itoa(limit) + "/" + strconv.Itoa(off) + ".json"
			data, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(p)))
			if err != nil {
				return 0, 0, err
			}
			var page struct {
				Results []json.RawMessage `json:"results"`
			}
			if err := json.Unmarshal(data, &page); err != nil {
				return 0, 0, fmt.Errorf("%s: %w", p, err)
			}
			for _, a := range page.Results {
				sum += int64(len(a))
			}
			n += len(page.Results)
		}
	}
	if n != want {
		return 0, 0, fmt.Errorf("the pages of limit %d hold %d articles, the collections count %d", limit, n, want)
	}
	return sum, n, nil
}

// chunkArticleBytes returns the sum over the collections of m of their
// articles' bytes as their chunk indexes give them (a chunk of k
// articles holds their bytes, k-1 commas and two brackets), and the
// number of articles in them.
func chunkArticleBytes(public string, m *buildManifest) (int64, int, error) {
	var sum int64
	n := 0
	for _, c := range m.Collections {
		p := chunk.IndexPath(c.Dir)
		ix, _, err := readIndex(public, c.Dir)
		if err != nil {
			return 0, 0, fmt.Errorf("%s: %w", p, err)
		}
		if ix.Count != c.Count {
			return 0, 0, fmt.Errorf("%s: count %d, the manifest says %d", p, ix.Count, c.Count)
		}
		for _, r := range ix.Chunks {
			sum += int64(r.Size - 2 - (len(r.Ends) - 1))
		}
		n += ix.Count
	}
	return sum, n, nil
}

// firstID returns the id of the first article of the main listing of the
// output public: of its index page, or of its first chunk.
func firstID(public string, chunked bool) (int, error) {
	var first []byte
	if chunked {
		ix, _, err := readIndex(public, listing.Dir)
		if err != nil {
			return 0, err
		}
		if len(ix.Chunks) == 0 {
			return 0, errors.New("the main listing has no chunk")
		}
		r := ix.Chunks[0]
		if first, err = os.ReadFile(filepath.Join(public, filepath.FromSlash(r.Path))); err != nil {
			return 0, err
		}
		if err := chunk.CheckChunk(&r, first); err != nil {
			return 0, err
		}
		first = first[r.Start(0):r.Ends[0]]
	} else {
		data, err := os.ReadFile(filepath.Join(public, "articles", "index.json"))
		if err != nil {
			return 0, err
		}
		var page struct {
			Results []json.RawMessage `json:"results"`
		}
		if err := json.Unmarshal(data, &page); err != nil {
			return 0, fmt.Errorf("articles/index.json: %w", err)
		}
		if len(page.Results) == 0 {
			return 0, errors.New("the main listing is empty")
		}
		first = page.Results[0]
	}
	var a struct {
		ID int `json:"id"`
	}
	if err := json.Unmarshal(first, &a); err != nil {
		return 0, fmt.Errorf("the first article: %w", err)
	}
	return a.ID, nil
}

// newArticle returns the article the bench adds to a site of opt: the
// first after its articles that has 3 tags or more, an author key and no
// announcement (so that it joins a section, a category, an author and
// three tags at least), published after every other one.
func newArticle(opt corpus.Options) (editTarget, error) {
	t, _, err := newArticleFrom(opt, opt.Articles, newestPublished)
	return t, err
}

// newArticleFrom is newArticle from the generator's article from on (at
// least opt.Articles), published at the time at; it also returns the
// index after the article's, where the next one may be looked for.
func newArticleFrom(opt corpus.Options, from int, at string) (editTarget, int, error) {
	for i := max(from, opt.Articles); i < from+10_000; i++ {
		p, data := corpus.Article(opt, i)
		t, ok := readEditTarget(p, data)
		if !ok || t.tags < 3 {
			continue
		}
		data, err := setPublished(data, at)
		if err != nil {
			return editTarget{}, 0, fmt.Errorf("%s: %w", p, err)
		}
		t, _ = readEditTarget(p, data)
		return t, i + 1, nil
	}
	return editTarget{}, 0, errors.New("no new article with 3 tags, an author key and no announcement")
}

var publishedLine = regexp.MustCompile(`(?m)^published: "[^"\n]*"$`)

// setPublished returns the article with the published time of its front
// matter replaced by at.
func setPublished(data []byte, at string) ([]byte, error) {
	loc := publishedLine.FindIndex(data)
	if loc == nil {
		return nil, errors.New(`no line published: "..."`)
	}
	out := slices.Clip(data[:loc[0]])
	out = append(out, `published: "`+at+`"`...)
	return append(out, data[loc[1]:]...), nil
}

// editTitle returns the article with "Edited " before its title.
func editTitle(data []byte) ([]byte, error) {
	const title = "\ntitle: \""
	i := bytes.Index(data, []byte(title))
	if i < 0 {
		return nil, errors.New(`no line title: "..."`)
	}
	i += len(title)
	out := slices.Clip(data[:i])
	out = append(out, "Edited "...)
	return append(out, data[i:]...), nil
}

// publishSummary is the summary line of feedgen publish.
type publishSummary struct {
	Line          string `json:"line"`
	Uploaded      int    `json:"uploaded"`
	UploadedBytes string `json:"uploaded_bytes"` // as it writes them: "159.0 MB"
	Unchanged     int    `json:"unchanged"`
	Deleted       int    `json:"deleted"`
}

// String is what the table shows of it.
func (s *publishSummary) String() string {
	return fmt.Sprintf("%d files, %s; %d deleted", s.Uploaded, s.UploadedBytes, s.Deleted)
}

var publishSummaryRE = regexp.MustCompile(`(?m)^uploaded (\d+) files? \(([^)]*)\), unchanged (\d+), deleted (\d+), in (\S+)$`)

// parsePublishSummary finds the summary line in what feedgen publish
// printed.
func parsePublishSummary(stdout string) (publishSummary, error) {
	m := publishSummaryRE.FindStringSubmatch(stdout)
	if m == nil {
		return publishSummary{}, fmt.Errorf("no summary line in %q", stdout)
	}
	s := publishSummary{Line: m[0], UploadedBytes: m[2]}
	s.Uploaded, _ = strconv.Atoi(m[1])
	s.Unchanged, _ = strconv.Atoi(m[3])
	s.Deleted, _ = strconv.Atoi(m[4])
	return s, nil
}

// readIndex reads the index of the collection in folder dir of the
// chunks build in folder public: its root and leaves, and returns it with
// the size of its root.
func readIndex(public, dir string) (*chunk.Index, int64, error) {
	p := chunk.IndexPath(dir)
	root, err := os.ReadFile(filepath.Join(public, filepath.FromSlash(p)))
	if err != nil {
		return nil, 0, err
	}
	ix, err := chunk.ReadIndex(root, func(leaf string) ([]byte, error) {
		return os.ReadFile(filepath.Join(public, filepath.FromSlash(leaf)))
	})
	if err != nil {
		return nil, 0, fmt.Errorf("%s: %w", p, err)
	}
	return ix, int64(len(root)), nil
}
