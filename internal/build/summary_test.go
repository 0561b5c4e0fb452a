package build

import (
	"testing"
	"time"
)

// TestSummary checks the one-line report of a build: every count with
// its noun in agreement ("1 article", "1 page", "1 draft").
func TestSummary(t *testing.T) {
	tests := []struct {
		res  Result
		want string
	}{
		{Result{OutDir: "public", Articles: 1, Pages: 1, Written: 1, Bytes: 900, Estimate: 900, Duration: time.Millisecond},
			"1 article, 1 page in public/articles: 1 written, 0 unchanged, 0 deleted, 900 B (estimated 900 B), 1ms"},
		{Result{OutDir: "public", Articles: 2, Drafts: 1, Scheduled: 1, Pages: 3, Unchanged: 3, Bytes: 900, Estimate: 900, Duration: time.Millisecond},
			"2 articles (1 draft, 1 scheduled left out), 3 pages in public/articles: 0 written, 3 unchanged, 0 deleted, 900 B (estimated 900 B), 1ms"},
		{Result{OutDir: "public", Articles: 1, Chunked: true, Chunks: 1, Pages: 2, Written: 2, Bytes: 900, Estimate: 900, Duration: time.Millisecond},
			"1 article, 1 chunk and 1 index in public/articles: 2 written, 0 unchanged, 0 deleted, 900 B (estimated 900 B), 1ms"},
	}
	for _, tt := range tests {
		if got := tt.res.Summary(); got != tt.want {
			t.Errorf("got  %s\nwant %s", got, tt.want)
		}
	}
}
