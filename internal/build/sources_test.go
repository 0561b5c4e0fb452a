package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// sourcesBuilder returns a builder of one build that bounds its memory
// (feedgen build, which keeps the cache of its sources) of the site in
// dir into out, whose file system's clock is an hour ahead: every file
// was changed long enough before the build for its stamp to be recorded
// (see content's stampSlack).
func sourcesBuilder(dir, out string, now time.Time) *Builder {
	b := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, OutDir: out, Now: func() time.Time { return now }, Generator: "feedgen test", Code: testCode})
	b.once = true
	b.fileClock = func() time.Time { return time.Now().Add(time.Hour) }
	return b
}

// coldBuild returns the files of a build of dir with --clean into an
// empty folder: what an incremental build must have written.
func coldBuild(t *testing.T, dir string, now time.Time) snapshot {
	t.Helper()
	out := t.TempDir()
	b := sourcesBuilder(dir, out, now)
	b.opt.Clean = true
	res, err := b.Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Reparsed != res.Read || res.Read == 0 {
		t.Fatalf("clean build: read %d files, parsed %d; want all parsed", res.Read, res.Reparsed)
	}
	return snap(t, out)
}

// writeCorpus writes the files of a corpus into a new folder.
func writeCorpus(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for p, data := range files {
		testfiles.WriteFile(t, filepath.Join(dir, filepath.FromSlash(p)), string(data))
	}
	return dir
}

// corpusArticle returns the path (under dir) and bytes of article i of
// the corpus of opt.
func corpusArticle(dir string, opt corpus.Options, i int) (string, []byte) {
	p, data := corpus.Article(opt, i)
	return filepath.Join(dir, filepath.FromSlash(p)), data
}

