package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// fakeEnv makes the test binary act as a stand-in feedgen (see fakeFeedgen);
// its value is the behaviour.
const fakeEnv = "FEEDBENCH_FAKE_FEEDGEN"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeFeedgen(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeFeedgen mimics the CLI contract of "feedgen build --config FILE
// --quiet". Its pages hold their collection's count, limit and offset,
// and the id and a digest of the file of each article on them; articles
// are in path order, and each filter of the config has one collection,
// articles/FILTER/all, of every article, without index.json (as feedgen,
// which writes one for the main listing only). Modes:
// ok writes only changed files; rewrite writes every file on every build;
// short leaves out the last page of the first limit; stale never rewrites
// a page of a filtered collection; misplaced writes the output under the
// working folder; fail reports a content error.
func fakeFeedgen(mode string, args []string) int {
	if len(args) != 4 || args[0] != "build" || args[1] != "--config" || args[3] != "--quiet" {
		fmt.Fprintf(os.Stderr, "fake feedgen: unexpected arguments %q\n", args)
		return 2
	}
	if mode == "fail" {
		fmt.Fprintln(os.Stderr, "content/news/politics/x.md:3: bad date")
		return 1
	}
	if err := fakeBuild(mode, args[2]); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

var fakeIDRE = regexp.MustCompile(`(?m)^id: (\d+)$`)

func fakeBuild(mode, configPath string) error {
	data, err := os.ReadFile(configPath)
	if err != nil {
		return err
	}
	var cfg struct {
		Pagination struct {
			Limits  []int  `yaml:"limits"`
			Offsets string `yaml:"offsets"`
		} `yaml:"pagination"`
		Filters    []string `yaml:"filters"`
		ContentDir string   `yaml:"content_dir"`
		OutputDir  string   `yaml:"output_dir"`
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		return fmt.Errorf("%s: %v", configPath, err)
	}
	base := filepath.Dir(configPath)
	var articles []string // JSON of each article, in path order
	err = filepath.WalkDir(filepath.Join(base, cfg.ContentDir), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".md") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		m := fakeIDRE.FindSubmatch(data)
		if m == nil {
			return fmt.Errorf("%s: no id", p)
		}
		articles = append(articles, fmt.Sprintf(`{"id":%s,"sum":"%x"}`, m[1], sha256.Sum256(data)))
		return nil
	})
	if err != nil {
		return err
	}
	out := filepath.Join(base, cfg.OutputDir)
	if mode == "misplaced" {
		out = cfg.OutputDir
	}
	write := func(rel string, data []byte, rewrite bool) error {
		p := filepath.Join(out, filepath.FromSlash(rel))
		if old, err := os.ReadFile(p); err == nil && (bytes.Equal(old, data) || !rewrite) && mode != "rewrite" {
			return nil
		}
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		return os.WriteFile(p, data, 0o644)
	}
	count := len(articles)
	page := func(limit, offset int) []byte {
		results := articles[min(offset, count):min(offset+limit, count)]
		return fmt.Appendf(nil, `{"count":%d,"limit":%d,"offset":%d,"results":[%s]}`, count, limit, offset, strings.Join(results, ","))
	}
	var manifest struct {
		Collections []map[string]any `json:"collections"`
	}
	dirs := []string{"articles"}
	for _, f := range cfg.Filters {
		dirs = append(dirs, "articles/"+f+"/all")
		manifest.Collections = append(manifest.Collections, map[string]any{
			"dir": "articles/" + f + "/all", "count": count, "params": []map[string]string{{"key": f, "value": "all"}},
		})
	}
	manifest.Collections = append(manifest.Collections, map[string]any{"dir": "articles", "count": count})
	for c, dir := range dirs {
		rewrite := c == 0 || mode != "stale"
		if c == 0 {
			if err := write(dir+"/index.json", page(cfg.Pagination.Limits[0], 0), rewrite); err != nil {
				return err
			}
		}
		for k, limit := range cfg.Pagination.Limits {
			step := 1
			if cfg.Pagination.Offsets == "aligned" {
				step = limit
			}
			for offset := 0; offset == 0 || offset < count; offset += step {
				if mode == "short" && c == 0 && k == 0 && offset+step >= count && offset > 0 {
					break
				}
				if err := write(fmt.Sprintf("%s/%d/%d.json", dir, limit, offset), page(limit, offset), rewrite); err != nil {
					return err
				}
			}
		}
	}
	data, err = json.Marshal(manifest)
	if err != nil {
		return err
	}
	return write("manifest.json", data, true)
}

