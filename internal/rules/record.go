package rules

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/feedgen/feedgen/internal/atomicfile"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
)

// RecordsName is the file, beside a site's config, where feedgen rules
// records each folder it wrote a target's files to, and how (see Record):
// so that feedgen build, after a build, can tell which of them the build
// made stale, and feedgen rules --check can write them again in memory
// with the flags they were written with. It is not in the output folder,
// which is published and served as it is, and it names the machine's
// folders.
const RecordsName = ".feedgen-rules.json"

// Record is how feedgen rules wrote a target's files into a folder. A
// file keeps one record per folder and target.
type Record struct {
	Target string `json:"target"`
	// Out and Root are the folder written and the build it was written
	// for (--root); Cache and Modules those of --cache and --modules.
	// In memory they are absolute; the file keeps those inside its own
	// folder relative to it, so that a site moved or checked out
	// elsewhere keeps its records.
	Out        string `json:"out"`
	Root       string `json:"root"`
	Listen     string `json:"listen"`
	Standalone bool   `json:"standalone,omitempty"`
	Cache      string `json:"cache,omitempty"`
	Modules    string `json:"modules,omitempty"`
	// Counts are the count of each of the build's collections (by
	// CollectionName), for a target whose files hold them: what says
	// which counts a later build changed.
	Counts map[string]int `json:"counts,omitempty"`
}

// Site is the Site of the build whose manifest is m, for files written as
// r says.
func (r Record) Site(m *manifest.Manifest) (*Site, error) {
	s, err := NewSite(m, r.Root, r.Listen)
	if err != nil {
		return nil, err
	}
	s.Standalone, s.Cache, s.Modules = r.Standalone, r.Cache, r.Modules
	return s, nil
}

// paths are the record's paths, to make relative or absolute.
func (r *Record) paths() []*string { return []*string{&r.Out, &r.Root, &r.Cache, &r.Modules} }

// recordsFile is the content of RecordsName.
type recordsFile struct {
	Rules []Record `json:"rules"`
}

// FindRecord returns the record of target's files in the folder out
// (absolute), if rs has one.
func FindRecord(rs []Record, out, target string) (Record, bool) {
	i := slices.IndexFunc(rs, func(r Record) bool { return r.Out == out && r.Target == target })
	if i < 0 {
		return Record{}, false
	}
	return rs[i], true
}

// ReadRecords reads the records of the file name, with absolute paths;
// none when it does not exist. A file that is not one says where
// (name:line) and that feedgen rules writes it again.
func ReadRecords(name string) ([]Record, error) {
	data, err := os.ReadFile(name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the rules' record: %w", err)
	}
	var f recordsFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, &CorruptRecordsError{name, jsonLine(data, err), err}
	}
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return nil, err
	}
	for i := range f.Rules {
		for _, p := range f.Rules[i].paths() {
			if *p != "" && !filepath.IsAbs(*p) {
				*p = filepath.Join(dir, *p)
			}
		}
	}
	return f.Rules, nil
}

// CorruptRecordsError is a record file that is not one: feedgen rules
// writes it again, without its records.
type CorruptRecordsError struct {
	Name string
	Line int // 0 when not known
	Err  error
}

func (e *CorruptRecordsError) Error() string {
	where := e.Name
	if e.Line > 0 {
		where = fmt.Sprintf("%s:%d", e.Name, e.Line)
	}
	return fmt.Sprintf("%s: not a record of feedgen rules: %v (feedgen rules writes it again, without its records)", where, e.Err)
}

func (e *CorruptRecordsError) Unwrap() error { return e.Err }

// jsonLine is the line of data at which json's err is, 0 when err does
// not say.
func jsonLine(data []byte, err error) int {
	var off int64
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	default:
		return 0
	}
	off = min(off, int64(len(data)))
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// SaveRecord adds r to the records of the file name, in place of the one
// of the same folder and target. A file that is not a record is written
// again with r alone: dropped is what was wrong with it, for the caller
// to say. Two feedgen rules at once each keep their record.
func SaveRecord(name string, r Record) (dropped error, err error) {
	err = updateRecords(name, func(rs []Record, corrupt error) ([]Record, error) {
		dropped = corrupt
		rs = slices.DeleteFunc(rs, func(o Record) bool { return o.Out == r.Out && o.Target == r.Target })
		return append(rs, r), nil
	})
	return dropped, err
}

