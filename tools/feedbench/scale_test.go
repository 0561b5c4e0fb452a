package main

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestParseScaleFlags(t *testing.T) {
	wrk := wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 3}
	quick := wrkPlan{duration: 2 * time.Second, warmup: time.Second, threads: 2, connections: 64, rounds: 1}
	tests := []struct {
		args    []string
		want    scalePlan
		wantErr bool
	}{
		{nil, scalePlan{articles: 10_000, seed: 1, parts: "ac", wrkPlan: wrk}, false},
		{[]string{"-quick"}, scalePlan{articles: 1_000, seed: 1, parts: "ac", wrkPlan: quick, quick: true}, false},
		{[]string{"-parts", "a", "-articles", "500"}, scalePlan{articles: 500, seed: 1, parts: "a", wrkPlan: wrk}, false},
		{[]string{"-parts", "b"}, scalePlan{}, true},
		{[]string{"-parts", ""}, scalePlan{}, true},
		{[]string{"-articles", "5"}, scalePlan{}, true},
		{[]string{"extra"}, scalePlan{}, true},
	}
	for _, tt := range tests {
		got, err := parseScaleFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestParseProcStatus(t *testing.T) {
	const status = "Name:\tfeedgen\nVmHWM:\t  2528212 kB\nVmRSS:\t  2524868 kB\nRssAnon:\t   56416 kB\nRssFile:\t 2468452 kB\nRssShmem:\t       0 kB\n"
	got, err := parseProcStatus([]byte(status))
	if err != nil {
		t.Fatal(err)
	}
	want := procMemory{rss: 2524868 << 10, anon: 56416 << 10, file: 2468452 << 10, shmem: 0, hwm: 2528212 << 10}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	if _, err := parseProcStatus([]byte("VmRSS:\t1 kB\n")); err == nil {
		t.Error("a status without RssAnon was read")
	}
	if _, err := readProcStatus(os.Getpid()); err != nil {
		t.Errorf("reading this process's status: %v", err)
	}
}

func TestScaleTargets(t *testing.T) {
	got := scaleTargets(3, []int{20, 50}, 1)
	if len(got) != 6 {
		t.Fatalf("got %d targets, want 6", len(got))
	}
	want := []string{
		"/articles/?limit=20&offset=0", "/articles/?limit=20&offset=1", "/articles/?limit=20&offset=2",
		"/articles/?limit=50&offset=0", "/articles/?limit=50&offset=1", "/articles/?limit=50&offset=2",
	}
	sorted := slices.Sorted(slices.Values(got))
	if !slices.Equal(sorted, want) {
		t.Errorf("got %q, want every page once", sorted)
	}
	if long := scaleTargets(100, []int{20}, 1); slices.IsSorted(long) || slices.Equal(long, scaleTargets(100, []int{20}, 2)) {
		t.Error("the targets are not shuffled by the seed")
	}
	if e := outputEstimate(10_000, scaleLimits); e < 2e9 || e > 3e9 {
		t.Errorf("estimate %d bytes for the 2.4 GB output", e)
	}
}

// TestNginxWrapper runs the wrapper of a fake nginx that prints its
// limit: the conf is edited to half the limit when the limit could not be
// raised above 40,000, and left as it is otherwise.
func TestNginxWrapper(t *testing.T) {
	dir := t.TempDir()
	fake := filepath.Join(dir, "fake nginx")
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nulimit -n\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "nginx.conf")
	if err := os.WriteFile(conf, []byte("http { open_file_cache max=20000 inactive=60s; }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := nginxWrapper(dir, fake, 65536)
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(script, "-p", dir, "-c", conf).Output()
	if err != nil {
		t.Fatal(err)
	}
	limit := strings.TrimSpace(string(out))
	data, _ := os.ReadFile(conf)
	want := "20000"
	if n, err := strconv.Atoi(limit); err == nil && n/2 < 20000 {
		want = strconv.Itoa(n / 2)
	}
	if m := openFileCacheMax.FindSubmatch(data); m == nil || string(m[1]) != want {
		t.Errorf("limit %s: conf %q, want open_file_cache max=%s", limit, data, want)
	}
	if n, err := processNofile(os.Getpid()); err != nil || n <= 0 {
		t.Errorf("processNofile: %d, %v", n, err)
	}
}
