package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestNamedPipes puts a named pipe in the output folder where a build
// reads: a page, a chunk, an index, .feedgen-chunk-inputs, the marker of
// a build that did not finish, the manifest. The build never opens one
// (it would block there, deaf to SIGTERM): a file it wrote that is now a
// pipe is one to write again, and it does; the manifest's is said, and
// the folder's files are then no build's (--clean).
func TestNamedPipes(t *testing.T) {
	for _, tt := range []struct {
		name string
		pipe func(t *testing.T, out string) string // the file to make a pipe, in out
		want string                                // the error, "" for none
	}{
		{name: "page", pipe: fixed("articles/2/0.json")},
		{name: "chunk", pipe: func(t *testing.T, out string) string {
			m, _ := filepath.Glob(filepath.Join(out, "articles/chunks/*/*.json"))
			if len(m) == 0 {
				t.Fatal("no chunk")
			}
			rel, _ := filepath.Rel(out, m[0])
			return filepath.ToSlash(rel)
		}},
		{name: "index", pipe: fixed("articles/chunks.json")},
		{name: "chunk inputs", pipe: fixed(inputsName)},
		{name: "marker", pipe: fixed(outdir.Unfinished)},
		{name: "manifest", pipe: fixed("manifest.json"), want: "manifest.json cannot be read"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := site(t, 5)
			if tt.name != "page" {
				testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), chunkConfig)
			}
			mustBuild(t, dir)
			out := filepath.Join(dir, "public")
			p := tt.pipe(t, out)
			testfiles.FIFO(t, filepath.Join(out, filepath.FromSlash(p)))
			var log strings.Builder
			opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Log: &log}
			build := func(clean bool) error {
				opt.Clean = clean
				return eventtest.Returns(t, 5*time.Second, "Build", func() error {
					_, err := New(opt).Build(context.Background())
					return err
				})
			}
			err := build(false)
			if tt.want != "" {
				if err == nil || !strings.Contains(err.Error(), tt.want) {
					t.Fatalf("got %v, want an error with %q", err, tt.want)
				}
				if log.Len() > 0 {
					t.Errorf("log %q, want nothing from a refused build (it rewrites no page)", log.String())
				}
				err = build(true)
				if w := "manifest.json is not a regular file (a named pipe): remove it and run feedgen build --clean; every page will be rewritten"; !strings.Contains(log.String(), w) {
					t.Errorf("log %q does not say %q", log.String(), w)
				}
			}
			if err != nil {
				t.Fatal(err)
			}
			if info, err := os.Lstat(filepath.Join(out, filepath.FromSlash(p))); err == nil && !info.Mode().IsRegular() {
				t.Errorf("%s is still %v", p, info.Mode())
			}
		})
	}
}

func fixed(p string) func(*testing.T, string) string {
	return func(*testing.T, string) string { return p }
}
