package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/listing"
)

// Targets of the serve benchmark.
const (
	targetServeRatio = 1.0              // feedgen req/s over nginx req/s, each workload
	targetServeRSS   = 64 * 1000 * 1000 // feedgen RSS above the output size
	servingGrowth    = 16 * 1000 * 1000 // RSS growth between warm-up and end that counts as growing
	hotTarget        = "/articles/?limit=20&offset=40"
)

// servePlan is what one "feedbench serve" measures.
type servePlan struct {
	feedgen  string
	dir      string
	articles int
	seed     int64
	wrkPlan
	quick bool
	// chunked: feedgen serves a chunks build of the site (-layout
	// chunks), nginx its pages build.
	chunked bool
	// server is what is measured against nginx on the pages build:
	// serverFeedgen (feedgen serve) or serverNJS (a second nginx with the
	// files of feedgen rules nginx-njs, on the chunks build: chunked).
	server string
	// njsCache: nginx-njs with feedgen rules --cache (-cache).
	njsCache bool
	// source is where feedgen serve reads the build from: sourceFolder,
	// or sourceBucket (a versitygw's bucket it was published to,
	// measured against serve --dir on the same build: serve_bucket.go),
	// with cacheSize (-cache-size, as given).
	source    string
	cacheSize string
}

// The sources of -source.
const (
	sourceFolder = "folder"
	sourceBucket = "bucket"
)

// The servers of -server.
const (
	serverFeedgen = "feedgen"
	serverNJS     = "nginx-njs"
)

// wrkPlan is how the wrk runs of a benchmark go.
type wrkPlan struct {
	duration    time.Duration // of each measured run
	warmup      time.Duration // of the run before them
	threads     int
	connections int
	rounds      int // measured runs of each server on each workload
}

// register adds the flags of a wrkPlan to fs, with their defaults.
func (w *wrkPlan) register(fs *flag.FlagSet) {
	fs.DurationVar(&w.duration, "duration", 10*time.Second, "measured `time` of each wrk run (whole seconds)")
	fs.DurationVar(&w.warmup, "warmup", 2*time.Second, "warm-up `time` before each measured wrk run (whole seconds)")
	fs.IntVar(&w.threads, "threads", 2, "wrk `threads`")
	fs.IntVar(&w.connections, "connections", 64, "wrk `connections`")
	fs.IntVar(&w.rounds, "rounds", 3, "measured wrk `runs` of each server on each workload, alternating which goes first; medians are reported")
}

// setQuick sets, under -quick, the smoke-test values of the flags not
// given: one round of 2s runs after 1s warm-ups.
func (w *wrkPlan) setQuick(c *commandLine) {
	quickDefault(c, "duration", &w.duration, 2*time.Second)
	quickDefault(c, "warmup", &w.warmup, time.Second)
	quickDefault(c, "rounds", &w.rounds, 1)
}

// ok reports whether the plan can run (see wrkNeeds).
func (w wrkPlan) ok() bool {
	return w.duration >= time.Second && w.threads >= 1 && w.connections >= w.threads && w.rounds >= 1
}

const wrkNeeds = "-duration >= 1s, -threads >= 1, -connections >= -threads, -rounds >= 1"

// serveAbout is what "feedbench serve -h" says the command does.
const serveAbout = `Builds a site (limits [20], offsets all) and serves its output with nginx (2 workers,
sendfile, open_file_cache) and with feedgen serve (GOMAXPROCS 2), both on loopback, then
measures both with wrk on two workloads: one hot page, and a shuffled walk over every page.
With -layout chunks, feedgen serve serves a build of the same content in the chunks
layout (pagination.layout: chunks, max_limit 100) instead, assembling each page from
chunks, while nginx serves the pages build: the same requests, the same bytes checked.
With -server nginx-njs (which implies -layout chunks), a second nginx (2 workers, with
ngx_http_js_module and the files of feedgen rules nginx-njs) assembles the pages of the
chunks build instead of feedgen serve: its req/s against plain nginx on the pages build,
and the bytes its njs reads per page of the walk (chunk ranges, and the index read whole)
against the page's size.
With -source bucket, the build (of -layout) is published to a bucket of a versitygw
(feedgen publish) and served from there (feedgen serve --dir s3://..., --cache-size): the
time from its start to its first answer, its req/s against feedgen serve --dir on the same
build once its cache is warm, and what its memory grows by past its first answer against
--cache-size (versitygw:
$FEEDGEN_VERSITYGW, .cache, else $PATH).
Installs nginx, wrk (and libnginx-mod-http-js for -server nginx-njs) with apt-get when
they are missing.
`

