package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/publish"
	"github.com/feedgen/feedgen/internal/rules"
)

// The summaries that build, bundle, verify, publish and rules --check
// print with --json, for scripts and CI: one JSON object on one line of
// stdout, written once at the end through writeJSON, in place of the
// summary line; warnings and errors still go to stderr, and the exit code
// is the same as without --json. docs/configuration.md#building lists them.

// writeJSON prints v, a command's summary, as one JSON object on a line
// (a URL's & as it is, not \u0026).
func writeJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(b.Bytes())
	return err
}

// seconds is d as the summaries give durations.
func seconds(d time.Duration) float64 { return d.Round(time.Millisecond).Seconds() }

// bundleJSON is the summary of feedgen bundle --json: ok, with what the
// bundle holds, or not ok, with the error (also on stderr), as verify's.
type bundleJSON struct {
	File      string  `json:"file"`
	OK        bool    `json:"ok"`
	Error     string  `json:"error,omitempty"`
	BuildTime string  `json:"build_time,omitempty"`
	Articles  int     `json:"articles"`
	Pages     int     `json:"pages"`
	Bytes     int64   `json:"bytes"` // the build's pages
	Size      int64   `json:"size"`  // the archive
	Seconds   float64 `json:"seconds"`
}

func newBundleJSON(file string, res *bundle.Result, err error, d time.Duration) bundleJSON {
	if err != nil {
		return bundleJSON{File: file, Error: err.Error(), Seconds: seconds(d)}
	}
	return bundleJSON{File: file, OK: true, BuildTime: res.Info.BuildTime.Format(time.RFC3339), Articles: res.Info.Articles,
		Pages: res.Pages, Bytes: res.Info.Bytes, Size: res.Size, Seconds: seconds(d)}
}

// verifyJSON is the summary of feedgen verify --json: ok, with what the
// bundle holds, or not ok, with the error and the problems (as on stderr).
type verifyJSON struct {
	File      string   `json:"file"`
	OK        bool     `json:"ok"`
	Error     string   `json:"error,omitempty"`
	Problems  []string `json:"problems,omitempty"` // as on stderr, the cause first
	BuildTime string   `json:"build_time,omitempty"`
	Articles  int      `json:"articles"`
	Pages     int      `json:"pages"`
	Bytes     int64    `json:"bytes"`
	Size      int64    `json:"size"`
	Seconds   float64  `json:"seconds"`
}

func newVerifyJSON(file string, b *bundle.Bundle, err error, d time.Duration) verifyJSON {
	if err != nil {
		j := verifyJSON{File: file, Error: err.Error(), Seconds: seconds(d)}
		if bp := (*bundleProblems)(nil); errors.As(err, &bp) {
			j.Problems = bp.lines
		}
		return j
	}
	return verifyJSON{File: file, OK: true, BuildTime: b.Info.BuildTime.Format(time.RFC3339), Articles: b.Info.Articles,
		Pages: len(b.Manifest.Files), Bytes: b.Info.Bytes, Size: b.Size, Seconds: seconds(d)}
}

// publishJSON is the summary of feedgen publish --json: where it
// published, as the URL resolves (the bucket, the container of azblob://
// or the folder of file://, and the folder of the feed in it), and what
// it did; ok false with the error on a failure, the counts then what was
// done before it.
type publishJSON struct {
	URL           string  `json:"url"`
	Scheme        string  `json:"scheme"`
	Bucket        string  `json:"bucket"`
	Prefix        string  `json:"prefix"`
	OK            bool    `json:"ok"`
	Error         string  `json:"error,omitempty"`
	DryRun        bool    `json:"dry_run"`
	Uploaded      int     `json:"uploaded"`
	UploadedBytes int64   `json:"uploaded_bytes"`
	Unchanged     int     `json:"unchanged"`
	Deleted       int     `json:"deleted"`
	Kept          int     `json:"kept"`
	Seconds       float64 `json:"seconds"`
}

func newPublishJSON(url string, b *publish.Bucket, dryRun bool, res *publish.Result, err error, d time.Duration) publishJSON {
	j := publishJSON{URL: url, OK: err == nil, DryRun: dryRun, Seconds: seconds(d)}
	if b != nil { // nil: the URL was refused
		j.Scheme, j.Bucket, j.Prefix = b.Scheme, b.Name, b.Prefix
	}
	switch {
	case errors.Is(err, context.Canceled):
		j.Error = "interrupted" // as the text says it
	case err != nil:
		j.Error = err.Error()
	}
	if res != nil {
		j.Uploaded, j.UploadedBytes, j.Unchanged, j.Deleted, j.Kept = res.Uploaded, res.UploadedBytes, res.Unchanged, res.Deleted, res.Kept
	}
	return j
}

// rulesCheckJSON is the summary of feedgen rules --check --json: up to
// date, or the stale files, what differs in each, and the command that
// writes them again (when the record says with which flags).
type rulesCheckJSON struct {
	Target   string      `json:"target"`
	Output   string      `json:"output"`
	UpToDate bool        `json:"up_to_date"`
	Recorded bool        `json:"recorded"`
	Stale    []staleJSON `json:"stale"`
	Command  string      `json:"command,omitempty"`
}

type staleJSON struct {
	File string `json:"file"`
	Why  string `json:"why"`
}

func newRulesCheckJSON(target, out string, stale []rules.Stale, recorded bool, command string) rulesCheckJSON {
	s := rulesCheckJSON{Target: target, Output: out, UpToDate: len(stale) == 0, Recorded: recorded, Stale: []staleJSON{}}
	for _, f := range stale {
		s.Stale = append(s.Stale, staleJSON{File: f.File, Why: f.Why})
	}
	if len(stale) > 0 && recorded {
		s.Command = command
	}
	return s
}
