package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/listing"
)

// Targets of "feedbench serve -server nginx-njs" (issue 28).
const (
	targetEdgeRatio = 0.5 // nginx-njs (chunks) req/s over nginx (pages) req/s, each workload
	targetEdgeRead  = 2.0 // chunk bytes read per request over the page's body, limit >= 20
)

// njsModule is nginx's JavaScript module where Debian's
// libnginx-mod-http-js puts it.
const njsModule = "/usr/lib/nginx/modules/ngx_http_js_module.so"

// ensureNJS installs libnginx-mod-http-js with apt-get when njsModule is
// missing.
func ensureNJS(ctx context.Context, log io.Writer) error {
	if _, err := os.Stat(njsModule); err == nil {
		return nil
	}
	fmt.Fprintln(log, "feedbench serve: installing libnginx-mod-http-js with apt-get")
	if err := aptInstall(ctx, log, "libnginx-mod-http-js"); err != nil {
		return err
	}
	if _, err := os.Stat(njsModule); err != nil {
		return fmt.Errorf("%s still not found after apt-get install libnginx-mod-http-js", njsModule)
	}
	return nil
}

// runEdge is the rest of run for -server nginx-njs, once nginx serves the
// pages build in public: a second nginx with the files of feedgen rules
// nginx-njs assembles the pages of the chunks build (in folder chunks,
// built from config), both are measured on the same workloads, and the
// bytes its njs reads per page of the walk are counted from the build's
// index.
func (b *serveBench) runEdge(ctx context.Context, nginx *serverProcess, public, chunks, config string) error {
	njs, err := b.startNginxNJS(ctx, config)
	if err != nil {
		return err
	}
	defer njs.stop()
	fmt.Fprintf(b.out, "nginx (pages) %s: 2 workers, sendfile, open_file_cache on %s; nginx-njs (chunks): the same nginx and settings, njs %s, feedgen rules nginx-njs on %s\n",
		nginx.version, nginx.addr, njsVersion(ctx), njs.addr)

	// Both must give the same bytes before their speed means anything.
	servers := [2]*serverProcess{nginx, njs}
	offsets := shuffledOffsets(b.plan.articles, b.plan.seed, 2)
	if err := checkSamePages(ctx, public, servers[:], offsets); err != nil {
		return err
	}
	workloads, err := writeWorkloads(b.root, offsets)
	if err != nil {
		return err
	}
	for _, w := range workloads {
		res, err := b.compare(ctx, servers, [2]string{"nginx (pages)", b.njsName()}, w, func() {})
		if err != nil {
			return err
		}
		r := res[1].reqPerSec / res[0].reqPerSec
		fmt.Fprintf(b.out, "%-38s nginx (pages) %9.0f req/s p99 %-9s %s %9.0f req/s p99 %-9s nginx-njs/nginx %.2f  target >= %.1f %s\n",
			w.name, res[0].reqPerSec, res[0].p99, b.njsName(), res[1].reqPerSec, res[1].p99, r, targetEdgeRatio, b.verdict(r >= targetEdgeRatio))
	}

	rd, err := njsReads(public, chunks, listing.Dir, 20, offsets)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "nginx-njs bytes read per request, the walk's %d pages (limit 20): chunk ranges mean %.2f max %.2f x the page's body (%.2f parts a page, max %d)   target max <= %.1f %s\n",
		rd.pages, rd.rangeMean, rd.rangeMax, rd.partsMean, rd.partsMax, targetEdgeRead, b.verdict(rd.rangeMax <= targetEdgeRead))
	how := "root read whole, then the page's leaves"
	if rd.index > njsWholeIndex {
		how = "root over 256 kB: read by 4 kB windows, counted whole here"
	}
	fmt.Fprintf(b.out, "nginx-njs bytes read per request, the walk's %d pages (limit 20): index %s (%s, %s) mean %.2f max %.2f x the page's body   no target\n",
		rd.pages, chunk.IndexPath(listing.Dir), formatBytes(rd.index), how, rd.indexMean, rd.indexMax)
	fmt.Fprintln(b.out, b.tally)
	return nil
}

// startNginxNJS writes the files of feedgen rules nginx-njs for the
// chunks build of config, listening on a free loopback port, and starts
// a second nginx that loads the JavaScript module and includes them:
// nginx-njs as its documentation runs it, with startNginx's settings.
func (b *serveBench) startNginxNJS(ctx context.Context, config string) (*serverProcess, error) {
	return b.startNginxNJSIn(ctx, filepath.Join(b.root, "nginx-njs"), config)
}

// startNginxNJSIn is startNginxNJS with its files in the folder dir.
func (b *serveBench) startNginxNJSIn(ctx context.Context, dir, config string) (*serverProcess, error) {
	addr, err := freeLoopbackAddr()
	if err != nil {
		return nil, err
	}
	rules := filepath.Join(dir, "rules")
	args := []string{"rules", "nginx-njs", "--config", config, "--addr", addr, "-o", rules}
	if b.plan.njsCache {
		args = append(args, "--cache", filepath.Join(dir, "cache"))
		if err := os.MkdirAll(filepath.Join(dir, "cache"), 0o755); err != nil {
			return nil, err
		}
	}
	if _, err := run(ctx, b.root, b.feedgen, args...); err != nil {
		return nil, fmt.Errorf("feedgen rules nginx-njs: %w", err)
	}
	p, err := b.startNginxConf(ctx, dir, addr, "load_module "+njsModule+";\n", "  include "+filepath.Join(rules, "nginx.conf")+";\n")
	if err != nil {
		return nil, fmt.Errorf("nginx-njs: %w", err)
	}
	return p, nil
}