// updateRecords replaces the records of the file name with what edit
// returns for them, holding the lock of the file's folder from reading to
// writing. edit is given the error of a file that is not a record, and
// none of its records; when it returns that error, the file is left as
// it is.
func updateRecords(name string, edit func(rs []Record, corrupt error) ([]Record, error)) error {
	unlock, err := outdir.Hold(filepath.Dir(name))
	if err != nil {
		return err
	}
	defer unlock()
	rs, err := ReadRecords(name)
	var corrupt *CorruptRecordsError
	switch {
	case errors.As(err, &corrupt):
	case err != nil:
		return err
	}
	var cerr error
	if corrupt != nil {
		cerr = corrupt
	}
	rs, err = edit(rs, cerr)
	if err != nil {
		return err
	}
	return writeRecords(name, rs)
}

// writeRecords writes rs into the file name, in the order of their
// folders, with the paths inside the file's folder relative to it.
func writeRecords(name string, rs []Record) error {
	dir, err := filepath.Abs(filepath.Dir(name))
	if err != nil {
		return err
	}
	out := make([]Record, len(rs))
	for i, r := range rs {
		for _, p := range r.paths() {
			if rel, err := filepath.Rel(dir, *p); err == nil && filepath.IsAbs(*p) && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
				*p = rel
			}
		}
		out[i] = r
	}
	slices.SortFunc(out, func(a, b Record) int {
		if c := strings.Compare(a.Out, b.Out); c != 0 {
			return c
		}
		return strings.Compare(a.Target, b.Target)
	})
	data, err := json.MarshalIndent(recordsFile{Rules: out}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(name, append(data, '\n'), 0o644); err != nil {
		return fmt.Errorf("writing the rules' record: %w", err)
	}
	return nil
}

// RecordCheck is what a build did to the files of a record.
type RecordCheck struct {
	Record Record
	// Stale are the files the build made stale, the first one's Why
	// saying what differs; none when Gone or Err is set.
	Stale []Stale
	// Err is why the files cannot serve the build (ErrChunks: a chunks
	// build for a target that needs page files).
	Err error
	// Gone says the folder is gone: its record was forgotten.
	Gone bool
}

// CheckRecords checks the files of the records in the file name written
// for the build in root (whose manifest is m), and returns those the
// build made stale, or that cannot serve it, and the records of folders
// that are gone, which it forgets. changed says the build wrote or
// deleted a file: a build that did not is checked on its counts alone
// (the files were written from the same build or were already stale, so
// only a hand edit, which --check finds, could make them differ), which
// needs no file made.
func CheckRecords(name, root string, m *manifest.Manifest, changed bool) ([]RecordCheck, error) {
	rs, err := ReadRecords(name)
	if err != nil {
		return nil, err
	}
	root, err = filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	var checks []RecordCheck
	gone := map[string]bool{}
	for _, r := range rs {
		if r.Root != root {
			continue // rules for another build
		}
		if _, err := os.Stat(r.Out); errors.Is(err, fs.ErrNotExist) {
			gone[r.Out] = true
			checks = append(checks, RecordCheck{Record: r, Gone: true})
			continue
		}
		t, err := Find(r.Target)
		if err != nil {
			continue // a target this feedgen does not have
		}
		if why := CountsChanged(r.Counts, m.Collections); why != "" && t.HoldsCounts(layout.Of(m.Pagination)) {
			checks = append(checks, RecordCheck{Record: r, Stale: []Stale{{File: filepath.Join(r.Out, t.Files[0]), Why: why}}})
			continue
		}
		if !changed && r.Counts != nil {
			continue
		}
		s, err := r.Site(m)
		if err != nil {
			return nil, err
		}
		stale, err := Check(t, s, r.Out, r.Counts)
		if errors.Is(err, ErrChunks) {
			checks = append(checks, RecordCheck{Record: r, Err: err})
			continue
		}
		if err != nil {
			return nil, err
		}
		if len(stale) > 0 {
			checks = append(checks, RecordCheck{Record: r, Stale: stale})
		}
	}
	if len(gone) > 0 {
		err := updateRecords(name, func(rs []Record, corrupt error) ([]Record, error) {
			if corrupt != nil {
				return nil, corrupt
			}
			return slices.DeleteFunc(rs, func(r Record) bool {
				_, err := os.Stat(r.Out)
				return gone[r.Out] && errors.Is(err, fs.ErrNotExist)
			}), nil
		})
		if err != nil {
			return checks, fmt.Errorf("forgetting the rules of folders that are gone: %w", err)
		}
	}
	return checks, nil
}
