package main

import (
	"io"

	"github.com/feedgen/feedgen/internal/progress"
)

// newProgress returns the bar of the pages written.
func newProgress(w io.Writer) *progress.Bar { return progress.New(w, "writing pages") }

// newProgressOf returns a bar that counts what it says, e.g. "reading
// articles".
func newProgressOf(w io.Writer, what string) *progress.Bar { return progress.New(w, what) }
