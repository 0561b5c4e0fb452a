package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"text/tabwriter"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
)

// publishVsPlan is what one "feedbench publish" measures.
type publishVsPlan struct {
	feedgen   string
	dir       string
	articles  int
	seed      int64
	versitygw string
	aws       string
	rclone    string
	quick     bool
}

// publishVsAbout is what "feedbench publish -h" says the command does.
const publishVsAbout = `Publishes one generated site (limits [20], every offset, as make bench-publish)
to one versitygw server with three tools, each to a bucket of its own, in one run:
  feedgen publish                  its defaults (16 uploads at once)
  aws s3 sync --delete             the AWS CLI v2 of Debian (/usr/bin/aws), its defaults
  rclone sync --checksum           rclone of Debian, its defaults (4 transfers, 8 checkers)
each after four steps: the first publish (an empty bucket), an unchanged one, one
after an edited article's title, one after a new article (each then feedgen build).
Every request goes through a proxy in front of versitygw that counts, the same way
for the three tools, the objects written (PUT) and deleted (DELETE, and each key of
a multi-object delete), the request bodies' bytes (sent) and the answers' (received).
Each step ends with every bucket checked against the build, byte for byte.
The two other tools set the same Cache-Control as feedgen (public, max-age=60).
make bench-publish-vs installs awscli and rclone with apt-get when missing.
`

// parsePublishVsFlags returns the plan the flags of "feedbench publish"
// ask for. Usage errors are printed to stderr before they are returned;
// -h returns flag.ErrHelp.
func parsePublishVsFlags(args []string, stderr io.Writer) (publishVsPlan, error) {
	c := newCommandLine("publish", stderr, "[-feedgen PATH] [-articles N] [-versitygw PATH] [-aws PATH] [-rclone PATH] [-quick] [-dir DIR]", "", publishVsAbout)
	articles := c.Int("articles", 10_000, "`number` of articles of the site")
	c.seedFlag()
	versitygw := c.String("versitygw", os.Getenv("FEEDGEN_VERSITYGW"), "versitygw `binary` (default: $FEEDGEN_VERSITYGW, else .cache/versitygw-*/versitygw, else $PATH)")
	aws := c.String("aws", "/usr/bin/aws", "AWS CLI `binary`: Debian's, not a pip one earlier in $PATH")
	rclone := c.String("rclone", "/usr/bin/rclone", "rclone `binary`")
	c.quickFlag("smoke test: 1,000 articles")
	if err := c.parse(args); err != nil {
		return publishVsPlan{}, err
	}
	plan := publishVsPlan{feedgen: c.feedgen, dir: c.dir, articles: *articles, seed: c.seed,
		versitygw: *versitygw, aws: *aws, rclone: *rclone, quick: c.quick}
	quickDefault(c, "articles", &plan.articles, 1_000)
	if plan.articles < 100 {
		return publishVsPlan{}, c.usageError("need -articles >= 100")
	}
	return plan, nil
}

// The keys of the versitygw root account the tools use.
const (
	vsAccess = "feedbench"
	vsSecret = "feedbenchsecret"
)

// syncTool is one of the tools compared: how it publishes the build of
// the site in folder dir to bucket through the endpoint.
type syncTool struct {
	name string
	cmd  func(dir, bucket, endpoint string) *exec.Cmd
}

func (p publishVsPlan) tools(feedgen string) []syncTool {
	const cacheControl = "public, max-age=60" // feedgen's default
	return []syncTool{
		// In the site's folder, as a person or CI runs it: it finds the
		// build there, and checks that the site did not change since.
		{"feedgen publish", func(dir, bucket, endpoint string) *exec.Cmd {
			cmd := exec.Command(feedgen, "publish", "-q", "s3://"+bucket+"?endpoint="+endpoint+"&use_path_style=true&region=us-east-1")
			cmd.Dir = dir
			return cmd
		}},
		{"aws s3 sync --delete", func(dir, bucket, endpoint string) *exec.Cmd {
			cmd := exec.Command(p.aws, "s3", "sync", "--delete", "--only-show-errors", "--endpoint-url", endpoint,
				"--cache-control", cacheControl, "public", "s3://"+bucket)
			cmd.Dir = dir
			return cmd
		}},
		{"rclone sync --checksum", func(dir, bucket, endpoint string) *exec.Cmd {
			cmd := exec.Command(p.rclone, "sync", "--checksum", "-q", "--s3-endpoint", endpoint,
				"--header-upload", "Cache-Control: "+cacheControl, "public", ":s3:"+bucket)
			cmd.Dir = dir
			return cmd
		}},
	}
}

