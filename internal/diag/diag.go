// Package diag holds the diagnostics that feedgen reports about its input:
// one problem each, named by file and line, in the form "path:line: message".
package diag

import (
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/human"
)

// A Diagnostic is one problem found in an input file.
type Diagnostic struct {
	Path string // file path as the user knows it, e.g. "content/news/a.md"
	Line int    // 1-based line number; 0 when unknown
	Msg  string // lowercase, no final period
}

func (d Diagnostic) String() string {
	var b strings.Builder
	b.WriteString(d.Path)
	if d.Line > 0 {
		b.WriteByte(':')
		b.WriteString(strconv.Itoa(d.Line))
	}
	if d.Path != "" {
		b.WriteString(": ")
	}
	b.WriteString(d.Msg)
	return b.String()
}

// List is a set of diagnostics. A non-empty List is an error: every problem
// found in one run, one per line.
type List []Diagnostic

func (l List) Error() string {
	lines := make([]string, len(l))
	for i, d := range l {
		lines[i] = d.String()
	}
	return strings.Join(lines, "\n")
}

// Print writes l to w, one diagnostic a line, then the line summary with
// its %s replaced by their count, "1 error" or "3 errors": summary says
// what became of the run, as in "feedgen: %s, nothing written". It
// returns the first error of w.
func (l List) Print(w io.Writer, summary string) error {
	for _, d := range l {
		if _, err := fmt.Fprintln(w, d); err != nil {
			return err
		}
	}
	_, err := fmt.Fprintf(w, summary+"\n", human.Plural(len(l), "error"))
	return err
}

// Add appends a diagnostic.
func (l *List) Add(path string, line int, msg string) {
	*l = append(*l, Diagnostic{Path: path, Line: line, Msg: msg})
}

// Sort orders the list by path, then line, so that reports are stable
// whatever order the files were read in.
func (l List) Sort() {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].Path != l[j].Path {
			return l[i].Path < l[j].Path
		}
		return l[i].Line < l[j].Line
	})
}

// Err returns l as an error, or nil when it is empty.
func (l List) Err() error {
	if len(l) == 0 {
		return nil
	}
	return l
}
