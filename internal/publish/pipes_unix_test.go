//go:build unix

package publish

import (
	"context"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/eventtest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestPublishNamedPipes puts a named pipe in the build (a page, the
// manifest), as feedgen publish reads it (outfile.RootFS), and in a
// bucket on disk (manifest.json's .attrs file, the lock), which the
// bucket's driver opens blocking: each publish fails at once, saying
// what to do, and so does a dry run but where it reads no page. A page
// is found as it is uploaded, after others (the bucket's manifest stays
// the one it had, as for any page that does not match); else the bucket
// is left as it was.
func TestPublishNamedPipes(t *testing.T) {
	for _, tt := range []struct {
		name   string
		build  string // a file of the build made a pipe
		bucket string // a file of the bucket made a pipe
		// uploads: the pipe is found as the pages are uploaded (a dry
		// run reads none).
		uploads bool
		want    string
	}{
		{name: "page", build: "articles/5/5.json", uploads: true, want: "articles/5/5.json: not a regular file (a named pipe): the output changed since its manifest was written; run feedgen build again, and publish once it is done"},
		{name: "manifest", build: "manifest.json", want: "reading manifest: public/manifest.json is not a regular file (a named pipe): remove it and run feedgen build --clean"},
		{name: "attributes", bucket: "manifest.json.attrs", want: "manifest.json.attrs is not a regular file (a named pipe): a bucket folder holds only the files of a build; remove it and publish again"},
		{name: "lock", bucket: LockName, want: LockName + " is not a regular file (a named pipe): a bucket folder holds only the files of a build; remove it and publish again"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, smallOpt)
			url, store := fileBucket(t)
			b := open(t, url)
			opt := lockOptions(url, store)
			if tt.bucket != "" {
				// A bucket that holds the build; an empty one for the
				// build's pipes: a page the bucket has is not read.
				if _, err := Publish(context.Background(), b, os.DirFS(s.out), opt); err != nil {
					t.Fatal(err)
				}
			}
			if tt.build != "" {
				testfiles.FIFO(t, filepath.Join(s.out, filepath.FromSlash(tt.build)))
			}
			if tt.bucket != "" {
				testfiles.FIFO(t, filepath.Join(store, filepath.FromSlash(tt.bucket)))
			}
			before := storeSnapshot(t, store)
			root, err := os.OpenRoot(s.out)
			if err != nil {
				t.Fatal(err)
			}
			defer root.Close()
			for _, dry := range []bool{true, false} {
				opt.DryRun = dry
				err := eventtest.Returns(t, 5*time.Second, "Publish", func() error {
					_, err := Publish(context.Background(), b, outfile.RootFS(root, "public"), opt)
					return err
				})
				if dry && tt.uploads {
					if err != nil {
						t.Errorf("dry run: %v", err)
					}
					continue
				}
				if err == nil || !strings.HasSuffix(err.Error(), tt.want) {
					t.Errorf("dry run %v: got %v, want an error ending %q", dry, err, tt.want)
				}
			}
			if !tt.uploads {
				sameStore(t, store, before)
			} else if _, err := os.Stat(filepath.Join(store, "manifest.json")); !os.IsNotExist(err) {
				t.Errorf("the bucket has a manifest: %v", err)
			}
		})
	}
}