// runFake runs the build benchmark with the test binary as feedgen.
func runFake(t *testing.T, mode string, runs int) (string, error) {
	t.Helper()
	t.Setenv(fakeEnv, mode)
	t.Setenv("GORACE", "atexit_sleep_ms=0") // a race-enabled fake would sleep 1s at exit
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var out bytes.Buffer
	err = runBuild(context.Background(), buildPlan{
		feedgen: self,
		dir:     dir,
		runs:    runs,
		small:   45,
		large:   230,
		seed:    3,
		quick:   true,
	}, &out, io.Discard)
	left, rerr := os.ReadDir(dir)
	if rerr != nil {
		t.Fatal(rerr)
	}
	if len(left) != 0 {
		t.Errorf("temporary folder not removed: %v", left)
	}
	return out.String(), err
}

func TestBuildBenchmark(t *testing.T) {
	tests := []struct {
		mode    string
		runs    int
		want    []string // regular expressions the report must match
		notWant []string
		err     string // substring of the error; "" for success
	}{
		{
			mode: "ok",
			runs: 3,
			want: []string{
				`(?m)^\(a\) cold build .* 45 articles limits \[20\] all .*median \d+\.\d{3}s \(.*\)  runs 3  files 47  bytes .*  peak RSS `,
				`(?m)^\(c\) cp -a .*median .*runs 3$`,
				`(?m)^\(a\)/\(c\) = \d+\.\d\d   target <= 1\.5   (ok|MISSED)$`,
				`(?m)^\(a\) peak RSS .*target <= 250 MB`,
				`(?m)^\(b\) no-change rebuild .*runs 3  files changed 0 `,
				`(?m)^\(d\) cold build .*230 articles limits \[20 50 100\] aligned .*runs 1  files 22 .*target <= 8s ok, peak RSS <= 1 GB`,
				`(?m)^\(e\) cold build .*45 articles limits \[20\] aligned .*runs 3  files 5 .*target <= 250ms`,
				`(?m)^\(f\) cold build .*45 articles limits \[20\] aligned filters \[section category tag author\] .*runs 3  files 17  bytes .*  peak RSS `,
				`(?m)^    collections: section 1, category 1, tag 1, author 1; 16 pages$`,
				`(?m)^    \(e\) cold build alternated with \(f\): median .*runs 3  files 5  bytes `,
				`(?m)^\(f\)/\(e\) time per output byte = \d+\.\d\d  \(\d+\.\d\d vs \d+\.\d\d ms per MB; fastest runs \d+\.\d\d, CPU time (\d+\.\d\d|\+Inf)\)   target <= 1\.2   (ok|MISSED)$`,
				`(?m)^\(f\) no-change rebuild .*runs 3  files changed 0   rebuild/cold = \d+\.\d\d  target <= 0\.25, 0 files changed  (ok|MISSED)$`,
				`(?m)^\(f\) one-edit rebuild +article \d+: [3-6] tags, author [a-z-]+ .*runs 3  edit/cold = \d+\.\d\d  pages written 5, changed 5, holding it 5; other files written 0   target written = changed = holding  ok$`,
				`(?m)^\(g\) cold build .*45 articles limits \[20\] all filters .*runs 3  files 227 `,
				`(?m)^    \(a\) cold build alternated with \(g\): median .*runs 3  files 47  bytes `,
				`(?m)^\(g\)/\(a\) time per output byte = `,
				`(?m)^\(g\) no-change rebuild .*files changed 0 `,
				`(?m)^\(g\) one-edit rebuild .*pages written 100, changed 100, holding it 100; .* ok$`,
				`(?m)^targets: \d+ ok, \d+ MISSED$`,
			},
			notWant: []string{`warning`, `changed:`, `not changed`, `not written`, `not holding`},
		},
		{
			mode: "rewrite",
			runs: 1,
			want: []string{
				`(?m)^\(b\) no-change rebuild .*runs 1  files changed 47 .* MISSED$`,
				`(?m)^    changed: articles/20/0\.json, articles/20/1\.json, .*, \.\.\.$`,
				`(?m)^\(f\) no-change rebuild .*files changed 17 .* MISSED$`,
				`(?m)^\(f\) one-edit rebuild .*pages written 16, changed 5, holding it 5; other files written 1 .* MISSED$`,
				`(?m)^    written, not changed: articles/20/0\.json, `,
				`(?m)^\(g\) one-edit rebuild .*pages written 226, changed 100, holding it 100; .* MISSED$`,
				`(?m)^targets: \d+ ok, [1-9] MISSED$`,
			},
		},
		{
			mode: "stale",
			runs: 1,
			want: []string{
				`(?m)^\(f\) no-change rebuild .*files changed 0 `,
				`(?m)^\(f\) one-edit rebuild .*pages written 1, changed 1, holding it 5; .* MISSED$`,
				`(?m)^    holding it, not changed: articles/author/all/20/\d+\.json, `,
				`(?m)^\(g\) one-edit rebuild .*pages written 20, changed 20, holding it 100; .* MISSED$`,
			},
			notWant: []string{`written, not changed`, `changed, not written`},
		},
		{
			mode: "short",
			runs: 1,
			want: []string{
				`(?m)^warning: \(a\) public/articles/20 holds 44 pages, want 45$`,
				`(?m)^warning: \(d\) public/articles/20 holds 11 pages, want 12$`,
				`(?m)^warning: \(f\) public/articles holds 15 pages, want 16 for the 5 collections of the manifest$`,
			},
		},
		{mode: "fail", runs: 1, err: "(a) build failed: "},
		{mode: "misplaced", runs: 1, err: "(a) build wrote no index page"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			out, err := runFake(t, tt.mode, tt.runs)
			switch {
			case tt.err == "" && err != nil:
				t.Fatalf("runBuild: %v\n%s", err, out)
			case tt.err != "" && err == nil:
				t.Fatalf("runBuild succeeded, want error %q\n%s", tt.err, out)
			case tt.err != "" && !strings.Contains(err.Error(), tt.err):
				t.Fatalf("error %q, want %q", err, tt.err)
			}
			for _, re := range tt.want {
				if !regexp.MustCompile(re).MatchString(out) {
					t.Errorf("report does not match %s\n%s", re, out)
				}
			}
			for _, re := range tt.notWant {
				if regexp.MustCompile(re).MatchString(out) {
					t.Errorf("report matches %s\n%s", re, out)
				}
			}
		})
	}
}

