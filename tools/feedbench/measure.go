package main

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// measurement is one timed run of a child process.
type measurement struct {
	wall time.Duration
	cpu  time.Duration // user and system time of the child
	rss  int64         // peak resident set size of the child in bytes; 0 if unknown
}

// processError is a child process that failed; its message carries the
// command line and the child's stderr.
type processError struct {
	args   []string
	err    error
	stderr string
}

func (e *processError) Error() string {
	msg := fmt.Sprintf("%s: %v", strings.Join(e.args, " "), e.err)
	if s := strings.TrimSpace(e.stderr); s != "" {
		msg += "\n" + s
	}
	return msg
}

func (e *processError) Unwrap() error { return e.err }

// run runs name with args in dir and measures its wall time (around
// cmd.Run) and peak RSS. A non-zero exit is an error carrying the child's
// stderr (and stdout, which a quiet child leaves empty).
func run(ctx context.Context, dir, name string, args ...string) (measurement, error) {
	m, _, err := runOutput(ctx, dir, name, args...)
	return m, err
}

// runOutput is run that also returns what the child printed on stdout.
func runOutput(ctx context.Context, dir, name string, args ...string) (measurement, string, error) {
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	m, stdout, _, err := runCmd(cmd)
	return m, stdout, err
}

// runCmd runs cmd (made by the caller, with its folder and environment)
// as run does, and returns what it printed on stdout and on stderr.
func runCmd(cmd *exec.Cmd) (measurement, string, string, error) {
	var stdout, stderr bytes.Buffer
	cmd.Stdout = &stdout
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	m := measurement{wall: time.Since(start)}
	if ps := cmd.ProcessState; ps != nil {
		m.rss = peakRSS(ps)
		m.cpu = ps.UserTime() + ps.SystemTime()
	}
	if err != nil {
		out := stderr.String()
		if s := strings.TrimSpace(stdout.String()); s != "" {
			out = s + "\n" + out
		}
		return m, stdout.String(), stderr.String(), &processError{args: cmd.Args, err: err, stderr: out}
	}
	return m, stdout.String(), stderr.String(), nil
}

// syncDisk flushes the file system buffers with the sync command, so that
// writes left by the previous step do not slow down the next timed one.
func syncDisk(ctx context.Context) error {
	if _, err := run(ctx, "", "sync"); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// fileState is what a snapshot records of a file.
type fileState struct {
	size  int64
	mtime time.Time
}

// snapshot records the size and modification time of every file under root,
// by slash-separated path relative to root.
func snapshot(root string) (map[string]fileState, error) {
	files := make(map[string]fileState)
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		files[filepath.ToSlash(rel)] = fileState{size: info.Size(), mtime: info.ModTime()}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("snapshot %s: %w", root, err)
	}
	return files, nil
}

// diff returns the sorted paths that were added, removed, or changed in size
// or modification time between two snapshots.
func diff(before, after map[string]fileState) []string {
	var changed []string
	for p, a := range after {
		if b, ok := before[p]; !ok || b.size != a.size || !b.mtime.Equal(a.mtime) {
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

// treeStats is the size of an output tree.
type treeStats struct {
	files int
	bytes int64
}

// statTree counts the files and bytes under root.
func statTree(root string) (treeStats, error) {
	files, err := snapshot(root)
	if err != nil {
		return treeStats{}, err
	}
	var st treeStats
	for _, f := range files {
		st.files++
		st.bytes += f.size
	}
	return st, nil
}

// median returns the median of ds (the mean of the two middle values for an
// even count), or 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// formatBytes formats n with decimal (SI) units: 999 B, 1.5 kB, 281.3 MB,
// 2.40 GB.
func formatBytes(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprintf("%d B", n)
	case n < 1000*1000:
		return fmt.Sprintf("%.1f kB", float64(n)/1e3)
	case n < 1000*1000*1000:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.2f GB", float64(n)/1e9)
	}
}

// formatSeconds formats d as seconds with millisecond precision: 0.812s.
func formatSeconds(d time.Duration) string {
	return fmt.Sprintf("%.3fs", d.Seconds())
}