// parseServeFlags returns the plan the flags of "feedbench serve" ask for.
func parseServeFlags(args []string, stderr io.Writer) (servePlan, error) {
	c := newCommandLine("serve", stderr, "[-feedgen PATH] [-articles N] [-layout pages|chunks] [-server feedgen|nginx-njs [-cache]] [-source folder|bucket [-cache-size SIZE]] [-duration D] [-quick] [-dir DIR]", "", serveAbout)
	articles := c.Int("articles", 10_000, "`number` of articles of the site")
	layout := c.String("layout", "pages", "`layout` of the build feedgen serves: pages, or chunks (nginx serves the pages build)")
	server := c.String("server", serverFeedgen, "`server` measured against nginx on the pages build: feedgen (feedgen serve), or nginx-njs (feedgen rules nginx-njs on the chunks build; implies -layout chunks)")
	njsCache := c.Bool("cache", false, "with -server nginx-njs: write its files with feedgen rules --cache (nginx keeps each page njs puts together for a second)")
	source := c.String("source", sourceFolder, "`source` feedgen serve reads the build from: folder (serve --dir DIR, against nginx), or bucket (serve --dir s3://... on a versitygw it was published to, against serve --dir DIR)")
	cacheSize := c.String("cache-size", "64MiB", "with -source bucket: feedgen serve --cache-size")
	c.seedFlag()
	var wrk wrkPlan
	wrk.register(c.FlagSet)
	c.quickFlag("smoke test: 1,000 articles, one round of 2s runs after 1s warm-ups")
	if err := c.parse(args); err != nil {
		return servePlan{}, err
	}
	plan := servePlan{feedgen: c.feedgen, dir: c.dir, articles: *articles, seed: c.seed, wrkPlan: wrk, quick: c.quick,
		chunked: *layout == "chunks" || *server == serverNJS, server: *server, njsCache: *njsCache,
		source: *source, cacheSize: *cacheSize}
	quickDefault(c, "articles", &plan.articles, 1_000)
	plan.wrkPlan.setQuick(c)
	if *layout != "pages" && *layout != "chunks" {
		return servePlan{}, c.usageError("-layout: want %s or %s, got %q", "pages", "chunks", *layout)
	}
	if *server != serverFeedgen && *server != serverNJS {
		return servePlan{}, c.usageError("-server: want %s or %s, got %q", serverFeedgen, serverNJS, *server)
	}
	if *server == serverNJS && c.given["layout"] && *layout != "chunks" {
		return servePlan{}, c.usageError("-server %s serves the chunks layout: -layout %s contradicts it", serverNJS, *layout)
	}
	if *source != sourceFolder && *source != sourceBucket {
		return servePlan{}, c.usageError("-source: want %s or %s, got %q", sourceFolder, sourceBucket, *source)
	}
	if *source == sourceBucket && *server != serverFeedgen {
		return servePlan{}, c.usageError("-source %s measures feedgen serve: -server %s contradicts it", sourceBucket, *server)
	}
	if c.given["cache-size"] && *source != sourceBucket {
		return servePlan{}, c.usageError("-cache-size is for -source %s", sourceBucket)
	}
	if _, err := humanize.ParseBytes(*cacheSize); err != nil {
		return servePlan{}, c.usageError("-cache-size %q: want a size, e.g. 64MiB", *cacheSize)
	}
	if *njsCache && *server != serverNJS {
		return servePlan{}, c.usageError("-cache is for -server %s", serverNJS)
	}
	if plan.articles < 100 || !plan.wrkPlan.ok() {
		return servePlan{}, c.usageError("need -articles >= 100, " + wrkNeeds)
	}
	return plan, nil
}

