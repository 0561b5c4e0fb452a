package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
)

// targetFilteredPerByte is the most a cold build with filters may cost
// per output byte, as a multiple of the same build without: (f)/(e) and
// (g)/(a), each timed alternately with its twin.
const targetFilteredPerByte = 1.2

// filtered measures a filtered site s: cold builds alternated with cold
// builds of twin, the same site without filters (so that the time per
// output byte of the two is compared under the same load), rebuilds with
// no change, and rebuilds after an edit of one article's body.
func (b *buildBench) filtered(ctx context.Context, label, twinLabel string, s, twin site) error {
	var runs, twinRuns []measurement
	for range b.plan.runs {
		m, err := b.coldBuild(ctx, twinLabel, twin)
		if err != nil {
			return err
		}
		twinRuns = append(twinRuns, m)
		if m, err = b.coldBuild(ctx, label, s); err != nil {
			return err
		}
		runs = append(runs, m)
	}
	st, err := b.checkOutput(label, s)
	if err != nil {
		return err
	}
	twinSt, err := statTree(twin.public())
	if err != nil {
		return err
	}
	cols, err := b.checkCollections(label, s)
	if err != nil {
		return err
	}
	cold, twinCold := median(walls(runs)), median(walls(twinRuns))
	fmt.Fprintf(b.out, "%s %-20s %-42s %s  %s  peak RSS %s\n", label, "cold build", s, timing(runs), st, formatBytes(peak(runs)))
	fmt.Fprintf(b.out, "    %s\n", cols)
	fmt.Fprintf(b.out, "    %s cold build alternated with %s: %s  %s\n", twinLabel, label, timing(twinRuns), twinSt)
	// The target is on the median wall times. The fastest runs, the least
	// disturbed by other processes, and the median CPU times (user and
	// system), which do not count the time spent waiting for a core, are
	// shown for comparison: on a shared machine they vary less.
	per, twinPer := perMB(cold, st.bytes), perMB(twinCold, twinSt.bytes)
	r := perByteRatio(cold, st.bytes, twinCold, twinSt.bytes)
	fastest := perByteRatio(slices.Min(walls(runs)), st.bytes, slices.Min(walls(twinRuns)), twinSt.bytes)
	cpu := perByteRatio(median(cpus(runs)), st.bytes, median(cpus(twinRuns)), twinSt.bytes)
	fmt.Fprintf(b.out, "%s/%s time per output byte = %.2f  (%.2f vs %.2f ms per MB; fastest runs %.2f, CPU time %.2f)   target <= %.1f   %s\n",
		label, twinLabel, r, per, twinPer, fastest, cpu, targetFilteredPerByte, b.verdict(r <= targetFilteredPerByte))

	// Rebuilds with no change, on the tree the last cold build wrote.
	nRuns, changed, err := b.rebuilds(ctx, label, s)
	if err != nil {
		return err
	}
	nr := ratio(median(walls(nRuns)), cold)
	fmt.Fprintf(b.out, "%s %-20s %-42s %s  files changed %d   rebuild/cold = %.2f  target <= %.2f, 0 files changed  %s\n",
		label, "no-change rebuild", "same tree", timing(nRuns), len(changed), nr, targetNoChangeRatio,
		b.verdict(nr <= targetNoChangeRatio && len(changed) == 0))
	b.listPaths("changed", changed)

	return b.oneEdit(ctx, label, s, cold)
}

// perByteRatio returns the time per output byte of d for n bytes over that
// of twin for twinBytes, or +Inf when the second is not positive.
func perByteRatio(d time.Duration, n int64, twin time.Duration, twinBytes int64) float64 {
	per, twinPer := perMB(d, n), perMB(twin, twinBytes)
	if twinPer <= 0 {
		return math.Inf(1)
	}
	return per / twinPer
}

// perMB returns milliseconds per megabyte (10^6 bytes) written, or 0 for
// no bytes.
func perMB(d time.Duration, n int64) float64 {
	if n <= 0 {
		return 0
	}
	return d.Seconds() * 1e3 / (float64(n) / 1e6)
}

// rebuilds runs plan.runs builds of s with no change and returns them with
// the files they added, removed or changed.
func (b *buildBench) rebuilds(ctx context.Context, label string, s site) ([]measurement, []string, error) {
	before, err := snapshot(s.public())
	if err != nil {
		return nil, nil, err
	}
	var ms []measurement
	for range b.plan.runs {
		if err := syncDisk(ctx); err != nil {
			return nil, nil, err
		}
		m, err := b.build(ctx, label, s)
		if err != nil {
			return nil, nil, err
		}
		ms = append(ms, m)
	}
	after, err := snapshot(s.public())
	if err != nil {
		return nil, nil, err
	}
	return ms, diff(before, after), nil
}

// listPaths prints the first paths of a list that should have been empty.
func (b *buildBench) listPaths(what string, paths []string) {
	if len(paths) == 0 {
		return
	}
	const show = 5
	list := strings.Join(paths[:min(show, len(paths))], ", ")
	if len(paths) > show {
		list += ", ..."
	}
	fmt.Fprintf(b.out, "    %s: %s\n", what, list)
}

