package content

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"runtime"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/diag"
)

// Options control which articles are published.
type Options struct {
	// Now is the build time: articles published later are scheduled and
	// left out unless Future is set.
	Now    time.Time
	Future bool
	// Root is how the content folder is named in messages, e.g. "content".
	Root string
	// Changed, when not nil, lists the only files (slash-separated, relative
	// to the content folder) that may have changed since the last Load of a
	// caching Loader: the others are taken from the cache without a stat.
	// A watcher that saw every change can say so; nil checks every file.
	Changed []string
}

// Site is the outcome of a load.
type Site struct {
	// Articles are the published articles, in no particular order.
	Articles []*Article
	// Warnings are problems that do not stop a build (unknown keys, ...).
	Warnings diag.List
	// Files is the number of article files read; Drafts and Scheduled
	// count the valid articles left out.
	Files     int
	Drafts    int
	Scheduled int
	// Reparsed is how many files were read and parsed (the rest came from
	// the loader's cache).
	Reparsed int
}

// A Loader loads the articles of one site. It remembers what it parsed, so
// that a later Load re-reads only files whose size or modification time
// changed (watch mode). A Loader is not safe for concurrent use.
type Loader struct {
	cfg   *config.Config
	cache map[string]cached
	// Cache enables the per-file cache; it needs a stat of every file.
	Cache bool
}

type cached struct {
	size    int64
	modTime time.Time
	result  parsed
}

// NewLoader returns a loader for the site configured by cfg.
func NewLoader(cfg *config.Config) *Loader {
	return &Loader{cfg: cfg, cache: map[string]cached{}}
}

// Load reads every article under fsys (the content folder). Errors in
// content are returned together as a diag.List, sorted by path; any other
// error is returned as it is.
func (l *Loader) Load(ctx context.Context, fsys fs.FS, opt Options) (*Site, error) {
	root := opt.Root
	if root == "" {
		root = "content"
	}
	var errs diag.List
	var changed map[string]bool
	if opt.Changed != nil && l.Cache && len(l.cache) > 0 {
		changed = make(map[string]bool, len(opt.Changed))
		for _, c := range opt.Changed {
			changed[c] = true
		}
	}
	files, err := l.list(fsys, root, changed == nil, &errs)
	if err != nil {
		return nil, err
	}
	results := make([]parsed, len(files))
	site := &Site{Files: len(files)}
	var todo []int
	for i, f := range files {
		c, ok := l.cache[f.name]
		switch {
		case !ok || !l.Cache:
		case changed != nil && !changed[f.name]:
			f.size, f.modTime = c.size, c.modTime
			files[i] = f
			results[i] = c.result
			continue
		case changed == nil && c.size == f.size && c.modTime.Equal(f.modTime) && !f.modTime.IsZero():
			results[i] = c.result
			continue
		}
		todo = append(todo, i)
	}
	site.Reparsed = len(todo)
	if err := l.parseAll(ctx, fsys, root, files, todo, results); err != nil {
		return nil, err
	}
	if l.Cache {
		next := make(map[string]cached, len(files))
		for i, f := range files {
			next[f.name] = cached{size: f.size, modTime: f.modTime, result: results[i]}
		}
		l.cache = next
	}

	byID := make(map[int64]*Article, len(files))
	byURL := make(map[string]*Article, len(files))
	all := make([]*Article, 0, len(files))
	for _, r := range results {
		errs = append(errs, r.errs...)
		site.Warnings = append(site.Warnings, r.warnings...)
		a := r.article
		if a == nil {
			continue
		}
		if o, dup := byID[a.ID]; dup {
			errs.Add(a.Path, a.Line, fmt.Sprintf("duplicate id %d: %s:%d has it too; ids must be unique across the site", a.ID, o.Path, o.Line))
			continue
		}
		byID[a.ID] = a
		key := strings.ToLower(a.URL)
		if o, dup := byURL[key]; dup {
			errs.Add(a.Path, 0, fmt.Sprintf("duplicate article URL %s: %s has it too (URLs that differ only in letter case are one page on many hosts); rename one file", a.URL, o.Path))
			continue
		}
		byURL[key] = a
		all = append(all, a)
	}
	if len(errs) > 0 {
		errs.Sort()
		return nil, errs
	}
	site.Warnings.Sort()
	for _, a := range all {
		switch {
		case a.Draft:
			site.Drafts++
		case !opt.Future && a.Instant.After(opt.Now):
			site.Scheduled++
		default:
			site.Articles = append(site.Articles, a)
		}
	}
	return site, nil
}

