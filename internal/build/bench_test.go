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