// serveBench holds the state of one run.
type serveBench struct {
	plan    servePlan
	out     io.Writer
	log     io.Writer
	root    string
	feedgen string
	wrk     string
	nginx   string
	tally
}

// runServe runs the whole benchmark in a temporary folder.
func runServe(ctx context.Context, plan servePlan, out, log io.Writer) (err error) {
	b := &serveBench{plan: plan, out: out, log: log}
	if b.nginx, b.wrk, err = ensureTools(ctx, log); err != nil {
		return err
	}
	if plan.server == serverNJS {
		if err := ensureNJS(ctx, log); err != nil {
			return err
		}
	}
	if b.root, b.feedgen, err = workspace(ctx, "serve", plan.dir, plan.feedgen); err != nil {
		return err
	}
	defer removeRoot(b.root, &err)
	if plan.source == sourceBucket {
		return b.runBucket(ctx)
	}
	// nginx's workers may run as another user: let them read the output.
	if err := os.Chmod(b.root, 0o755); err != nil {
		return fmt.Errorf("create temporary folder: %w", err)
	}
	return b.run(ctx)
}

// ensureTools finds nginx and wrk, installing them with apt-get when one is
// missing (aptInstall).
func ensureTools(ctx context.Context, log io.Writer) (nginx, wrk string, err error) {
	find := func() (string, string) {
		n, _ := exec.LookPath("nginx")
		if n == "" {
			if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
				n = "/usr/sbin/nginx"
			}
		}
		w, _ := exec.LookPath("wrk")
		return n, w
	}
	if nginx, wrk = find(); nginx != "" && wrk != "" {
		return nginx, wrk, nil
	}
	fmt.Fprintln(log, "feedbench serve: installing nginx and wrk with apt-get")
	if err := aptInstall(ctx, log, "nginx", "wrk"); err != nil {
		return "", "", err
	}
	if nginx, wrk = find(); nginx == "" || wrk == "" {
		return "", "", errors.New("nginx or wrk still not found after apt-get install")
	}
	return nginx, wrk, nil
}

// aptInstall installs packages with apt-get, after an apt-get update
// when the first install fails.
func aptInstall(ctx context.Context, log io.Writer, packages ...string) error {
	install := func() error {
		cmd := exec.CommandContext(ctx, "apt-get", append([]string{"install", "-y"}, packages...)...)
		cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
		cmd.Stdout, cmd.Stderr = log, log
		return cmd.Run()
	}
	if err := install(); err != nil {
		cmd := exec.CommandContext(ctx, "apt-get", "update")
		cmd.Stdout, cmd.Stderr = log, log
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("apt-get update: %w", err)
		}
		if err := install(); err != nil {
			return fmt.Errorf("apt-get install -y %s: %w", strings.Join(packages, " "), err)
		}
	}
	return nil
}