// toolEnv is the environment of the three tools: the server's keys, and
// no configuration of the machine's.
func toolEnv(root string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"), "HOME=" + root, "LANG=C.UTF-8",
		"AWS_ACCESS_KEY_ID=" + vsAccess, "AWS_SECRET_ACCESS_KEY=" + vsSecret, "AWS_DEFAULT_REGION=us-east-1",
		"AWS_CONFIG_FILE=" + filepath.Join(root, "none"), "AWS_SHARED_CREDENTIALS_FILE=" + filepath.Join(root, "none"),
		"AWS_EC2_METADATA_DISABLED=true", "AWS_PAGER=",
		"RCLONE_CONFIG=" + filepath.Join(root, "rclone.conf"),
		"RCLONE_S3_PROVIDER=Other", "RCLONE_S3_ACCESS_KEY_ID=" + vsAccess, "RCLONE_S3_SECRET_ACCESS_KEY=" + vsSecret,
		"RCLONE_S3_REGION=us-east-1", "RCLONE_S3_FORCE_PATH_STYLE=true",
	}
	return env
}

// runPublishVs measures the plan.
func runPublishVs(ctx context.Context, plan publishVsPlan, stdout, stderr io.Writer) (err error) {
	for _, p := range []*string{&plan.aws, &plan.rclone} {
		if *p, err = exec.LookPath(*p); err != nil {
			return fmt.Errorf("%w (make bench-publish-vs installs awscli and rclone)", err)
		}
	}
	if plan.versitygw, err = findVersitygw(plan.versitygw); err != nil {
		return err
	}
	root, feedgen, err := workspace(ctx, "publish", plan.dir, plan.feedgen)
	if err != nil {
		return err
	}
	defer removeRoot(root, &err)

	opt := corpus.Options{Articles: plan.articles, Limits: []int{20}, Offsets: "all", Seed: plan.seed}
	s := site{dir: filepath.Join(root, "site"), opt: opt}
	if _, err := corpus.Write(s.dir, opt); err != nil {
		return err
	}
	if _, err := run(ctx, s.dir, feedgen, "build", "-q"); err != nil {
		return err
	}
	st, err := treeSize(s.public())
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "site: %d articles, limits [20], every offset: %d files, %s\n", opt.Articles, st.files, formatBytes(st.bytes))

	store := filepath.Join(root, "store")
	tools := plan.tools(feedgen)
	for i := range tools {
		if err := os.MkdirAll(filepath.Join(store, bucketName(i)), 0o755); err != nil {
			return err
		}
	}
	gw, err := startVersitygw(ctx, plan.versitygw, store, filepath.Join(root, "iam"))
	if err != nil {
		return err
	}
	defer gw.stop()
	proxy, err := newCountingProxy(gw.endpoint)
	if err != nil {
		return err
	}
	defer proxy.Close()
	endpoint := "http://" + proxy.Addr()
	for _, tool := range []string{plan.aws, plan.rclone} {
		out, _ := exec.CommandContext(ctx, tool, "--version").Output()
		fmt.Fprintf(stdout, "%s: %s\n", filepath.Base(tool), strings.SplitN(strings.TrimSpace(string(out)), "\n", 2)[0])
	}
	fmt.Fprintf(stdout, "versitygw %s (posix backend), every request counted by a proxy in front of it\n\n", plan.versitygw)

	newArt, err := newArticle(opt)
	if err != nil {
		return err
	}
	editPath, editData := corpus.Article(opt, opt.Articles/2)
	steps := []struct {
		name   string
		change func() error
	}{
		{"first publish", nil},
		{"unchanged", nil},
		{"one edit", func() error {
			data, err := editTitle(editData)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(s.dir, filepath.FromSlash(editPath)), data, 0o644)
		}},
		{"one new article", func() error {
			p := filepath.Join(s.dir, filepath.FromSlash(newArt.path))
			if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
				return err
			}
			return os.WriteFile(p, newArt.data, 0o644)
		}},
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "step\ttool\tobjects uploaded\tdeleted\trequests\tsent\treceived\ttime\tvs feedgen\t")
	env := toolEnv(root)
	for _, st := range steps {
		if st.change != nil {
			if err := st.change(); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
			if _, err := run(ctx, s.dir, feedgen, "build", "-q"); err != nil {
				return fmt.Errorf("%s: %w", st.name, err)
			}
		}
		var base time.Duration
		for i, tool := range tools {
			if err := syncDisk(ctx); err != nil {
				return err
			}
			bucket := bucketName(i)
			cmd := tool.cmd(s.dir, bucket, endpoint)
			cmd.Env = env
			var out bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &out
			proxy.reset()
			start := time.Now()
			err := cmd.Run()
			wall := time.Since(start)
			if err != nil {
				return fmt.Errorf("%s, %s: %v\n%s", st.name, tool.name, err, out.String())
			}
			c := proxy.counts(bucket)
			if i == 0 {
				base = wall
			}
			if bad := sameTree(s.public(), filepath.Join(store, bucket)); bad != "" {
				return fmt.Errorf("%s, %s: the bucket is not the build: %s", st.name, tool.name, bad)
			}
			if strings.Contains(out.String(), "warning:") {
				return fmt.Errorf("%s, %s: %s", st.name, tool.name, out.String())
			}
			fmt.Fprintf(stderr, "%s, %s: %d objects uploaded in %s\n", st.name, tool.name, c.puts, formatSeconds(wall))
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%d\t%s\t%s\t%s\t%.1f×\t\n", st.name, tool.name, c.puts, c.deletes, c.requests,
				formatBytes(c.sent), formatBytes(c.received), formatSeconds(wall), wall.Seconds()/base.Seconds())
		}
	}
	return tw.Flush()
}