// manifestCollections is what the bench reads of a build's manifest.json.
type manifestCollections struct {
	Collections []struct {
		Dir    string `json:"dir"`
		Params []struct {
			Key   string `json:"key"`
			Value string `json:"value"`
		} `json:"params"`
		Count int `json:"count"`
	} `json:"collections"`
}

// checkCollections reads the collections of the manifest of s's output,
// warns when a filter of s has none or when the number of pages on disk is
// not the one the collections' counts and the pagination give, and returns a
// line with the number of collections of each filter.
func (b *buildBench) checkCollections(label string, s site) (string, error) {
	data, err := os.ReadFile(filepath.Join(s.public(), "manifest.json"))
	if err != nil {
		return "", fmt.Errorf("%s: %w", label, err)
	}
	var m manifestCollections
	if err := json.Unmarshal(data, &m); err != nil {
		return "", fmt.Errorf("%s: manifest.json: %w", label, err)
	}
	kinds := make(map[string]int)
	want := 0
	for _, c := range m.Collections {
		if len(c.Params) == 0 {
			want++ // index.json, of the main listing only: the index page of a collection is its page (default limit, 0)
		}
		for _, limit := range s.opt.Limits {
			want += expectedPages(c.Count, limit, s.opt.Offsets)
		}
		// A category collection is filtered by section too.
		kind := ""
		for _, p := range c.Params {
			if kind == "" || p.Key == "category" {
				kind = p.Key
			}
		}
		if kind != "" {
			kinds[kind]++
		}
	}
	var parts []string
	for _, f := range s.opt.Filters {
		parts = append(parts, fmt.Sprintf("%s %d", f, kinds[f]))
		if kinds[f] == 0 {
			fmt.Fprintf(b.out, "warning: %s the manifest has no collection of filter %s\n", label, f)
		}
	}
	pages := 0
	err = filepath.WalkDir(filepath.Join(s.public(), "articles"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.HasSuffix(p, ".json") {
			pages++
		}
		return err
	})
	if err != nil {
		return "", fmt.Errorf("%s count pages: %w", label, err)
	}
	if pages != want {
		fmt.Fprintf(b.out, "warning: %s public/articles holds %d pages, want %d for the %d collections of the manifest\n", label, pages, want, len(m.Collections))
	}
	return fmt.Sprintf("collections: %s; %d pages", strings.Join(parts, ", "), pages), nil
}

// editTarget is the article that the one-edit rebuilds change.
type editTarget struct {
	path   string // slash-separated, relative to the site folder
	data   []byte // as generated
	body   int    // offset in data of the body's first paragraph
	id     int
	tags   int
	author string
}

func (t editTarget) String() string {
	return fmt.Sprintf("article %d: %d tags, author %s", t.id, t.tags, t.author)
}

// pickEditTarget returns the first article of s with at least 3 tags, an
// author key and no announcement (else the one of those with the most
// tags). Without an announcement the listing shows the body's first
// paragraph, so that an edit of the body changes every page that holds the
// article, in the main listing and in each of its collections.
func pickEditTarget(s site) (editTarget, error) {
	var best editTarget
	for i := range s.opt.Articles {
		p, data := corpus.Article(s.opt, i)
		t, ok := readEditTarget(p, data)
		if ok && t.tags > best.tags {
			best = t
			if t.tags >= 3 {
				break
			}
		}
	}
	if best.path == "" {
		return editTarget{}, fmt.Errorf("no article of %s has tags, an author key and no announcement", s)
	}
	return best, nil
}

// readEditTarget reads the front matter of a generated article; ok is
// false when the article has no tags, no author key or an announcement.
func readEditTarget(p string, data []byte) (t editTarget, ok bool) {
	rest, found := bytes.CutPrefix(data, []byte("---\n"))
	if !found {
		return t, false
	}
	fm, _, found := bytes.Cut(rest, []byte("\n---\n"))
	if !found {
		return t, false
	}
	t.path, t.data = p, data
	t.body = len("---\n") + len(fm) + len("\n---\n")
	for t.body < len(data) && data[t.body] == '\n' {
		t.body++
	}
	for line := range strings.Lines(string(fm)) {
		line = strings.TrimSuffix(line, "\n")
		switch key, value, _ := strings.Cut(line, ": "); {
		case key == "announcement":
			return t, false
		case key == "id":
			t.id, _ = strconv.Atoi(value)
		case key == "author":
			t.author = value
		case strings.HasPrefix(line, "  - "):
			t.tags++
		}
	}
	return t, t.id > 0 && t.tags > 0 && t.author != "" && t.body < len(data)
}

// edited returns the article with "Edited k. " before its first
// paragraph.
func (t editTarget) edited(k int) []byte {
	out := slices.Clip(t.data[:t.body])
	out = fmt.Appendf(out, "Edited %d. ", k)
	return append(out, t.data[t.body:]...)
}

