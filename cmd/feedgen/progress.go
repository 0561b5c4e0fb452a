package main

import (
	"io"

	"github.com/feedgen/feedgen/internal/progress"
)

// newProgress returns the bar of the pages written.
func newProgress(w io.Writer) *progress.Bar { return progress.New(w, "writing pages") }