// bucketName is the bucket of the i-th tool.
func bucketName(i int) string { return fmt.Sprintf("bench-%d", i) }

// findVersitygw returns the versitygw binary: given, else the newest under
// the repository's .cache (make installs it there), else from $PATH.
func findVersitygw(given string) (string, error) {
	if given != "" {
		return resolveBinary(given)
	}
	if found, _ := filepath.Glob(filepath.Join(".cache", "versitygw-*", "versitygw")); len(found) > 0 {
		return resolveBinary(found[len(found)-1])
	}
	p, err := exec.LookPath("versitygw")
	if err != nil {
		return "", errors.New("versitygw not found: pass -versitygw, set FEEDGEN_VERSITYGW, or run make bench-publish-vs, which installs it into .cache")
	}
	return p, nil
}

// gateway is a running versitygw.
type gateway struct {
	endpoint string // 127.0.0.1:PORT
	cmd      *exec.Cmd
	exited   chan error
}

// startVersitygw starts versitygw over the folder store (a folder per
// bucket) on a free port, and waits until it answers.
func startVersitygw(ctx context.Context, bin, store, iam string) (*gateway, error) {
	if err := os.MkdirAll(iam, 0o755); err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	addr := l.Addr().String()
	l.Close()
	var logs bytes.Buffer
	// --keep-alive: connections stay open between requests, as S3 keeps
	// them (without it, versitygw closes each after its answer).
	cmd := exec.Command(bin, "--access", vsAccess, "--secret", vsSecret, "--port", addr, "--iam-dir", iam, "--keep-alive", "--quiet", "posix", store)
	cmd.Stdout, cmd.Stderr = &logs, &logs
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	g := &gateway{endpoint: addr, cmd: cmd, exited: make(chan error, 1)}
	go func() { g.exited <- cmd.Wait() }()
	client := &http.Client{Timeout: time.Second}
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := client.Get("http://" + addr)
		if err == nil {
			resp.Body.Close()
			return g, nil
		}
		select {
		case err := <-g.exited:
			return nil, fmt.Errorf("versitygw exited: %v\n%s", err, logs.String())
		case <-ctx.Done():
			g.stop()
			return nil, ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			g.stop()
			return nil, fmt.Errorf("versitygw did not answer on %s in 30s\n%s", addr, logs.String())
		}
	}
}

// stop stops the gateway: SIGINT, then SIGKILL after 5 s.
func (g *gateway) stop() {
	g.cmd.Process.Signal(os.Interrupt)
	select {
	case <-g.exited:
	case <-time.After(5 * time.Second):
		g.cmd.Process.Kill()
		<-g.exited
	}
}

// requestCounts are what the proxy counted for one bucket.
type requestCounts struct {
	requests int
	puts     int   // objects written, the publish lock of feedgen aside
	deletes  int   // objects deleted, one by one or in a multi-object delete
	sent     int64 // bytes of the request bodies
	received int64 // bytes of the answers' bodies
}