// TestSourcesIncremental checks what a rebuild reads and parses with the
// cache of sources the build before it kept: after one new, edited,
// removed or renamed article, only that article's file (a removed one:
// none), in either layout and in a site whose values are hard to carry
// (the hard corpus: drafts, scheduled articles, ids past 2^53, tied
// times); and that it writes a clean build's bytes, each one after the
// other (the store of the articles' JSON appended to, in the chunks
// layout, or written anew).
func TestSourcesIncremental(t *testing.T) {
	// Every filter, for what the cache keeps of an article (tags, the
	// author's key); a tag's collection is small, and its chunks many.
	sites := []struct {
		name  string
		opt   corpus.Options
		files func(corpus.Options) map[string][]byte
		now   time.Time
	}{
		{"chunks", corpus.Options{Articles: 400, Layout: "chunks", Limits: []int{20, 50}, Filters: []string{"section", "category", "author"}}, corpus.Files, buildTime},
		{"pages", corpus.Options{Articles: 100, Limits: []int{20}, Offsets: "aligned", Filters: []string{"tag", "author"}}, corpus.Files, buildTime},
		{"hard", corpus.Options{Articles: 100, Limits: []int{10}, Offsets: "aligned"}, corpus.HardFiles, corpus.HardNow},
	}
	for _, s := range sites {
		t.Run(s.name, func(t *testing.T) {
			t.Parallel()
			dir := writeCorpus(t, s.files(s.opt))
			out := filepath.Join(dir, "public")
			n := s.opt.Articles
			first, err := sourcesBuilder(dir, out, s.now).Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if first.Read != n || first.Reparsed != n {
				t.Fatalf("first build: read %d files, parsed %d; want %d, %d", first.Read, first.Reparsed, n, n)
			}
			hard := s.name == "hard"
			var paths []string // of the hard corpus, sorted
			for p := range s.files(s.opt) {
				if p != corpus.ConfigPath {
					paths = append(paths, p)
				}
			}
			slices.Sort(paths)
			// file returns the path and bytes of article i as written.
			file := func(i int) (string, []byte) {
				if !hard {
					return corpusArticle(dir, s.opt, i)
				}
				return filepath.Join(dir, filepath.FromSlash(paths[i])), s.files(s.opt)[paths[i]]
			}
			steps := []struct {
				name       string
				edit       func(t *testing.T)
				read, pars int
			}{
				{"nothing changed", func(*testing.T) {}, 0, 0},
				{"an article added", func(t *testing.T) {
					p, data := corpusArticle(dir, s.opt, n)
					if hard {
						p, data = file(7)
						id := regexp.MustCompile(`(?m)^id: .*$`)
						data = id.ReplaceAll(data, []byte("id: 4242424242"))
						p = filepath.Join(filepath.Dir(p), "added.md")
					}
					testfiles.WriteFile(t, p, string(data))
				}, 1, 1},
				{"an article edited", func(t *testing.T) {
					p, data := file(3)
					testfiles.WriteFile(t, p, strings.Replace(string(data), "\ntitle: ", "\ntitle: Edited ", 1))
				}, 1, 1},
				{"an article removed", func(t *testing.T) {
					p, _ := file(5)
					if err := os.Remove(p); err != nil {
						t.Fatal(err)
					}
				}, 0, 0},
				{"an article renamed", func(t *testing.T) {
					p, _ := file(11)
					if err := os.Rename(p, strings.TrimSuffix(p, ".md")+"-renamed.md"); err != nil {
						t.Fatal(err)
					}
				}, 1, 1},
			}
			for _, st := range steps {
				t.Run(st.name, func(t *testing.T) {
					st.edit(t)
					res, err := sourcesBuilder(dir, out, s.now).Build(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if res.Read != st.read || res.Reparsed != st.pars {
						t.Errorf("read %d files, parsed %d; want %d, %d", res.Read, res.Reparsed, st.read, st.pars)
					}
					// A build with warnings records no source: nothing to skip by.
					if skip := st.name == "nothing changed" && len(first.Warnings) == 0; res.Skipped != skip {
						t.Errorf("skipped %v, want %v", res.Skipped, skip)
					}
					identical(t, snap(t, out), coldBuild(t, dir, s.now))
				})
			}
		})
	}
}

// sourcesSite writes a site of the chunks layout with filters, of n
// articles, builds it (keeping the cache of its sources) and returns its
// folder, its output folder and the corpus's options.
func sourcesSite(t *testing.T, n int, layout string) (dir, out string, opt corpus.Options) {
	t.Helper()
	opt = corpus.Options{Articles: n, Layout: layout, Limits: []int{20}, Filters: []string{"author"}}
	if layout == "pages" {
		opt.Layout, opt.Offsets = "", "aligned"
	}
	dir = writeCorpus(t, corpus.Files(opt))
	out = filepath.Join(dir, "public")
	if _, err := sourcesBuilder(dir, out, buildTime).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return dir, out, opt
}

// TestSourcesDamaged changes the cache of sources, or the store of the
// articles' JSON, as a hand, a bad disk or another feedgen could, then
// adds an article and builds: the build must believe none of what
// changed (reading and parsing the files from there on, and says so),
// and write what a clean build writes.
func TestSourcesDamaged(t *testing.T) {
	const n = 100
	tests := []struct {
		name   string
		layout string
		file   string // the file changed
		change func(data []byte) []byte
		parsed int    // files parsed, at least (n+1: every one)
		warn   string // the start of the warning, after "warning: "
	}{
		{"missing", "chunks", sourcesName, func([]byte) []byte { return nil }, n + 1, ""},
		{"another version", "chunks", sourcesName, func(data []byte) []byte {
			return bytes.Replace(data, []byte("feedgen sources 1\n"), []byte("feedgen sources 9\n"), 1)
		}, n + 1, ""},
		{"a byte of the key", "chunks", sourcesName, func(data []byte) []byte {
			data[len("feedgen sources 1\n")] ^= 1
			return data
		}, n + 1, ""},
		{"cut short", "chunks", sourcesName, func(data []byte) []byte { return data[:len(data)/2] },
			n/3 + 1, filepath.Join("public", sourcesName) + ": cut short after "},
		{"a byte of a record", "chunks", sourcesName, func(data []byte) []byte {
			data[len(data)/2] ^= 0x20
			return data
		}, n/3 + 1, filepath.Join("public", sourcesName) + ": record "},
		{"its end", "chunks", sourcesName, func(data []byte) []byte {
			data[len(data)-5]++ // the number of records
			return data
		}, 1, filepath.Join("public", sourcesName) + ": its end does not match its "},
		{"the store missing", "chunks", encodedName, func([]byte) []byte { return nil }, n + 1, ""},
		{"the store cut short", "chunks", encodedName, func(data []byte) []byte { return data[:len(data)-1] }, n + 1, ""},
		{"the store's JSON", "chunks", encodedName, func(data []byte) []byte {
			return append(data[:len("feedgen encoded 1\n")+16], bytes.ReplaceAll(data[len("feedgen encoded 1\n")+16:], []byte(`"`), []byte(`'`))...)
		}, n + 1, filepath.Join("public", encodedName) + ": the JSON kept of content/"},
		{"the store's JSON, pages", "pages", encodedName, func(data []byte) []byte {
			return append(data[:len("feedgen encoded 1\n")+16], bytes.ReplaceAll(data[len("feedgen encoded 1\n")+16:], []byte(`"`), []byte(`'`))...)
		}, n + 1, filepath.Join("public", encodedName) + ": the JSON kept of content/"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, out, opt := sourcesSite(t, n, tt.layout)
			name := filepath.Join(out, tt.file)
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if data = tt.change(data); data == nil {
				err = os.Remove(name)
			} else {
				err = os.WriteFile(name, data, 0o644)
			}
			if err != nil {
				t.Fatal(err)
			}
			p, added := corpusArticle(dir, opt, n)
			added = regexp.MustCompile(`(?m)^published: .*$`).ReplaceAll(added, []byte("published: 2026-01-01T00:00:00")) // the newest: its chunks hold others
			testfiles.WriteFile(t, p, string(added))
			var log strings.Builder
			b := sourcesBuilder(dir, out, buildTime)
			b.opt.Log = &log
			res, err := b.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Reparsed < tt.parsed || tt.parsed == n+1 && res.Reparsed != n+1 {
				t.Errorf("parsed %d files, want %d", res.Reparsed, tt.parsed)
			}
			got := strings.ReplaceAll(log.String(), dir+string(filepath.Separator), "")
			switch {
			case tt.warn == "" && got != "":
				t.Errorf("got log %q, want none", got)
			case tt.warn != "" && (!strings.HasPrefix(got, "warning: "+tt.warn) || strings.Count(got, "\n") != 1):
				t.Errorf("got log %q, want one warning starting %q", got, tt.warn)
			}
			identical(t, snap(t, out), coldBuild(t, dir, buildTime))
			// Written again: the next build reads nothing.
			res, err = sourcesBuilder(dir, out, buildTime).Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Read != 0 || !res.Skipped {
				t.Errorf("the build after: read %d files, skipped %v; want none read, skipped", res.Read, res.Skipped)
			}
		})
	}
}

