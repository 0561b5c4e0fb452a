package build

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/feedgen/feedgen/internal/corpus"
)

// benchSite writes a generated site of 500 articles in a temporary folder
// and returns the folder and the path of its first article.
func benchSite(b *testing.B) (dir, first string) {
	b.Helper()
	dir = b.TempDir()
	opt := corpus.Options{Articles: 500, Seed: 1}
	if _, err := corpus.Write(dir, opt); err != nil {
		b.Fatal(err)
	}
	p, _ := corpus.Article(opt, 0)
	return dir, filepath.Join(dir, filepath.FromSlash(p))
}

func benchBuilder(dir string, opt Options) *Builder {
	opt.FS, opt.ConfigName, opt.Root, opt.Now, opt.Generator = os.DirFS(dir), "config.yaml", dir, fixedNow, "feedgen bench"
	return New(opt)
}

func benchBuild(b *testing.B, bl *Builder, changed []string) *Result {
	b.Helper()
	res, err := bl.Rebuild(context.Background(), changed)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkBuild measures the builds of one site: cold (empty folder), a
// new Builder over its own output (by recorded inputs, and with
// Options.Code the no-change shortcut), a watcher's rebuild after nothing
// or one article changed, and builds in memory.
func BenchmarkBuild(b *testing.B) {
	dir, first := benchSite(b)
	orig, err := os.ReadFile(first)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("cold", func(b *testing.B) {
		out := b.TempDir()
		for b.Loop() {
			b.StopTimer()
			os.RemoveAll(out)
			b.StartTimer()
			benchBuild(b, benchBuilder(dir, Options{OutDir: out}), nil)
		}
	})
	b.Run("new-builder", func(b *testing.B) {
		out := b.TempDir()
		benchBuild(b, benchBuilder(dir, Options{OutDir: out}), nil)
		for b.Loop() {
			if res := benchBuild(b, benchBuilder(dir, Options{OutDir: out}), nil); res.Written != 0 {
				b.Fatalf("%d pages written", res.Written)
			}
		}
	})
	b.Run("new-builder-shortcut", func(b *testing.B) {
		out := b.TempDir()
		benchBuild(b, benchBuilder(dir, Options{OutDir: out, Code: testCode}), nil)
		for b.Loop() {
			if res := benchBuild(b, benchBuilder(dir, Options{OutDir: out, Code: testCode}), nil); !res.Skipped {
				b.Fatal("not skipped")
			}
		}
	})
	b.Run("rebuild-nothing", func(b *testing.B) {
		bl := benchBuilder(dir, Options{OutDir: b.TempDir()})
		benchBuild(b, bl, nil)
		for b.Loop() {
			benchBuild(b, bl, []string{})
		}
	})
	b.Run("rebuild-one-article", func(b *testing.B) {
		bl := benchBuilder(dir, Options{OutDir: b.TempDir()})
		benchBuild(b, bl, nil)
		edited := bytes.Replace(orig, []byte("title: \""), []byte("title: \"Edited "), 1)
		defer os.WriteFile(first, orig, 0o644)
		i := 0
		for b.Loop() {
			b.StopTimer()
			data := orig
			if i++; i%2 == 1 {
				data = edited
			}
			if err := os.WriteFile(first, data, 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
			if res := benchBuild(b, bl, []string{first}); res.Written == 0 {
				b.Fatal("nothing written")
			}
		}
	})
	b.Run("memory-new-builder", func(b *testing.B) {
		for b.Loop() {
			benchBuild(b, benchBuilder(dir, Options{Memory: true}), nil)
		}
	})
	b.Run("memory-rebuild-nothing", func(b *testing.B) {
		bl := benchBuilder(dir, Options{Memory: true})
		benchBuild(b, bl, nil)
		for b.Loop() {
			benchBuild(b, bl, []string{})
		}
	})
}

// BenchmarkColdLayouts measures one-shot cold builds (as feedgen build
// runs them: Run's bounded memory) of one site of 2,000 articles with all
// four filters in each layout: pages with one limit, aligned, and chunks.
func BenchmarkColdLayouts(b *testing.B) {
	dir := b.TempDir()
	opt := corpus.Options{Articles: 2000, Seed: 1, Filters: []string{"section", "category", "tag", "author"}, Offsets: "aligned"}
	if _, err := corpus.Write(dir, opt); err != nil {
		b.Fatal(err)
	}
	base, err := os.ReadFile(filepath.Join(dir, corpus.ConfigPath))
	if err != nil {
		b.Fatal(err)
	}
	for _, layout := range []struct{ name, from, to string }{
		{"pages", "", ""},
		{"chunks", `offsets: "aligned"`, `layout: "chunks"`},
	} {
		b.Run(layout.name, func(b *testing.B) {
			cfg := bytes.Replace(base, []byte(layout.from), []byte(layout.to), 1)
			if err := os.WriteFile(filepath.Join(dir, corpus.ConfigPath), cfg, 0o644); err != nil {
				b.Fatal(err)
			}
			out := b.TempDir()
			for b.Loop() {
				b.StopTimer()
				os.RemoveAll(out)
				b.StartTimer()
				bl := benchBuilder(dir, Options{OutDir: out})
				bl.once = true // as Run does
				benchBuild(b, bl, nil)
			}
		})
	}
}