func (b *serveBench) run(ctx context.Context) error {
	site := filepath.Join(b.root, "site")
	opt := corpus.Options{Articles: b.plan.articles, Limits: []int{20}, Offsets: "all", Seed: b.plan.seed}
	if _, err := corpus.Write(site, opt); err != nil {
		return fmt.Errorf("generate site: %w", err)
	}
	if _, err := run(ctx, b.root, b.feedgen, "build", "--config", filepath.Join(site, corpus.ConfigPath), "--quiet"); err != nil {
		return fmt.Errorf("build: %w", err)
	}
	public := filepath.Join(site, "public")
	st, err := statTree(filepath.Join(public, "articles"))
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "feedbench serve: %d articles, limits [20], offsets all: %d pages, %s; wrk %d threads, %d connections, %s after %s warm-up\n",
		b.plan.articles, st.files, formatBytes(st.bytes), b.plan.threads, b.plan.connections, b.plan.duration, b.plan.warmup)
	served := public // what feedgen serves
	var chunksConfig string
	if b.plan.chunked {
		if chunksConfig, served, err = b.buildChunks(ctx, site, opt); err != nil {
			return err
		}
		// feedgen's memory is measured against what it serves.
		if st, err = statTree(filepath.Join(served, "articles")); err != nil {
			return err
		}
		who := "feedgen serve"
		if b.plan.server == serverNJS {
			who = "nginx-njs (chunks)"
		}
		fmt.Fprintf(b.out, "%s: the chunks build of the same content (max_limit 100): %d files, %s\n", who, st.files, formatBytes(st.bytes))
	}

	nginx, err := b.startNginx(ctx, public)
	if err != nil {
		return err
	}
	defer nginx.stop()
	if b.plan.server == serverNJS {
		return b.runEdge(ctx, nginx, public, served, chunksConfig)
	}
	fg, err := b.startFeedgen(ctx, served)
	if err != nil {
		return err
	}
	defer fg.stop()
	fmt.Fprintf(b.out, "nginx %s: 2 workers, sendfile, open_file_cache on %s; feedgen serve with GOMAXPROCS 2 on %s\n",
		nginx.version, nginx.addr, fg.addr)

	// Both must give the same bytes before their speed means anything.
	offsets := shuffledOffsets(b.plan.articles, b.plan.seed, 2)
	if err := checkSamePages(ctx, public, []*serverProcess{nginx, fg}, offsets); err != nil {
		return err
	}
	workloads, err := writeWorkloads(b.root, offsets)
	if err != nil {
		return err
	}

	sampler := sampleRSS(fg.cmd.Process.Pid, 100*time.Millisecond)
	var warmRSS int64
	for i, w := range workloads {
		res, err := b.compare(ctx, [2]*serverProcess{nginx, fg}, [2]string{"nginx", "feedgen"}, w, func() {
			if i == 0 {
				warmRSS = sampler.last()
			}
		})
		if err != nil {
			return err
		}
		r := res[1].reqPerSec / res[0].reqPerSec
		fmt.Fprintf(b.out, "%-38s nginx %9.0f req/s p99 %-9s feedgen %9.0f req/s p99 %-9s feedgen/nginx %.2f  target >= %.1f %s, p99 <= nginx's %s\n",
			w.name, res[0].reqPerSec, res[0].p99, res[1].reqPerSec, res[1].p99, r,
			targetServeRatio, b.verdict(r >= targetServeRatio), b.verdict(res[1].p99 <= res[0].p99))
	}
	maxRSS, endRSS := sampler.stop()
	fmt.Fprintf(b.out, "feedgen memory (RssAnon + pages in memfd; mapped page cache not counted): max %s, end %s, after warm-up %s; output %s   target max <= output + %d MB %s, not growing (end <= after warm-up + %d MB) %s\n",
		formatBytes(maxRSS), formatBytes(endRSS), formatBytes(warmRSS), formatBytes(st.bytes),
		targetServeRSS/1_000_000, b.verdict(maxRSS <= st.bytes+targetServeRSS),
		servingGrowth/1_000_000, b.verdict(endRSS <= warmRSS+servingGrowth))
	fmt.Fprintln(b.out, b.tally)
	return nil
}

// buildChunks builds the content of the site folder in the chunks layout,
// with opt's pagination but max_limit 100, into site/chunks and returns
// its config and that folder: feedgen serve (or nginx-njs) assembles
// from it the pages nginx serves from the pages build, which
// checkSamePages compares byte for byte.
func (b *serveBench) buildChunks(ctx context.Context, site string, opt corpus.Options) (config, dir string, err error) {
	opt.Limits, opt.Offsets = scaleLimits, listing.OffsetsAll
	data, err := layoutConfig(opt, true, "chunks")
	if err != nil {
		return "", "", err
	}
	config = filepath.Join(site, "chunks.yaml")
	if err := os.WriteFile(config, data, 0o644); err != nil {
		return "", "", err
	}
	if _, err := run(ctx, b.root, b.feedgen, "build", "--config", config, "--quiet"); err != nil {
		return "", "", fmt.Errorf("build (layout: chunks): %w", err)
	}
	return config, filepath.Join(site, "chunks"), nil
}

