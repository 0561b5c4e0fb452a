package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseBundleFlags(t *testing.T) {
	full := bundlePlan{articles: 10_000, seed: 1, runs: 5, wrkPlan: wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 3}}
	quick := bundlePlan{articles: 1_000, seed: 1, runs: 3, wrkPlan: wrkPlan{duration: 2 * time.Second, warmup: time.Second, threads: 2, connections: 64, rounds: 1}, quick: true}
	tests := []struct {
		args    []string
		want    bundlePlan
		wantErr bool
	}{
		{nil, full, false},
		{[]string{"-quick"}, quick, false},
		{[]string{"-quick", "-runs", "7", "-articles", "500"}, func() bundlePlan { p := quick; p.runs, p.articles = 7, 500; return p }(), false},
		{[]string{"-feedgen", "/bin/feedgen", "-dir", "/tmp/x"}, func() bundlePlan { p := full; p.feedgen, p.dir = "/bin/feedgen", "/tmp/x"; return p }(), false},
		{[]string{"-articles", "5"}, bundlePlan{}, true},
		{[]string{"-runs", "0"}, bundlePlan{}, true},
		{[]string{"-connections", "1", "-threads", "2"}, bundlePlan{}, true},
		{[]string{"extra"}, bundlePlan{}, true},
		{[]string{"-frobnicate"}, bundlePlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseBundleFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
	if _, err := parseBundleFlags([]string{"-h"}, io.Discard); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: got %v, want flag.ErrHelp", err)
	}
}

func TestBundleCommandUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := Run(context.Background(), []string{"bundle", "-h"}, &stdout, &stderr); code != 0 {
		t.Errorf("bundle -h: got exit %d, want 0", code)
	}
	if !strings.Contains(stderr.String(), "go run ./tools/feedbench bundle") {
		t.Errorf("bundle -h: no example in %q", stderr.String())
	}
	stdout.Reset()
	Run(context.Background(), []string{"help"}, &stdout, &stderr)
	if !strings.Contains(stdout.String(), "  bundle   feedgen bundle, verify and serve --bundle") {
		t.Errorf("help does not list bundle:\n%s", stdout.String())
	}
	if code := Run(context.Background(), []string{"bundle", "-runs", "0"}, &stdout, &stderr); code != 2 {
		t.Errorf("bundle -runs 0: got exit %d, want 2", code)
	}
}

func TestTreeSize(t *testing.T) {
	dir := t.TempDir()
	for name, size := range map[string]int{"a": 0, "b": 1, "c/d": 4096, "c/e/f": 4097} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := treeSize(dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := (diskStats{files: 4, bytes: 8194, disk: 4096 + 4096 + 8192}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := treeSize(filepath.Join(dir, "nope")); err == nil {
		t.Error("a missing folder: got no error")
	}
}

func TestRoundUp(t *testing.T) {
	for _, tt := range []struct{ n, want int64 }{{0, 0}, {1, 4096}, {4096, 4096}, {4097, 8192}} {
		if got := roundUp(tt.n, 4096); got != tt.want {
			t.Errorf("roundUp(%d) = %d, want %d", tt.n, got, tt.want)
		}
	}
}