// TestSourcesStamp checks which files a build reads again, by their
// stamps: one whose bytes changed at the same size and modification time
// (an editor that keeps them, a copy over it) is read and parsed, its
// change time or inode telling it apart; one whose stamp changed and
// bytes did not is read and not parsed; and a file changed too shortly
// before a build for its stamp to be believed (the file system's clock
// ticks coarsely) is read again by the next build, and not parsed.
func TestSourcesStamp(t *testing.T) {
	// sameStamp writes data over the file p, or (replace) renames a file
	// of data over it, then gives it the size and modification time it
	// had: only its change time (and for replace, its inode) differs.
	sameStamp := func(t *testing.T, p string, data []byte, replace bool) {
		before, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if replace {
			tmp := p + ".new"
			testfiles.WriteFile(t, tmp, string(data))
			if err := os.Rename(tmp, p); err != nil {
				t.Fatal(err)
			}
		} else if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(p, before.ModTime(), before.ModTime()); err != nil {
			t.Fatal(err)
		}
		after, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if after.Size() != before.Size() || !after.ModTime().Equal(before.ModTime()) {
			t.Fatalf("the size or modification time changed: %d %v, were %d %v", after.Size(), after.ModTime(), before.Size(), before.ModTime())
		}
		waitChanged(t, p, before)
	}
	// sameSize returns the bytes of article i with one letter of its
	// title changed.
	sameSize := func(data []byte) []byte {
		out := bytes.Clone(data)
		for i := bytes.Index(out, []byte("\ntitle: ")) + len("\ntitle: "); i < len(out); i++ {
			if c := out[i] | 0x20; 'a' <= c && c <= 'z' {
				out[i] ^= 0x20 // another case, as long
				return out
			}
		}
		t.Fatal("no letter in the title")
		return nil
	}
	tests := []struct {
		name       string
		change     func(t *testing.T, p string, data []byte)
		read, pars int
	}{
		{"written over, same size and time", func(t *testing.T, p string, data []byte) { sameStamp(t, p, sameSize(data), false) }, 1, 1},
		{"replaced, same size and time", func(t *testing.T, p string, data []byte) { sameStamp(t, p, sameSize(data), true) }, 1, 1},
		{"touched", func(t *testing.T, p string, data []byte) {
			later := time.Now().Add(time.Minute)
			if err := os.Chtimes(p, later, later); err != nil {
				t.Fatal(err)
			}
		}, 1, 0},
		{"copied over with its times (cp -p)", func(t *testing.T, p string, data []byte) { sameStamp(t, p, data, true) }, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir, out, opt := sourcesSite(t, 60, "chunks")
			p, data := corpusArticle(dir, opt, 42)
			tt.change(t, p, data)
			res, err := sourcesBuilder(dir, out, buildTime).Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if res.Read != tt.read || res.Reparsed != tt.pars || res.Skipped != (tt.pars == 0) {
				t.Errorf("read %d files, parsed %d, skipped %v; want %d, %d, %v", res.Read, res.Reparsed, res.Skipped, tt.read, tt.pars, tt.pars == 0)
			}
			identical(t, snap(t, out), coldBuild(t, dir, buildTime))
			// Its new stamp recorded, even by a build that skipped, with
			// what the cache had of every article.
			if res, err := sourcesBuilder(dir, out, buildTime).Build(context.Background()); err != nil || res.Read != 0 {
				t.Errorf("the build after: %v, read %d files; want none", err, res.Read)
			}
			other, data := corpusArticle(dir, opt, 7)
			testfiles.WriteFile(t, other, strings.Replace(string(data), "\ntitle: ", "\ntitle: Edited ", 1))
			if res, err := sourcesBuilder(dir, out, buildTime).Build(context.Background()); err != nil || res.Read != 1 || res.Reparsed != 1 {
				t.Errorf("the build after an edit: %v, read %d files, parsed %d; want 1, 1", err, res.Read, res.Reparsed)
			}
		})
	}

	t.Run("changed shortly before the build", func(t *testing.T) {
		t.Parallel()
		dir, out, opt := sourcesSite(t, 60, "chunks")
		p, data := corpusArticle(dir, opt, 42)
		other, _ := corpusArticle(dir, opt, 43)
		before, err := os.Stat(other)
		if err != nil {
			t.Fatal(err)
		}
		testfiles.WriteFile(t, p, strings.Replace(string(data), "\ntitle: ", "\ntitle: Edited ", 1))
		waitChanged(t, p, before) // changed after every other file
		edited, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		_, changed, ok := changeTimes(edited, edited)
		if !ok {
			changed = edited.ModTime()
		}
		// The build starts StampSlack after the edit, to the nanosecond:
		// the edited file changed too shortly before, the others not.
		b := sourcesBuilder(dir, out, buildTime)
		b.fileClock = func() time.Time { return changed.Add(content.StampSlack) }
		if res, err := b.Build(context.Background()); err != nil || res.Read != 1 || res.Reparsed != 1 {
			t.Fatalf("build: %v, read %d, parsed %d; want 1, 1", err, res.Read, res.Reparsed)
		}
		// Its stamp is the same, and not believed: read, not parsed,
		// and nothing else done.
		res, err := sourcesBuilder(dir, out, buildTime).Build(context.Background())
		if err != nil || res.Read != 1 || res.Reparsed != 0 || !res.Skipped {
			t.Fatalf("build after: %v, read %d, parsed %d, skipped %v; want 1, 0, skipped", err, res.Read, res.Reparsed, res.Skipped)
		}
		// Recorded now: believed.
		res, err = sourcesBuilder(dir, out, buildTime).Build(context.Background())
		if err != nil || res.Read != 0 || !res.Skipped {
			t.Fatalf("the build after that: %v, read %d, skipped %v; want none, skipped", err, res.Read, res.Skipped)
		}
	})
}