// walkScript is a wrk script that requests the paths listed in the file
// paths in their order, each thread starting at its own place.
func walkScript(paths string) string {
	return `-- generated by feedbench serve
local n = 0
function setup(thread)
  n = n + 1
  thread:set("id", n)
end
local paths = {}
for line in io.lines(` + strconv.Quote(paths) + `) do paths[#paths + 1] = line end
local i = 0
function init(args)
  i = math.floor((id or 0) * #paths / 7) % #paths
end
function request()
  i = i % #paths + 1
  return wrk.format(nil, paths[i])
end
`
}

// shuffledOffsets returns the offsets 0 to n-1 in an order given by seed
// and salt.
func shuffledOffsets(n int, seed int64, salt uint64) []int {
	offsets := make([]int, n)
	for i := range offsets {
		offsets[i] = i
	}
	rand.New(rand.NewPCG(uint64(seed), salt)).Shuffle(n, func(i, j int) { offsets[i], offsets[j] = offsets[j], offsets[i] })
	return offsets
}

// checkSamePages checks that every server answers pages of limit 20 (the
// first, the last, one in between and 50 of offsets) with the bytes of
// their files in public: both must give the same bytes before their
// speed means anything.
func checkSamePages(ctx context.Context, public string, servers []*serverProcess, offsets []int) error {
	n := len(offsets)
	for _, off := range append([]int{min(40, n-1), 0, n - 1}, offsets[:min(50, n)]...) {
		target := "/articles/?limit=20&offset=" + strconv.Itoa(off)
		want, err := os.ReadFile(filepath.Join(public, "articles", "20", strconv.Itoa(off)+".json"))
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

// workload is what wrk requests: one target, or the paths of a script.
type workload struct{ name, target, script string }

// writeWorkloads writes into dir the wrk script of a walk over the pages
// of limit 20 at offsets, and returns the two workloads: one hot page,
// and that walk.
func writeWorkloads(dir string, offsets []int) ([]workload, error) {
	paths := filepath.Join(dir, "paths.txt")
	var list strings.Builder
	for _, off := range offsets {
		list.WriteString("/articles/?limit=20&offset=" + strconv.Itoa(off) + "\n")
	}
	if err := os.WriteFile(paths, []byte(list.String()), 0o644); err != nil {
		return nil, err
	}
	script := filepath.Join(dir, "walk.lua")
	if err := os.WriteFile(script, []byte(walkScript(paths)), 0o644); err != nil {
		return nil, err
	}
	return []workload{
		{"hot page " + hotTarget, hotTarget, ""},
		{"shuffled walk over " + strconv.Itoa(len(offsets)) + " pages", "/articles/", script},
	}, nil
}

// compare measures two servers on workload w: a warm-up run of each
// (warmed is called after them), then rounds of measured runs that
// alternate which server goes first, because this machine's speed drifts
// and a fixed order would favour one. It returns each server's medians
// and logs every run.
func (b *serveBench) compare(ctx context.Context, servers [2]*serverProcess, names [2]string, w workload, warmed func()) ([2]wrkResult, error) {
	return b.compareEach(ctx, servers, names, [2]workload{w, w}, warmed)
}

// compareEach is compare with a workload for each server (the same name):
// a walk over each one's own pages.
func (b *serveBench) compareEach(ctx context.Context, servers [2]*serverProcess, names [2]string, ws [2]workload, warmed func()) ([2]wrkResult, error) {
	var res [2]wrkResult
	for j, srv := range servers {
		if _, err := b.wrkRun(ctx, srv.addr, ws[j].target, ws[j].script, b.plan.warmup); err != nil {
			return res, err
		}
	}
	warmed()
	var runs [2][]wrkResult
	for r := range b.plan.rounds {
		for k := range servers {
			j := k
			if r%2 == 1 {
				j = 1 - k
			}
			m, err := b.wrkRun(ctx, servers[j].addr, ws[j].target, ws[j].script, b.plan.duration)
			if err != nil {
				return res, err
			}
			runs[j] = append(runs[j], m)
		}
	}
	for j := range servers {
		res[j] = medianResult(runs[j])
		fmt.Fprintf(b.log, "%s %s: %s\n", ws[j].name, names[j], formatRuns(runs[j]))
		if res[j].errors > 0 {
			fmt.Fprintf(b.out, "    warning: %s answered %d requests with errors or a status other than 2xx/3xx\n", names[j], res[j].errors)
		}
	}
	return res, nil
}

// serverProcess is a server the benchmark started.
type serverProcess struct {
	cmd     *exec.Cmd
	addr    string
	version string
	done    chan struct{}
}

// stop ends the server: SIGTERM, then SIGKILL after 5 s.
func (p *serverProcess) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		p.cmd.Process.Kill()
		<-p.done
	}
}

