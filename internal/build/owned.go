package build

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/outfile"
)

// A build deletes only what a build of feedgen wrote in its output
// folder: the pages the folder's manifest lists, the pages an unfinished
// build was about to create (listed in its marker, see outdir.Mark),
// and the temporary files of writes to either. Anything else under
// articles/ is a stray: a file the user, or another tool, put there. A
// build that finds strays refuses to start, naming them, unless it was
// told to delete them (Options.Clean): it never overwrites or deletes a
// file it cannot prove its own.

// owned is what a build found under its output folder's articles/ before
// it changed anything.
type owned struct {
	// files are the files there that a manifest or the marker lists
	// (slash-separated paths relative to the output folder).
	files []string
	// temps are the temporary files of feedgen's writes of those (and of
	// this build's pages), as paths on disk.
	temps []string
	// strays are the other files whose names a build writes (see
	// buildName), and links, which hold no data (paths relative to the
	// output folder): deleted only with Options.Clean.
	strays []string
	// foreign are the files whose names no build writes (a source
	// article, an index.html): never deleted, even with Options.Clean.
	foreign []string
}

// buildName reports whether p (slash-separated, relative to the output
// folder) is the name of a file a build writes under articles/: a page
// (listing.ParsePageKey), a chunk or a collection's index of the chunks
// layout, a collection's reader feed (layout.Built), or the temporary file
// of one of those.
func buildName(p string) bool {
	if t, ok := tempOf(p); ok {
		p = t
	}
	return layout.Built(p)
}

// scanOwned walks outDir/articles and sorts its files by who wrote them:
// a build of feedgen when prev (the folder's manifest) or pending (the
// marker of an unfinished build) lists them, or when they are the
// temporary file of such a page or of one of pages; else no one known.
func scanOwned(ctx context.Context, outDir string, prev *manifest.Manifest, pending []string, pages map[string]bool) (*owned, error) {
	listed := make(map[string]bool, len(pending))
	if prev != nil {
		for _, f := range prev.Files {
			listed[f.Path] = true
		}
	}
	for _, p := range pending {
		listed[p] = true
	}
	// A marker that lists the chunks' folder: any chunk or leaf there may
	// be its build's (see chunks.go).
	anyChunk := listed[chunk.Dir]
	o := &owned{}
	root := filepath.Join(outDir, listing.Dir)
	n := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if n++; n%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) && p == root {
				return nil
			}
			return err
		}
		if d.IsDir() {
			return nil
		}
		rel, err := filepath.Rel(outDir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		switch target, isTemp := tempOf(rel); {
		case listed[rel], anyChunk && layout.Classify(rel).Immutable():
			o.files = append(o.files, rel)
		case isTemp && (listed[target] || pages[target] || anyChunk && layout.Classify(target).Immutable()):
			o.temps = append(o.temps, p)
		case d.Type()&fs.ModeSymlink != 0 || buildName(rel):
			o.strays = append(o.strays, rel)
		default:
			o.foreign = append(o.foreign, rel)
		}
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("reading the output folder: %w", err)
	}
	return o, nil
}

// tempOf returns the file whose temporary file (see atomicfile) rel is:
// DIR/.NAME.PID-N.tmp is that of DIR/NAME.
func tempOf(rel string) (string, bool) {
	dir, base := path.Split(rel)
	rest, ok := strings.CutSuffix(base, ".tmp")
	if !ok || !strings.HasPrefix(rest, ".") {
		return "", false
	}
	dot := strings.LastIndexByte(rest, '.')
	pid, n, ok := strings.Cut(rest[dot+1:], "-")
	if dot <= 1 || !ok || !digits(pid) || !digits(n) {
		return "", false
	}
	return dir + rest[1:dot], true
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	_, err := strconv.ParseUint(s, 10, 64)
	return err == nil
}

// strayError is the refusal of a build whose output folder holds files
// under articles/ that no build of feedgen wrote.
type strayError struct {
	dir    string
	strays []string
	why    string // why the folder's manifest lists none of them
}

// maxStraysNamed is how many strays the error names.
const maxStraysNamed = 10

func (e *strayError) Error() string {
	names := e.strays[:min(len(e.strays), maxStraysNamed)]
	more := ""
	if n := len(e.strays) - len(names); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	what := "a file"
	if len(e.strays) > 1 {
		what = strconv.Itoa(len(e.strays)) + " files"
	}
	return fmt.Sprintf("%s holds %s that no feedgen build wrote (%s): %s%s; a build deletes and overwrites only what it wrote, so it changed nothing: move them out of %s, or pass --clean to delete them",
		filepath.Join(e.dir, listing.Dir), what, e.why, strings.Join(names, ", "), more, filepath.Join(e.dir, listing.Dir))
}

// foreignError is the refusal of a build whose output folder holds files
// under articles/ whose names no build of feedgen writes: with --clean
// too, as a build deletes only what it wrote.
type foreignError struct {
	dir     string
	foreign []string
}

func (e *foreignError) Error() string {
	names := e.foreign[:min(len(e.foreign), maxStraysNamed)]
	more := ""
	if n := len(e.foreign) - len(names); n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	what, them := "a file whose name", "it"
	if len(e.foreign) > 1 {
		what, them = strconv.Itoa(len(e.foreign))+" files whose names", "them"
	}
	arts := filepath.Join(e.dir, listing.Dir)
	return fmt.Sprintf("%s holds %s no feedgen build writes (it writes only pages LIMIT/OFFSET.json and index.json, chunks and chunks.json): %s%s; a build never deletes or overwrites such a file, even with --clean, so it changed nothing: move %s out of %s (is the output folder also a source folder?)",
		arts, what, strings.Join(names, ", "), more, them, arts)
}

// readPending returns the pages that the unfinished build whose marker is
// in dir was to create: none when there is no marker, or one that lists
// none (an older feedgen's). Only paths under articles/ are taken.
func readPending(dir string) []string {
	var out []string
	for _, line := range outdir.Listed(dir) {
		if strings.HasPrefix(line, listing.Dir+"/") && fs.ValidPath(line) {
			out = append(out, line)
		}
	}
	return out
}

// newPages returns the paths of pages that prev does not list, with those
// of pending, sorted and unique: what the marker of a build lists.
func newPages(pages []string, prev *manifest.Manifest, pending []string) []string {
	old := map[string]bool{}
	if prev != nil {
		for _, f := range prev.Files {
			old[f.Path] = true
		}
	}
	out := slices.Clone(pending)
	for _, p := range pages {
		if !old[p] {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return slices.Compact(out)
}

// linkedFolders returns the folders of pages (and theirs, up to
// articles/) that are symbolic links in outDir: a page written there
// would go wherever they point. It stops when ctx is done.
func linkedFolders(ctx context.Context, outDir string, pages []string) ([]string, error) {
	seen := map[string]bool{}
	var links []string
	for i, p := range pages {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for d := path.Dir(p); d != "." && !seen[d]; d = path.Dir(d) {
			seen[d] = true
			if info, err := os.Lstat(filepath.Join(outDir, filepath.FromSlash(d))); err == nil && info.Mode()&fs.ModeSymlink != 0 {
				links = append(links, d)
			}
		}
	}
	slices.Sort(links)
	return links, nil
}
