package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/manifest"
)

// RecordsName is the file, beside a site's config, where feedgen rules
// records each folder it wrote a target's files to, and how (see Record):
// so that feedgen build, after a build, can tell which of them the build
// made stale, and feedgen rules --check can write them again in memory
// with the flags they were written with. It is not in the output folder,
// which is published and served as it is, and it names the machine's
// folders.
const RecordsName = ".feedgen-rules.json"

// Record is how feedgen rules wrote a target's files into a folder.
type Record struct {
	Target string `json:"target"`
	// Out, Root and Config are absolute: the folder written, the build
	// it was written for (--root), and the config of the site.
	Out        string `json:"out"`
	Root       string `json:"root"`
	Config     string `json:"config"`
	Listen     string `json:"listen"`
	Standalone bool   `json:"standalone,omitempty"`
	Cache      string `json:"cache,omitempty"`
	Modules    string `json:"modules,omitempty"`
	// Counts are the count of each of the build's collections (by
	// CollectionName), for a target whose files hold them: what says
	// which counts a later build changed.
	Counts map[string]int `json:"counts,omitempty"`
}

// recordsFile is the content of RecordsName.
type recordsFile struct {
	Rules []Record `json:"rules"`
}

// ReadRecords reads the records of the file name; none when it does not
// exist.
func ReadRecords(name string) ([]Record, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var f recordsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("%s: %w (delete it: feedgen rules writes it again)", name, err)
	}
	return f.Rules, nil
}

// SaveRecord adds r to the records of the file name, in place of one of
// the same folder.
func SaveRecord(name string, r Record) error {
	rs, err := ReadRecords(name)
	if err != nil {
		return err
	}
	rs = slices.DeleteFunc(rs, func(o Record) bool { return o.Out == r.Out })
	rs = append(rs, r)
	slices.SortFunc(rs, func(a, b Record) int { return strings.Compare(a.Out, b.Out) })
	data, err := json.MarshalIndent(recordsFile{Rules: rs}, "", "  ")
	if err != nil {
		return err
	}
	return atomicfile.WriteFile(name, append(data, '\n'), 0o644)
}

// Stale is a file of a target's folder that is not what feedgen rules
// would write now.
type Stale struct {
	File string // its path
	Why  string // what differs, in a line
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