// startNginx writes an nginx.conf that serves public like feedgen serve
// does for canonical queries, and starts nginx on a free loopback port.
func (b *serveBench) startNginx(ctx context.Context, public string) (*serverProcess, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	return b.startNginxConf(ctx, filepath.Join(b.root, "nginx"), addr, "", `  default_type application/json;
  map $arg_limit $feed_limit { "" 20; default $arg_limit; }
  map $arg_offset $feed_offset { "" 0; default $arg_offset; }
  server {
    listen `+addr+`;
    root `+public+`;
    location = /articles/ {
      add_header Allow "GET, HEAD, OPTIONS";
      add_header Vary Accept;
      rewrite ^ /articles/$feed_limit/$feed_offset.json break;
    }
    location / { return 404 '{"detail":"Not found."}'; }
  }
`)
}

// startNginxConf writes dir/nginx.conf, nginx's config with 2 workers,
// its pid, log and temporary files in dir, main (lines of the main
// context) and http (lines of http {}, after the settings every nginx of
// the benchmarks has), and starts nginx with prefix dir; it returns once
// nginx accepts connections on addr, where http has a server listen.
func (b *serveBench) startNginxConf(ctx context.Context, dir, addr, main, http string) (*serverProcess, error) {
	for _, d := range []string{"", "tmp"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;\n"
	}
	conf := main + user + `worker_processes 2;
daemon off;
pid ` + dir + `/nginx.pid;
error_log ` + dir + `/error.log warn;
events { worker_connections 4096; }
http {
  access_log off;
  sendfile on;
  tcp_nopush on;
  tcp_nodelay on;
  open_file_cache max=20000 inactive=60s;
  open_file_cache_valid 60s;
  keepalive_requests 100000000;
  keepalive_timeout 75s;
  client_body_temp_path ` + dir + `/tmp/body;
  proxy_temp_path ` + dir + `/tmp/proxy;
  fastcgi_temp_path ` + dir + `/tmp/fastcgi;
  uwsgi_temp_path ` + dir + `/tmp/uwsgi;
  scgi_temp_path ` + dir + `/tmp/scgi;
` + http + `}
`
	confPath := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	v, _ := exec.CommandContext(ctx, b.nginx, "-v").CombinedOutput()
	p, err := startServerProcess(b.nginx, nil, b.log, "-p", dir, "-c", confPath)
	if err != nil {
		return nil, err
	}
	p.addr = addr
	p.version = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(string(v)), "nginx version:"))
	if err := waitListening(ctx, addr, p.done); err != nil {
		p.stop()
		return nil, fmt.Errorf("nginx: %w (see %s)", err, filepath.Join(dir, "error.log"))
	}
	return p, nil
}

