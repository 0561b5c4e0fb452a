package rules

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/feedgen/feedgen/internal/manifest"
)

// The commands that feedgen's messages give to write a folder of rules
// again, with the flags it was written with, and its paths as the reader
// types them.

// BuildWarnings checks the rules recorded in the file records for the
// build in outDir, whose manifest is m (CheckRecords; changed: the build
// wrote or deleted a file), and returns a warning for each folder the
// build made stale, with the command that writes it again, and for each
// that cannot serve it or is gone. outputDir is the config's output_dir,
// config its --config if given, and workDir the folder the commands are
// run in: their paths are relative to it.
func BuildWarnings(records, outDir string, m *manifest.Manifest, changed bool, outputDir, config, workDir string) ([]string, error) {
	checks, err := CheckRecords(records, outDir, m, changed)
	var warnings []string
	for _, c := range checks {
		r := c.Record
		switch {
		case c.Gone:
			warnings = append(warnings, fmt.Sprintf("forgot the %s rules of %s: the folder is gone", r.Target, relTo(workDir, r.Out)))
		case c.Err != nil:
			warnings = append(warnings, fmt.Sprintf("the %s rules in %s cannot serve this build: %v", r.Target, relTo(workDir, r.Out), c.Err))
		case len(c.Stale) > 0:
			show := shown(r, outputDir, workDir)
			warnings = append(warnings, fmt.Sprintf("the %s rules in %s are stale (%s): run %s%s",
				r.Target, show.Out, c.Stale[0].Why, refreshCommand(show, config), reloadHint(show)))
		}
	}
	return warnings, err
}

// reloadHint says how the platform of r, files written again, takes them
// (Commands): ", then reload nginx: nginx -s reload"; "" when there is
// nothing to say. r's paths are as the reader's commands name them
// (shown).
func reloadHint(r Record) string {
	t, err := Find(r.Target)
	if err != nil {
		return ""
	}
	if next := t.CommandsFor(r.Out, r.Standalone).Next(); next != "" {
		return ", then " + next
	}
	return ""
}

// shown is r with its paths as a command run in dir shows them: relative
// to dir when inside it, and no --dir when it is outputDir, the config's
// output_dir.
func shown(r Record, outputDir, dir string) Record {
	show := r
	show.Out, show.Root = relTo(dir, r.Out), ""
	if abs, err := filepath.Abs(outputDir); err != nil || r.Root != abs {
		show.Root = relTo(dir, r.Root)
	}
	show.Cache, show.Modules = relTo(dir, r.Cache), relTo(dir, r.Modules)
	return show
}

// relTo is p relative to dir when it is inside it, else p.
func relTo(dir, p string) string {
	if r, err := filepath.Rel(dir, p); err == nil && filepath.IsLocal(r) {
		return r
	}
	return p
}

// refreshCommand is the feedgen rules command that writes the files of r
// again: its flags, but those that are the defaults (--dir is left out
// when it is empty, --config when config is).
func refreshCommand(r Record, config string) string {
	args := []string{"feedgen", "rules", r.Target}
	add := func(flag, v string) {
		if v != "" {
			args = append(args, flag, ShellQuote(v))
		}
	}
	add("--config", config)
	add("--dir", r.Root)
	if r.Standalone {
		args = append(args, "--standalone")
	}
	if r.Listen != "80" {
		add("--addr", r.Listen)
	}
	add("--cache", r.Cache)
	add("--modules", r.Modules)
	add("-o", r.Out)
	return strings.Join(args, " ")
}