// njsVersion returns the version of the package of njsModule, or its
// path when dpkg does not know it.
func njsVersion(ctx context.Context) string {
	out, err := exec.CommandContext(ctx, "dpkg-query", "-W", "-f=${Version}", "libnginx-mod-http-js").Output()
	if v := strings.TrimSpace(string(out)); err == nil && v != "" {
		return v
	}
	return njsModule
}

// readStats is what nginx-njs reads to answer pages, each figure over
// the page's body: the chunk ranges it cuts the page from, and the
// collection's index: its root, which it reads whole for every request,
// and the leaves that hold the page's articles.
type readStats struct {
	pages               int
	index               int64 // the root's size
	rangeMean, rangeMax float64
	indexMean, indexMax float64
	partsMean           float64 // chunk ranges a page is cut from
	partsMax            int
}

// njsReads returns what nginx-njs reads to answer the pages of limit at
// offsets of the collection in folder dir ("articles") of the chunks
// build in folder chunks: for each page, the ranges of its chunks that
// feedgen.js reads (exactly the page's articles, chunk by chunk) and the
// index's root and leaves it reads whole, each over the size of the page,
// whose file in the pages build in folder public is the body
// (checkSamePages).
func njsReads(public, chunks, dir string, limit int, offsets []int) (readStats, error) {
	var st readStats
	data, err := os.ReadFile(filepath.Join(chunks, filepath.FromSlash(chunk.IndexPath(dir))))
	if err != nil {
		return st, err
	}
	root, err := chunk.ParseRoot(data)
	if err != nil {
		return st, err
	}
	ix, err := chunk.ReadIndex(data, func(p string) ([]byte, error) { return os.ReadFile(filepath.Join(chunks, filepath.FromSlash(p))) })
	if err != nil {
		return st, err
	}
	st.index = int64(len(data))
	var rangeSum, indexSum float64
	parts := 0
	for _, off := range offsets {
		ranges := pageRanges(ix, off, limit)
		if len(ranges) == 0 {
			return st, fmt.Errorf("%s: no article at offset %d", chunk.IndexPath(dir), off)
		}
		info, err := os.Stat(filepath.Join(public, filepath.FromSlash(dir), strconv.Itoa(limit), strconv.Itoa(off)+".json"))
		if err != nil {
			return st, err
		}
		read := 0
		for _, r := range ranges {
			read += r.end - r.start
		}
		body := float64(info.Size())
		index := st.index
		for _, l := range root.Leaves {
			if l.First < off+limit && off < l.First+l.Count {
				index += int64(l.Size)
			}
		}
		rr, ir := float64(read)/body, float64(index)/body
		rangeSum += rr
		indexSum += ir
		st.rangeMax, st.indexMax = max(st.rangeMax, rr), max(st.indexMax, ir)
		parts += len(ranges)
		st.partsMax = max(st.partsMax, len(ranges))
		st.pages++
	}
	if st.pages > 0 {
		n := float64(st.pages)
		st.rangeMean, st.indexMean, st.partsMean = rangeSum/n, indexSum/n, float64(parts)/n
	}
	return st, nil
}

// byteRange is the bytes start to end (not included) of chunk
// ix.Chunks[chunk].
type byteRange struct{ chunk, start, end int }

// pageRanges returns the ranges of the chunks of ix that the results of
// the page of limit at offset off are, in order: what plan in
// assemble.js gives feedgen.js to read. None past the end.
func pageRanges(ix *chunk.Index, off, limit int) []byteRange {
	last := min(off+limit, ix.Count) - 1
	if off < 0 || off > last {
		return nil
	}
	firsts := make([]int, len(ix.Chunks))
	n := 0
	for i, r := range ix.Chunks {
		firsts[i] = n
		n += len(r.Ends)
	}
	// The chunk of off: the last whose first article is at most off.
	c := sort.Search(len(firsts), func(i int) bool { return firsts[i] > off }) - 1
	var ranges []byteRange
	for i := off; i <= last; c++ {
		r := &ix.Chunks[c]
		j := min(last, firsts[c]+len(r.Ends)-1)
		ranges = append(ranges, byteRange{c, r.Start(i - firsts[c]), r.Ends[j-firsts[c]]})
		i = j + 1
	}
	return ranges
}

// njsWholeIndex is the largest index nginx-njs reads whole (nginx.js's
// WHOLE); a larger one it reads by windows.
const njsWholeIndex = 256 << 10

// njsName names the nginx-njs server in the report.
func (b *serveBench) njsName() string {
	if b.plan.njsCache {
		return "nginx-njs --cache (chunks)"
	}
	return "nginx-njs (chunks)"
}
