package main

import (
	"io"
	"slices"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
)

func TestParseWrk(t *testing.T) {
	const report = `Running 2s test @ http://127.0.0.1:9998/articles/?limit=7&offset=40
  2 threads and 64 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency     1.06ms    0.86ms  12.26ms   80.52%
    Req/Sec    30.50k     4.26k   36.30k    60.00%
  Latency Distribution
     50%    0.87ms
     75%    1.44ms
     90%    2.08ms
     99%    3.60ms
  121455 requests in 2.00s, 35.68MB read
  Socket errors: connect 0, read 2, write 0, timeout 1
  Non-2xx or 3xx responses: 121455
Requests/sec:  60676.14
Transfer/sec:     17.82MB
`
	got, err := parseWrk(report)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{reqPerSec: 60676.14, p99: 3600 * time.Microsecond, errors: 121458}
	if got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
	for _, tt := range []struct {
		line string
		want time.Duration
	}{
		{"     99%  850.00us\n", 850 * time.Microsecond},
		{"     99%    1.20s\n", 1200 * time.Millisecond},
	} {
		r, err := parseWrk("Requests/sec: 1\n" + tt.line)
		if err != nil || r.p99 != tt.want {
			t.Errorf("%q: got %v, %v; want %v", tt.line, r.p99, err, tt.want)
		}
	}
	if _, err := parseWrk("Requests/sec: 1\n"); err == nil {
		t.Error("a report without latencies was accepted")
	}
}

func TestParseServeFlags(t *testing.T) {
	full := wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 3}
	quick := wrkPlan{duration: 2 * time.Second, warmup: time.Second, threads: 2, connections: 64, rounds: 1}
	tests := []struct {
		args    []string
		want    servePlan
		wantErr bool
	}{
		{nil, servePlan{articles: 10_000, seed: 1, wrkPlan: full, server: serverFeedgen}, false},
		{[]string{"-quick"}, servePlan{articles: 1_000, seed: 1, wrkPlan: quick, quick: true, server: serverFeedgen}, false},
		{[]string{"-quick", "-articles", "500"}, servePlan{articles: 500, seed: 1, wrkPlan: quick, quick: true, server: serverFeedgen}, false},
		{[]string{"-layout", "chunks"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverFeedgen}, false},
		{[]string{"-layout", "pages"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, server: serverFeedgen}, false},
		{[]string{"-layout", "chunk"}, servePlan{}, true},
		{[]string{"-articles", "5"}, servePlan{}, true},
		{[]string{"extra"}, servePlan{}, true},
		{[]string{"-rounds", "0"}, servePlan{}, true},
		// -server nginx-njs implies -layout chunks, and refuses pages.
		{[]string{"-server", "feedgen"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, server: serverFeedgen}, false},
		{[]string{"-server", "feedgen", "-layout", "chunks"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverFeedgen}, false},
		{[]string{"-server", "nginx-njs"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverNJS}, false},
		{[]string{"-server", "nginx-njs", "-quick"}, servePlan{articles: 1_000, seed: 1, wrkPlan: quick, quick: true, chunked: true, server: serverNJS}, false},
		{[]string{"-server", "nginx-njs", "-layout", "chunks"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverNJS}, false},
		{[]string{"-layout", "chunks", "-server", "nginx-njs", "-rounds", "5"}, servePlan{articles: 10_000, seed: 1, wrkPlan: wrkPlan{duration: 10 * time.Second, warmup: 2 * time.Second, threads: 2, connections: 64, rounds: 5}, chunked: true, server: serverNJS}, false},
		{[]string{"-server", "nginx-njs", "-layout", "pages"}, servePlan{}, true},
		{[]string{"-server", "nginx-njs", "-cache"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverNJS, njsCache: true}, false},
		{[]string{"-cache"}, servePlan{}, true},
		{[]string{"-server", "njs"}, servePlan{}, true},
		{[]string{"-server", ""}, servePlan{}, true},
		{[]string{"-server"}, servePlan{}, true},
		{[]string{"-source", "bucket"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, server: serverFeedgen, source: sourceBucket}, false},
		{[]string{"-source", "bucket", "-layout", "chunks", "-cache-size", "1GiB"}, servePlan{articles: 10_000, seed: 1, wrkPlan: full, chunked: true, server: serverFeedgen, source: sourceBucket, cacheSize: "1GiB"}, false},
		{[]string{"-source", "s3"}, servePlan{}, true},
		{[]string{"-source", "bucket", "-server", "nginx-njs"}, servePlan{}, true},
		{[]string{"-cache-size", "1GiB"}, servePlan{}, true},
		{[]string{"-source", "bucket", "-cache-size", "lots"}, servePlan{}, true},
	}
	for _, tt := range tests {
		if tt.want.source == "" {
			tt.want.source = sourceFolder
		}
		if tt.want.cacheSize == "" {
			tt.want.cacheSize = "64MiB"
		}
		got, err := parseServeFlags(tt.args, io.Discard)
		if (err != nil) != tt.wantErr || !tt.wantErr && got != tt.want {
			t.Errorf("%q: got %+v, %v; want %+v, error %v", tt.args, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestPageRanges(t *testing.T) {
	// Three chunks of 3, 2 and 4 articles: 9 in all.
	ix := &chunk.Index{Count: 9, Chunks: []chunk.Ref{
		{Size: 13, Ends: []int{4, 8, 12}},
		{Size: 9, Ends: []int{3, 8}},
		{Size: 21, Ends: []int{5, 10, 15, 20}},
	}}
	tests := []struct {
		off, limit int
		want       []byteRange
	}{
		{0, 2, []byteRange{{0, 1, 8}}},
		{0, 3, []byteRange{{0, 1, 12}}},
		{1, 3, []byteRange{{0, 5, 12}, {1, 1, 3}}},
		{2, 20, []byteRange{{0, 9, 12}, {1, 1, 8}, {2, 1, 20}}},
		{3, 2, []byteRange{{1, 1, 8}}},
		{4, 2, []byteRange{{1, 4, 8}, {2, 1, 5}}},
		{8, 20, []byteRange{{2, 16, 20}}},
		{9, 20, nil},
		{-1, 20, nil},
	}
	for _, tt := range tests {
		if got := pageRanges(ix, tt.off, tt.limit); !slices.Equal(got, tt.want) {
			t.Errorf("offset %d, limit %d: got %v, want %v", tt.off, tt.limit, got, tt.want)
		}
	}
}

func TestMedianResult(t *testing.T) {
	ms := time.Millisecond
	got := medianResult([]wrkResult{{100, 9 * ms, 1}, {300, 1 * ms, 0}, {200, 5 * ms, 2}})
	if want := (wrkResult{reqPerSec: 200, p99: 5 * ms, errors: 3}); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}