// startFeedgen starts feedgen serve on a free loopback port, with two
// cores like nginx's two workers, and reads the address it listens on.
func (b *serveBench) startFeedgen(ctx context.Context, public string) (*serverProcess, error) {
	return startServing(ctx, b.feedgen, b.log, "serve", "--dir", public, "--addr", "127.0.0.1:0")
}

// startServing runs the feedgen binary bin with args (a serve command
// listening on port 0) on two cores, copies its output to log, and
// returns once it says where it listens.
func startServing(ctx context.Context, bin string, log io.Writer, args ...string) (*serverProcess, error) {
	return startServingWithin(ctx, bin, log, 60*time.Second, args...)
}

// startServingWithin is startServing that waits up to wait for the
// server to say where it listens: it says so once its build is loaded.
func startServingWithin(ctx context.Context, bin string, log io.Writer, wait time.Duration, args ...string) (*serverProcess, error) {
	pr, pw := io.Pipe()
	p, err := startServerProcess(bin, []string{"GOMAXPROCS=2"}, pw, args...)
	if err != nil {
		return nil, err
	}
	go func() {
		<-p.done
		pw.Close()
	}()
	found := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`^serving .* on http://([^/]+)/articles/$`)
		lines := bufio.NewScanner(pr)
		for lines.Scan() {
			if m := re.FindStringSubmatch(lines.Text()); m != nil {
				found <- m[1]
			}
			fmt.Fprintln(log, lines.Text())
		}
		io.Copy(io.Discard, pr)
	}()
	select {
	case p.addr = <-found:
	case <-p.done:
		return nil, fmt.Errorf("feedgen %s exited before it listened (its output is above)", strings.Join(args, " "))
	case <-time.After(wait):
		p.stop()
		return nil, fmt.Errorf("feedgen %s did not say where it listens within %s", strings.Join(args, " "), wait)
	case <-ctx.Done():
		p.stop()
		return nil, ctx.Err()
	}
	return p, nil
}

// startServerProcess starts name with args, its output going to w.
func startServerProcess(name string, env []string, w io.Writer, args ...string) (*serverProcess, error) {
	cmd := exec.Command(name, args...)
	cmd.Env = append(os.Environ(), env...)
	cmd.Stdout, cmd.Stderr = w, w
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", name, err)
	}
	p := &serverProcess{cmd: cmd, done: make(chan struct{})}
	go func() {
		cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// freeLoopbackAddr returns a loopback address with a port that is free now.
func freeLoopbackAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// waitListening waits until addr accepts connections.
func waitListening(ctx context.Context, addr string, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			conn.Close()
			return nil
		}
		select {
		case <-exited:
			return errors.New("exited before it listened")
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not listening on %s after 10s", addr)
		}
	}
}

// fetchPage GETs http://addr+target and returns the body of a 200.
func fetchPage(ctx context.Context, addr, target string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+target, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET http://%s%s: status %d", addr, target, resp.StatusCode)
	}
	return body, err
}

// medianResult returns the median req/s and the median p99 of runs, and
// their errors summed.
func medianResult(runs []wrkResult) wrkResult {
	rates := make([]float64, len(runs))
	p99s := make([]time.Duration, len(runs))
	var m wrkResult
	for i, r := range runs {
		rates[i], p99s[i] = r.reqPerSec, r.p99
		m.errors += r.errors
	}
	slices.Sort(rates)
	slices.Sort(p99s)
	m.reqPerSec, m.p99 = rates[len(rates)/2], p99s[len(p99s)/2]
	return m
}

// formatRuns lists each run's req/s and p99, for the log.
func formatRuns(runs []wrkResult) string {
	var b strings.Builder
	for i, r := range runs {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.0f req/s p99 %s", r.reqPerSec, r.p99)
	}
	return b.String()
}

// wrkResult is what one wrk run measured.
type wrkResult struct {
	reqPerSec float64
	p99       time.Duration
	errors    int
}

