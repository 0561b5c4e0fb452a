package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/manifest"
)

// Stale is a file of a target's folder that is not what feedgen rules
// would write now.
type Stale struct {
	File string `json:"file"` // its path
	Why  string `json:"why"`  // what differs, in a line
}

// Check makes target t's files for s in memory, as Write would write
// them into outDir, and returns those that outDir's differ from. old are
// the counts the files were written for (Record.Counts), if known: they
// say which changed.
func Check(t Target, s *Site, outDir string, old map[string]int) ([]Stale, error) {
	out, _, err := generate(t, s, outDir)
	if err != nil {
		return nil, err
	}
	var stale []Stale
	for _, name := range t.Files {
		p := filepath.Join(outDir, name)
		have, err := os.ReadFile(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			stale = append(stale, Stale{p, "missing"})
		case err != nil:
			return nil, err
		case !bytes.Equal(have, out.Files[name]):
			why := CountsChanged(old, s.Collections)
			if why == "" {
				why = firstDiff(have, out.Files[name])
			}
			stale = append(stale, Stale{p, why})
		}
	}
	return stale, nil
}

// Counts returns the count of each collection, by CollectionName.
func Counts(cs []manifest.Collection) map[string]int {
	counts := make(map[string]int, len(cs))
	for _, c := range cs {
		counts[CollectionName(c)] = c.Count
	}
	return counts
}

// CountsChanged says, in a line, how the collections of a build (now)
// differ from the counts of an earlier one (old): the counts that
// changed, the filter values that are new or gone, the first three of
// each; "" when they do not differ or old is not known.
func CountsChanged(old map[string]int, now []manifest.Collection) string {
	if old == nil {
		return ""
	}
	counts := maps.Clone(old)
	var changed, added []string
	for _, c := range now {
		name := CollectionName(c)
		n, ok := counts[name]
		switch {
		case !ok:
			added = append(added, name)
		case n != c.Count:
			changed = append(changed, fmt.Sprintf("%s %d, now %d", name, n, c.Count))
		}
		delete(counts, name)
	}
	var gone []string
	for name := range counts {
		gone = append(gone, name)
	}
	slices.Sort(gone)
	var parts []string
	for _, p := range []struct {
		what  string
		names []string
	}{{"counts of ", changed}, {"new ", added}, {"gone ", gone}} {
		if len(p.names) == 0 {
			continue
		}
		s := p.what + strings.Join(p.names[:min(3, len(p.names))], "; ")
		if len(p.names) > 3 {
			s += fmt.Sprintf(" and %d more", len(p.names)-3)
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// CollectionName names a collection by its query: "/articles/" or
// "?section=news&category=politics".
func CollectionName(c manifest.Collection) string {
	if len(c.Params) == 0 {
		return "/articles/"
	}
	var b strings.Builder
	for i, p := range c.Params {
		if i == 0 {
			b.WriteByte('?')
		} else {
			b.WriteByte('&')
		}
		b.WriteString(p.Key + "=" + p.Value)
	}
	return b.String()
}

// firstDiff says where have first differs from want, by line.
func firstDiff(have, want []byte) string {
	hl, wl := bytes.Split(have, []byte("\n")), bytes.Split(want, []byte("\n"))
	for i := range max(len(hl), len(wl)) {
		if i >= len(hl) || i >= len(wl) || !bytes.Equal(hl[i], wl[i]) {
			line := ""
			if i < len(wl) {
				line = string(wl[i])
			}
			return fmt.Sprintf("line %d differs: now %.80q", i+1, line)
		}
	}
	return "differs"
}