// waitChanged waits until the change time of the file p is another than
// before's, changing its status (chmod to its own mode) until it is: a
// file system's clock ticks every few milliseconds.
func waitChanged(t *testing.T, p string, before os.FileInfo) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); ; {
		after, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if x, y, ok := changeTimes(before, after); !ok || !x.Equal(y) || !os.SameFile(before, after) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the change time of the file does not change")
		}
		if err := os.Chmod(p, after.Mode().Perm()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSourcesStoreCompacted checks that the chunks layout's store of the
// articles' JSON, appended to build after build, is written anew once
// more than half of it is no longer used (here: two articles in three
// removed), and that what is built stays a clean build's.
func TestSourcesStoreCompacted(t *testing.T) {
	dir, out, opt := sourcesSite(t, 90, "chunks")
	name := filepath.Join(out, encodedName)
	before, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	for i := range opt.Articles {
		if i%3 != 0 {
			p, _ := corpusArticle(dir, opt, i)
			if err := os.Remove(p); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := sourcesBuilder(dir, out, buildTime).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	head := len("feedgen encoded 1\n") + 16
	if len(after)*2 > len(before) || bytes.Equal(after[:head], before[:head]) {
		t.Errorf("the store: %d bytes, was %d, the same id %v; want written anew, a third as long", len(after), len(before), bytes.Equal(after[:head], before[:head]))
	}
	identical(t, snap(t, out), coldBuild(t, dir, buildTime))
	// And taken by the build after.
	p, data := corpusArticle(dir, opt, 0)
	testfiles.WriteFile(t, p, strings.Replace(string(data), "\ntitle: ", "\ntitle: Edited ", 1))
	res, err := sourcesBuilder(dir, out, buildTime).Build(context.Background())
	if err != nil || res.Reparsed != 1 {
		t.Fatalf("the build after: %v, parsed %d files; want 1", err, res.Reparsed)
	}
	identical(t, snap(t, out), coldBuild(t, dir, buildTime))
}

// TestSourcesOptions checks the options the cache of sources is not keyed
// by, as they change no article's parse or JSON: a build with another
// base URL, with scheduled articles or drafts, takes the articles the
// cache holds (a draft or a scheduled article now published is parsed)
// and writes what a clean build with those options writes.
func TestSourcesOptions(t *testing.T) {
	opt := corpus.Options{Articles: 80, Limits: []int{10}, Offsets: "aligned"}
	tests := []struct {
		name string
		set  func(o *Options)
	}{
		{"another base URL", func(o *Options) { o.BaseURL = "https://staging.example.com" }},
		{"future", func(o *Options) { o.Future = true }},
		{"drafts", func(o *Options) { o.Drafts = true }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := writeCorpus(t, corpus.HardFiles(opt))
			out := filepath.Join(dir, "public")
			first, err := sourcesBuilder(dir, out, corpus.HardNow).Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			b := sourcesBuilder(dir, out, corpus.HardNow)
			tt.set(&b.opt)
			res, err := b.Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			// Those it left out before and publishes now are read and
			// parsed (the cache holds no JSON of them).
			want := first.Drafts + first.Scheduled - res.Drafts - res.Scheduled
			if res.Read != want || res.Reparsed != want {
				t.Errorf("read %d files, parsed %d; want %d, %d", res.Read, res.Reparsed, want, want)
			}
			cold := t.TempDir()
			c := sourcesBuilder(dir, cold, corpus.HardNow)
			c.opt.Clean = true
			tt.set(&c.opt)
			if _, err := c.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			identical(t, snap(t, out), snap(t, cold))
		})
	}
}