// countingProxy is a reverse proxy in front of an S3 server that counts,
// per bucket (the first segment of a path-style URL), what its clients
// ask: the same count for every tool, whatever it says of itself.
type countingProxy struct {
	srv   *http.Server
	l     net.Listener
	proxy *httputil.ReverseProxy
	mu    sync.Mutex
	by    map[string]*requestCounts
}

func newCountingProxy(target string) (*countingProxy, error) {
	u, err := url.Parse("http://" + target)
	if err != nil {
		return nil, err
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &countingProxy{l: l, by: map[string]*requestCounts{}}
	p.proxy = &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(u)
			r.Out.Host = r.In.Host // the host the client signed
		},
		Transport: &http.Transport{MaxIdleConnsPerHost: 64},
	}
	p.srv = &http.Server{Handler: p}
	go p.srv.Serve(l)
	return p, nil
}

// Addr is the proxy's address, 127.0.0.1:PORT.
func (p *countingProxy) Addr() string { return p.l.Addr().String() }

// Close stops the proxy.
func (p *countingProxy) Close() error { return p.srv.Close() }

// reset forgets what was counted.
func (p *countingProxy) reset() {
	p.mu.Lock()
	p.by = map[string]*requestCounts{}
	p.mu.Unlock()
}

// counts returns what was counted for bucket since the last reset.
func (p *countingProxy) counts(bucket string) requestCounts {
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.by[bucket]; c != nil {
		return *c
	}
	return requestCounts{}
}

func (p *countingProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	bucket, key := splitBucketPath(r.URL.Path)
	var deletes int
	if r.Method == http.MethodPost && r.URL.Query().Has("delete") {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		deletes = countDeleteKeys(body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	body := &countingReader{r: r.Body}
	r.Body = body
	cw := &countingWriter{ResponseWriter: w}
	p.proxy.ServeHTTP(cw, r)
	p.mu.Lock()
	defer p.mu.Unlock()
	c := p.by[bucket]
	if c == nil {
		c = &requestCounts{}
		p.by[bucket] = c
	}
	c.requests++
	c.sent += body.n.Load()
	c.received += cw.n
	ok := cw.status < 300
	switch {
	case !ok || key == "" || strings.HasPrefix(key, ".feedgen-publish-lock"):
	case r.Method == http.MethodPut && r.URL.Query().Get("uploadId") == "":
		c.puts++
	case r.Method == http.MethodPost && r.URL.Query().Has("uploadId"):
		c.puts++ // a multipart upload completed
	case r.Method == http.MethodDelete:
		c.deletes++
	}
	if ok && deletes > 0 {
		c.deletes += deletes
	}
}

// splitBucketPath splits the path of a path-style S3 URL.
func splitBucketPath(p string) (bucket, key string) {
	bucket, key, _ = strings.Cut(strings.TrimPrefix(p, "/"), "/")
	return bucket, key
}

// countDeleteKeys counts the objects of a DeleteObjects request body.
func countDeleteKeys(body []byte) int {
	return bytes.Count(body, []byte("<Key>"))
}

// countingReader counts the bytes read of a request's body. The
// proxy's transport may still be reading it, on a goroutine of its own,
// when the answer has come (a server that answered without reading it
// all): n is read and written atomically.
type countingReader struct {
	r io.ReadCloser
	n atomic.Int64
}

func (c *countingReader) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n.Add(int64(n))
	return n, err
}

func (c *countingReader) Close() error { return c.r.Close() }

type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
}

func (c *countingWriter) WriteHeader(code int) {
	if c.status == 0 {
		c.status = code
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// sameTree says how the bucket folder differs from the build's (files
// whose names start with a dot aside: the lock, the server's own): "" when
// they hold the same files with the same bytes.
func sameTree(build, bucket string) string {
	read := func(root string) (map[string][]byte, error) {
		files := map[string][]byte{}
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
			data, err := os.ReadFile(p)
			rel, _ := filepath.Rel(root, p)
			files[filepath.ToSlash(rel)] = data
			return err
		})
		return files, err
	}
	want, err := read(build)
	if err != nil {
		return err.Error()
	}
	got, err := read(bucket)
	if err != nil {
		return err.Error()
	}
	for p, data := range want {
		g, ok := got[p]
		switch {
		case !ok:
			return p + " is missing"
		case !bytes.Equal(g, data):
			return p + " has other bytes"
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			return p + " is not in the build"
		}
	}
	return ""
}
