package main

import (
	"io"
	"time"

	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/summary"
)

// writeJSON prints v, a command's summary (package summary), as one JSON
// object on a line.
func writeJSON(w io.Writer, v any) error { return summary.Write(w, v) }

// newPublishJSON is summary.Publish.
func newPublishJSON(url string, b *publish.Bucket, dryRun bool, res *publish.Result, err error, d time.Duration) summary.PublishJSON {
	return summary.Publish(url, b, dryRun, res, err, d)
}