// oneEdit times plan.runs rebuilds of s, each after an edit of the body
// of one article, and checks that each rewrote exactly the pages that hold
// it: the pages it wrote (their size or modification time changed), the
// pages whose bytes changed and the pages that held the article before the
// edit must be the same.
func (b *buildBench) oneEdit(ctx context.Context, label string, s site, cold time.Duration) error {
	t, err := pickEditTarget(s)
	if err != nil {
		return fmt.Errorf("%s: %w", label, err)
	}
	file := filepath.Join(s.dir, filepath.FromSlash(t.path))
	needle := fmt.Appendf(nil, `{"id":%d,`, t.id)
	before, err := scanPages(s.public(), needle)
	if err != nil {
		return err
	}
	var ms []measurement
	var written, others, changed, holding []string
	ok := true
	for k := range b.plan.runs {
		state, err := snapshot(s.public())
		if err != nil {
			return err
		}
		if err := os.WriteFile(file, t.edited(k+1), 0o644); err != nil {
			return fmt.Errorf("%s edit: %w", label, err)
		}
		if err := syncDisk(ctx); err != nil {
			return err
		}
		m, err := b.build(ctx, label, s)
		if err != nil {
			return err
		}
		ms = append(ms, m)
		after, err := scanPages(s.public(), needle)
		if err != nil {
			return err
		}
		newState, err := snapshot(s.public())
		if err != nil {
			return err
		}
		written, others = nil, nil
		for _, p := range diff(state, newState) {
			if strings.HasPrefix(p, "articles/") {
				written = append(written, p)
			} else {
				others = append(others, p)
			}
		}
		changed, holding = changedPages(before.sums, after.sums), before.holding
		ok = ok && len(holding) > 0 && slices.Equal(written, changed) && slices.Equal(changed, holding)
		before = after
	}
	er := ratio(median(walls(ms)), cold)
	fmt.Fprintf(b.out, "%s %-20s %-42s %s  edit/cold = %.2f  pages written %d, changed %d, holding it %d; other files written %d   target written = changed = holding  %s\n",
		label, "one-edit rebuild", t, timing(ms), er, len(written), len(changed), len(holding), len(others), b.verdict(ok))
	b.listPaths("written, not changed", without(written, changed))
	b.listPaths("changed, not written", without(changed, written))
	b.listPaths("holding it, not changed", without(holding, changed))
	b.listPaths("changed, not holding it", without(changed, holding))
	return nil
}

// pageScan is what scanPages reads of the pages of an output tree.
type pageScan struct {
	sums    map[string][sha256.Size]byte // by slash-separated path relative to the output folder
	holding []string                     // sorted paths of the pages that hold the needle
}

// scanPages reads every file under public/articles: its SHA-256, and
// whether it holds needle. The bench computes both itself, from the bytes,
// so that its check does not depend on what the build reports or records
// in its manifest.
func scanPages(public string, needle []byte) (pageScan, error) {
	var paths []string
	err := filepath.WalkDir(filepath.Join(public, "articles"), func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			paths = append(paths, p)
		}
		return err
	})
	if err != nil {
		return pageScan{}, fmt.Errorf("scan %s: %w", public, err)
	}
	type result struct {
		sum  [sha256.Size]byte
		hold bool
		err  error
	}
	results := make([]result, len(paths))
	var wg sync.WaitGroup
	workers := runtime.GOMAXPROCS(0)
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(paths); i += workers {
				data, err := os.ReadFile(paths[i])
				results[i] = result{sha256.Sum256(data), bytes.Contains(data, needle), err}
			}
		})
	}
	wg.Wait()
	sc := pageScan{sums: make(map[string][sha256.Size]byte, len(paths))}
	var errs []error
	for i, p := range paths {
		r := results[i]
		if r.err != nil {
			errs = append(errs, r.err)
			continue
		}
		rel, err := filepath.Rel(public, p)
		if err != nil {
			return pageScan{}, err
		}
		rel = filepath.ToSlash(rel)
		sc.sums[rel] = r.sum
		if r.hold {
			sc.holding = append(sc.holding, rel)
		}
	}
	if len(errs) > 0 {
		return pageScan{}, fmt.Errorf("scan %s: %w", public, errors.Join(errs...))
	}
	slices.Sort(sc.holding)
	return sc, nil
}

// changedPages returns the sorted paths that were added, removed, or whose
// bytes changed between two scans.
func changedPages(before, after map[string][sha256.Size]byte) []string {
	var changed []string
	for p, a := range after {
		if b, ok := before[p]; !ok || a != b {
			changed = append(changed, p)
		}
	}
	for p := range before {
		if _, ok := after[p]; !ok {
			changed = append(changed, p)
		}
	}
	slices.Sort(changed)
	return changed
}

// without returns the elements of the sorted list a that are not in the
// sorted list b.
func without(a, b []string) []string {
	var out []string
	for _, s := range a {
		if _, found := slices.BinarySearch(b, s); !found {
			out = append(out, s)
		}
	}
	return out
}