// wrkRun runs wrk against addr+target (or the script) for d.
func (b *serveBench) wrkRun(ctx context.Context, addr, target, script string, d time.Duration) (wrkResult, error) {
	args := []string{"-t", strconv.Itoa(b.plan.threads), "-c", strconv.Itoa(b.plan.connections),
		"-d", strconv.Itoa(max(1, int(d.Round(time.Second)/time.Second))) + "s", "--latency", "--timeout", "5s"}
	if script != "" {
		args = append(args, "-s", script)
	}
	args = append(args, "http://"+addr+target)
	cmd := exec.CommandContext(ctx, b.wrk, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return wrkResult{}, fmt.Errorf("wrk: %w: %s", err, out.String())
	}
	return parseWrk(out.String())
}

// parseWrk reads the report of wrk --latency.
func parseWrk(s string) (wrkResult, error) {
	var (
		wrkRate   = regexp.MustCompile(`(?m)^Requests/sec:\s+([0-9.]+)`)
		wrkP99    = regexp.MustCompile(`(?m)^\s+99%\s+([0-9.]+)(us|ms|s)\s*$`)
		wrkNon2xx = regexp.MustCompile(`(?m)^\s+Non-2xx or 3xx responses:\s+(\d+)`)
		wrkErrors = regexp.MustCompile(`(?m)^\s+Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)`)
	)
	var r wrkResult
	m := wrkRate.FindStringSubmatch(s)
	if m == nil {
		return r, fmt.Errorf("no Requests/sec in the wrk report:\n%s", s)
	}
	r.reqPerSec, _ = strconv.ParseFloat(m[1], 64)
	m = wrkP99.FindStringSubmatch(s)
	if m == nil {
		return r, fmt.Errorf("no 99%% latency in the wrk report:\n%s", s)
	}
	v, _ := strconv.ParseFloat(m[1], 64)
	unit := map[string]time.Duration{"us": time.Microsecond, "ms": time.Millisecond, "s": time.Second}[m[2]]
	r.p99 = time.Duration(v * float64(unit))
	if m := wrkNon2xx.FindStringSubmatch(s); m != nil {
		n, _ := strconv.Atoi(m[1])
		r.errors += n
	}
	if m := wrkErrors.FindStringSubmatch(s); m != nil {
		for _, f := range m[1:] {
			n, _ := strconv.Atoi(f)
			r.errors += n
		}
	}
	return r, nil
}

// sampleRSS samples serverMemory of process pid every period.
func sampleRSS(pid int, period time.Duration) *sampler[int64] {
	return sample(period, func() (int64, error) { return serverMemory(pid) }, func(a, b int64) int64 { return max(a, b) })
}

// serverMemory returns the memory process pid owns: its anonymous
// resident pages (RssAnon) plus the size of the memory files (memfd) it
// holds, which take memory whether mapped or not (a server that kept its
// pages in one did). Mapped files (RssFile) are the kernel's page cache,
// shared with every reader of the tree and reclaimable, as nginx's reads
// are: not counted.
func serverMemory(pid int) (int64, error) {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, err
	}
	anon, err := statusBytes(data, "RssAnon:")
	if err != nil {
		return 0, err
	}
	return anon + memfdBytes(pid), nil
}

// memfdBytes returns the size of the memory files (memfd) process pid has
// open.
func memfdBytes(pid int) int64 {
	dir := "/proc/" + strconv.Itoa(pid) + "/fd"
	entries, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range entries {
		if target, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && strings.HasPrefix(target, "/memfd:") {
			if info, err := os.Stat(filepath.Join(dir, e.Name())); err == nil {
				n += info.Size()
			}
		}
	}
	return n
}

// statusBytes returns the field key ("VmRSS:") of a /proc/PID/status, in
// bytes.
func statusBytes(status []byte, key string) (int64, error) {
	for line := range strings.SplitSeq(string(status), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return kb * 1024, err
		}
	}
	return 0, errors.New("no " + key + " in /proc status")
}