func TestBuildFailurePrintsStderr(t *testing.T) {
	t.Setenv(fakeEnv, "fail")
	t.Setenv("GORACE", "atexit_sleep_ms=0")
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"build", "-quick", "-feedgen", self, "-dir", t.TempDir()}, &stdout, &stderr)
	if code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if !strings.Contains(stderr.String(), "content/news/politics/x.md:3: bad date") {
		t.Errorf("stderr does not show the build's stderr:\n%s", stderr.String())
	}
}

func TestRunUsage(t *testing.T) {
	tests := []struct {
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{nil, 2, "", "usage: feedbench"},
		{[]string{"help"}, 0, "build", ""},
		{[]string{"-h"}, 0, "usage: feedbench", ""},
		{[]string{"nope"}, 2, "", `unknown command "nope"`},
		{[]string{"build", "-h"}, 0, "", "go run ./tools/feedbench build"},
		{[]string{"build", "-bogus"}, 2, "", "flag provided but not defined"},
		{[]string{"build", "extra"}, 2, "", `unexpected argument "extra"`},
		{[]string{"build", "-runs", "0"}, 2, "", "-runs must be at least 1"},
		{[]string{"build", "-feedgen", "/nonexistent/feedgen"}, 1, "", "-feedgen: "},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			args := tt.args
			if len(args) > 0 && args[0] == "build" {
				args = append(args[:1:1], append([]string{"-dir", t.TempDir()}, args[1:]...)...)
			}
			var stdout, stderr bytes.Buffer
			code := Run(context.Background(), args, &stdout, &stderr)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout: %s\nstderr: %s", code, tt.code, &stdout, &stderr)
			}
			if !strings.Contains(stdout.String(), tt.stdout) {
				t.Errorf("stdout %q does not contain %q", &stdout, tt.stdout)
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr %q does not contain %q", &stderr, tt.stderr)
			}
		})
	}
}

func TestParseBuildFlags(t *testing.T) {
	tests := []struct {
		args []string
		want buildPlan
	}{
		{nil, buildPlan{runs: 5, small: 10_000, large: 100_000, seed: 1}},
		{[]string{"-runs", "3", "-seed", "9"}, buildPlan{runs: 3, small: 10_000, large: 100_000, seed: 9}},
		{[]string{"-quick"}, buildPlan{runs: 1, small: 1_000, large: 10_000, seed: 1, quick: true}},
		{[]string{"-quick", "-runs", "4"}, buildPlan{runs: 4, small: 1_000, large: 10_000, seed: 1, quick: true}},
		{[]string{"-feedgen", "/bin/feedgen", "-dir", "/data"}, buildPlan{feedgen: "/bin/feedgen", dir: "/data", runs: 5, small: 10_000, large: 100_000, seed: 1}},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.args, " "), func(t *testing.T) {
			var stderr bytes.Buffer
			got, err := parseBuildFlags(tt.args, &stderr)
			if err != nil {
				t.Fatalf("%v\n%s", err, &stderr)
			}
			if got != tt.want {
				t.Errorf("plan = %+v, want %+v", got, tt.want)
			}
		})
	}
}
