// Package summary holds the summaries that build, bundle, verify and
// publish print with --json, for scripts and CI: one JSON object on one
// line of stdout, written once at the end through Write, in place of the
// summary line; warnings and errors still go to stderr, and the exit code
// is the same as without --json. docs/configuration.md#building lists
// them. (rules --check --json prints rules.CheckReport.)
package summary

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/feedgen/feedgen/internal/build"
	"github.com/feedgen/feedgen/internal/bundle"
	"github.com/feedgen/feedgen/internal/publish"
)

// Write prints v, a command's summary, as one JSON object on a line
// (a URL's & as it is, not \u0026).
func Write(w io.Writer, v any) error {
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

// BundleJSON is the summary of feedgen bundle --json: ok, with what the
// bundle holds, or not ok, with the error (also on stderr), as verify's.
type BundleJSON struct {
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

// Bundle is the summary of a bundle written as res, or not (err), in d.
func Bundle(file string, res *bundle.Result, err error, d time.Duration) BundleJSON {
	if err != nil {
		return BundleJSON{File: file, Error: err.Error(), Seconds: seconds(d)}
	}
	return BundleJSON{File: file, OK: true, BuildTime: res.Info.BuildTime.Format(time.RFC3339), Articles: res.Info.Articles,
		Pages: res.Pages, Bytes: res.Info.Bytes, Size: res.Size, Seconds: seconds(d)}
}

// VerifyJSON is the summary of feedgen verify --json: ok, with what the
// bundle holds, or not ok, with the error and the problems (as on stderr).
type VerifyJSON struct {
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

// Verify is the summary of the bundle b verified in d, or that did not
// verify (err, with the problems printed for it).
func Verify(file string, b *bundle.Bundle, err error, problems []string, d time.Duration) VerifyJSON {
	if err != nil {
		return VerifyJSON{File: file, Error: err.Error(), Problems: problems, Seconds: seconds(d)}
	}
	return VerifyJSON{File: file, OK: true, BuildTime: b.Info.BuildTime.Format(time.RFC3339), Articles: b.Info.Articles,
		Pages: len(b.Manifest.Files), Bytes: b.Info.Bytes, Size: b.Size, Seconds: seconds(d)}
}

// PublishJSON is the summary of feedgen publish --json: where it
// published, as the URL resolves (the bucket, the container of azblob://
// or the folder of file://, and the folder of the feed in it), and what
// it did; ok false with the error on a failure, the counts then what was
// done before it.
type PublishJSON struct {
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

// Publish is the summary of a publish to the bucket b of url (nil: the
// URL was refused), done (res) or not (err) in d.
func Publish(url string, b *publish.Bucket, dryRun bool, res *publish.Result, err error, d time.Duration) PublishJSON {
	j := PublishJSON{URL: url, OK: err == nil, DryRun: dryRun, Seconds: seconds(d)}
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

// BuildJSON is the summary of a build (build --json).
type BuildJSON struct {
	Articles  int     `json:"articles"`
	Drafts    int     `json:"drafts"`
	Scheduled int     `json:"scheduled"`
	Pages     int     `json:"pages"`
	Written   int     `json:"written"`
	Repaired  int     `json:"repaired,omitempty"` // of written
	Unchanged int     `json:"unchanged"`
	Deleted   int     `json:"deleted"`
	Bytes     int64   `json:"bytes"`
	Warnings  int     `json:"warnings"`
	Skipped   bool    `json:"inputs_unchanged"`
	Seconds   float64 `json:"seconds"`
	OutDir    string  `json:"output_dir"`
}

// Build is the summary of the build res.
func Build(res *build.Result) BuildJSON {
	return BuildJSON{
		Articles: res.Articles, Drafts: res.Drafts, Scheduled: res.Scheduled, Pages: res.Pages,
		Written: res.Written, Repaired: res.Repaired, Unchanged: res.Unchanged, Deleted: res.Deleted, Bytes: res.Bytes,
		Warnings: len(res.Warnings), Skipped: res.Skipped, Seconds: seconds(res.Duration), OutDir: res.OutDir,
	}
}