type file struct {
	name                       string // path in fsys
	section, sectionSlug, slug string
	size                       int64
	modTime                    time.Time
}

// list walks fsys for article files. Files in the wrong place and broken
// links are added to errs.
func (l *Loader) list(fsys fs.FS, root string, stat bool, errs *diag.List) ([]file, error) {
	var files []file
	display := func(p string) string { return path.Join(root, p) }
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == "." {
				return fmt.Errorf("reading content folder %s: %w", root, err)
			}
			errs.Add(display(p), 0, fmt.Sprintf("cannot read: %v", unwrapPath(err)))
			return nil
		}
		if p == "." {
			return nil
		}
		name := d.Name()
		if strings.HasPrefix(name, "_") || strings.HasPrefix(name, ".") {
			if d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		typ := d.Type()
		if typ&fs.ModeSymlink != 0 {
			info, err := fs.Stat(fsys, p)
			switch {
			case errors.Is(err, syscall.ELOOP):
				errs.Add(display(p), 0, "symbolic link loop: the link points back to itself; remove or fix it")
				return nil
			case err != nil:
				errs.Add(display(p), 0, fmt.Sprintf("broken symbolic link: %v", unwrapPath(err)))
				return nil
			case info.IsDir():
				errs.Add(display(p), 0, "symbolic link to a folder: folders are not followed (they can loop); move the folder here or link its files one by one")
				return nil
			}
			typ = info.Mode().Type()
		}
		if d.IsDir() || !strings.HasSuffix(name, ".md") || !typ.IsRegular() {
			return nil
		}
		parts := strings.Split(p, "/")
		if len(parts) != 3 {
			errs.Add(display(p), 0, "article outside a category folder: put it at "+root+"/<section>/<section_slug>/<slug>.md")
			return nil
		}
		f := file{name: p, section: parts[0], sectionSlug: parts[1], slug: strings.TrimSuffix(parts[2], ".md")}
		if l.Cache && stat {
			if info, err := fs.Stat(fsys, p); err == nil {
				f.size, f.modTime = info.Size(), info.ModTime()
			}
		}
		files = append(files, f)
		return nil
	})
	return files, err
}

// parseAll reads and parses files[i] for every i in todo, on all cores.
func (l *Loader) parseAll(ctx context.Context, fsys fs.FS, root string, files []file, todo []int, out []parsed) error {
	workers := min(runtime.GOMAXPROCS(0), max(1, len(todo)/8))
	next := make(chan int)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fp := &fileParser{cfg: l.cfg, md: newMarkdownParser()}
			for i := range next {
				f := files[i]
				p := path.Join(root, f.name)
				data, err := fs.ReadFile(fsys, f.name)
				if err != nil {
					out[i] = parsed{errs: diag.List{{Path: p, Msg: fmt.Sprintf("cannot read: %v", unwrapPath(err))}}}
					continue
				}
				out[i] = fp.parse(p, f.section, f.sectionSlug, f.slug, data)
				if l.Cache && f.modTime.IsZero() {
					// Remember what was read, for a later Load that stats.
					if info, err := fs.Stat(fsys, f.name); err == nil {
						files[i].size, files[i].modTime = info.Size(), info.ModTime()
					}
				}
			}
		}()
	}
	var err error
feed:
	for _, i := range todo {
		select {
		case next <- i:
		case <-ctx.Done():
			err = ctx.Err()
			break feed
		}
	}
	close(next)
	wg.Wait()
	return err
}

// unwrapPath drops the path from a *fs.PathError: messages name the file already.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Sort orders articles as the listing does: newest first, ties by id descending.
func Sort(articles []*Article) {
	sort.Slice(articles, func(i, j int) bool { return Before(articles[i], articles[j]) })
}