// TestPublishFolderSpecialFiles: a bucket on disk holds named pipes and
// a socket. Outside articles/ (a web root's own files) they are never
// looked at; under articles/ a publish of an unchanged build does not
// see them (it reads manifest.json and nothing else), and one of a new
// build lists them, never reads them, and replaces or deletes them: a
// pipe at a page's key, a page whose .attrs file is a pipe, a pipe and a
// socket of their own. Each publish returns at once.
func TestPublishFolderSpecialFiles(t *testing.T) {
	s := newSite(t, smallOpt)
	url, store := fileBucket(t)
	b := open(t, url)
	opt := lockOptions(url, store)
	opt.OutputDir = s.out
	publishDir(t, b, s.out, opt)
	m := readManifest(t, s.out)
	page, attrsPage := m.Files[1].Path, m.Files[2].Path
	// A pipe at a name a build writes (a stale page's) is deleted; one
	// at a name no build writes is another tool's, and stays.
	for _, name := range []string{"web.fifo", "static/app.fifo", "articles/stray.fifo", "articles/10/997.json", page, attrsPage + attrsExt} {
		full := filepath.Join(store, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		os.Remove(full)
		testfiles.FIFO(t, full)
	}
	sock := filepath.Join(store, "articles", "10", "996.json")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	publish := func() *Result {
		t.Helper()
		var res *Result
		err := eventtest.Returns(t, 5*time.Second, "Publish", func() error {
			var err error
			res, err = Publish(context.Background(), b, os.DirFS(s.out), opt)
			return err
		})
		if err != nil {
			t.Fatalf("publish: %v", err)
		}
		return res
	}
	isPipe := func(name string) bool {
		info, err := os.Lstat(filepath.Join(store, filepath.FromSlash(name)))
		return err == nil && info.Mode().Type() == fs.ModeNamedPipe
	}
	// Unchanged: nothing under articles/ is seen.
	if got, want := countsOf(publish()), (counts{Unchanged: len(m.Files) + 1}); got != want {
		t.Errorf("unchanged build: got %+v, want %+v", got, want)
	}
	for _, name := range []string{"web.fifo", "static/app.fifo", "articles/stray.fifo", "articles/10/997.json", page} {
		if !isPipe(name) {
			t.Errorf("%s: no longer a named pipe after a publish of an unchanged build", name)
		}
	}
	// A new build: nothing under articles/ is seen but the files that
	// changed (a publish trusts the bucket's manifest); --full walks the
	// folder.
	s.edit(t, 3, "Edited, with pipes in the bucket")
	if res := publish(); res.Listed {
		t.Error("a new build: the folder was listed")
	}
	for _, name := range []string{"articles/stray.fifo", "articles/10/997.json"} {
		if !isPipe(name) {
			t.Errorf("%s: no longer a named pipe after a publish that lists nothing", name)
		}
	}
	opt.Full = true
	if res := publish(); !res.Listed {
		t.Error("--full: the folder was not listed")
	}
	for _, name := range []string{"web.fifo", "static/app.fifo", "articles/stray.fifo"} {
		if !isPipe(name) {
			t.Errorf("%s, not a name a build writes: no longer a named pipe", name)
		}
	}
	for _, name := range []string{sock, filepath.Join(store, "articles", "10", "997.json")} {
		if _, err := os.Lstat(name); !os.IsNotExist(err) {
			t.Errorf("%s, at a page's name: %v, want it deleted", name, err)
		}
	}
	if !isPipe(attrsPage + attrsExt) {
		t.Errorf("%s: not publish's, yet no longer a named pipe", attrsPage+attrsExt)
	}
	// The test reads the bucket through its driver, which would open them.
	for _, name := range []string{"web.fifo", "static/app.fifo", "articles/stray.fifo", attrsPage + attrsExt} {
		if err := os.Remove(filepath.Join(store, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	checkBucket(t, b, s.out, config.DefaultCacheControl, nil)
	plainFolder(t, store, s.out, map[string]string{"static": ""})
}

// TestPublishFolderRootLinks: a file of a bucket on disk that publish
// reads (manifest.json, its attribute file, the lock) is a symbolic
// link: to the build's own manifest.json (so that the bucket would seem
// to hold every build already, and never get a page), to a file
// elsewhere, to nothing. Publish and its dry run refuse it, never
// following it, and change nothing; the link's target is intact.
func TestPublishFolderRootLinks(t *testing.T) {
	for _, tt := range []struct {
		name, file string
		target     func(s *site, other string) string
	}{
		{"manifest to the build's", "manifest.json", func(s *site, _ string) string { return filepath.Join(s.out, "manifest.json") }},
		{"manifest elsewhere", "manifest.json", func(_ *site, other string) string { return other }},
		{"manifest broken", "manifest.json", func(_ *site, other string) string { return other + ".none" }},
		{"attributes", "manifest.json" + attrsExt, func(_ *site, other string) string { return other }},
		{"lock", LockName, func(_ *site, other string) string { return other }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, smallOpt)
			url, store := fileBucket(t)
			b := open(t, url)
			opt := lockOptions(url, store)
			opt.OutputDir = s.out
			other := filepath.Join(t.TempDir(), "other.json")
			if err := os.WriteFile(other, []byte("{}"), 0o644); err != nil {
				t.Fatal(err)
			}
			target := tt.target(s, other)
			link := filepath.Join(store, tt.file)
			if err := os.Symlink(target, link); err != nil {
				t.Fatal(err)
			}
			before, built := storeSnapshot(t, store), storeSnapshot(t, s.out)
			want := link + " is not a regular file (a symbolic link to " + target + ", which publish does not follow): a bucket folder holds only the files of a build; remove it and publish again"
			for _, dry := range []bool{true, false} {
				opt.DryRun = dry
				_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
				if err == nil || err.Error() != want {
					t.Errorf("dry run %v: got %v, want %q", dry, err, want)
				}
			}
			sameStore(t, store, before)
			sameStore(t, s.out, built)
			if info, err := os.Lstat(link); err != nil || info.Mode()&fs.ModeSymlink == 0 {
				t.Errorf("the link is gone: %v", err)
			}
			if data, err := os.ReadFile(other); err != nil || string(data) != "{}" {
				t.Errorf("the link's target changed: %q, %v", data, err)
			}
		})
	}
}

// TestPublishFolderArticlesNotFolder: a bucket folder's articles is a
// regular file, a named pipe or a link to nothing: publish and its dry
// run refuse it at once, saying to remove it, and try nothing again.
func TestPublishFolderArticlesNotFolder(t *testing.T) {
	for _, tt := range []struct {
		name, kind string
		make       func(t *testing.T, p string)
	}{
		{"file", "is not a folder (a regular file)", func(t *testing.T, p string) { testfiles.WriteFile(t, p, "hi") }},
		{"pipe", "is not a folder (a named pipe)", func(t *testing.T, p string) { testfiles.FIFO(t, p) }},
		{"broken link", "is a link to nothing", func(t *testing.T, p string) {
			if err := os.Symlink(p+".none", p); err != nil {
				t.Fatal(err)
			}
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newSite(t, smallOpt)
			url, store := fileBucket(t)
			b := open(t, url)
			opt := lockOptions(url, store)
			opt.OutputDir = s.out
			var notices strings.Builder
			opt.Notices = &notices
			p := filepath.Join(store, "articles")
			tt.make(t, p)
			before := storeSnapshot(t, store)
			want := p + " " + tt.kind + ": the pages of a bucket folder go in the folder articles; remove it and publish again"
			for _, dry := range []bool{true, false} {
				opt.DryRun = dry
				err := eventtest.Returns(t, 5*time.Second, "Publish", func() error {
					_, err := Publish(context.Background(), b, os.DirFS(s.out), opt)
					return err
				})
				if err == nil || err.Error() != want {
					t.Errorf("dry run %v: got %v, want %q", dry, err, want)
				}
			}
			if notices.Len() > 0 {
				t.Errorf("notices: %s", notices.String())
			}
			sameStore(t, store, before)
		})
	}
}
