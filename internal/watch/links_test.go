package watch

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/testfiles"
)

// watchPaths watches paths (relative to dir), and the recorder's marker
// folder, until the test ends, and records the calls with their paths
// relative to dir.
func watchPaths(t *testing.T, dir string, paths ...string) *recorder {
	t.Helper()
	return watchQuiet(t, dir, 30*time.Millisecond, paths...)
}

// watchQuiet is watchPaths with Options.Quiet quiet.
func watchQuiet(t *testing.T, dir string, quiet time.Duration, paths ...string) *recorder {
	t.Helper()
	r := newRecorder(t, dir)
	abs := []string{r.markDir}
	for _, p := range paths {
		abs = append(abs, filepath.Join(dir, p))
	}
	ctx, cancel := context.WithCancel(context.Background())
	ready := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- Run(ctx, Options{Paths: abs, Quiet: quiet, Func: r.fn, Ready: func() { close(ready) }})
	}()
	select {
	case <-ready:
	case err := <-done:
		cancel()
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	return r
}

// waitNamed waits for a call, among the calls from the from-th on, that
// names path (relative to the recorder's folder), and returns all calls.
func waitNamed(t *testing.T, r *recorder, from int, path string) [][]string {
	t.Helper()
	if !r.await(10*time.Second, func() bool { return len(r.calls) > from && contains(r.calls[from:], path) }) {
		calls := r.snapshot()
		t.Fatalf("no call names %s within 10s: got %v", path, calls[min(from, len(calls)):])
	}
	return r.snapshot()
}

// editSeen writes name (a path under dir) once the watch has handled the
// changes made before (settle), and so watches what they made it watch (a
// folder replaced, say); it waits for a call after the edit that names
// want, and returns all calls. An edit the watch misses gives no event at
// all: waiting for the watch first, rather than writing again until an
// edit is seen, keeps the test from passing over a watch that misses a
// first edit.
func editSeen(t *testing.T, r *recorder, dir, name, want string) [][]string {
	t.Helper()
	n := len(settle(t, r))
	testfiles.WriteFile(t, filepath.Join(dir, name), "edited")
	return waitNamed(t, r, n, want)
}

// namedUnder returns the paths under prefix that calls name.
func namedUnder(calls [][]string, prefix string) []string {
	var found []string
	for _, c := range calls {
		for _, p := range c {
			if p == prefix || strings.HasPrefix(p, prefix+string(filepath.Separator)) {
				found = append(found, p)
			}
		}
	}
	return found
}

func mustSymlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestRootReplaced replaces the watched folder by another (mv content old
// && mv new content): the change names the folder, the new folder's tree
// is watched, and the old one, now under old/, is not reported as content.
func TestRootReplaced(t *testing.T) {
	tests := []struct {
		name  string
		paths []string
	}{
		// The folder the content is in is watched anyway, for config.yaml.
		{"beside a watched file", []string{"content", "config.yaml"}},
		{"alone", []string{"content"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: x\n")
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
			testfiles.WriteFile(t, filepath.Join(dir, "content/sport/football/f.md"), "f") // only in the old folder
			testfiles.WriteFile(t, filepath.Join(dir, "new/news/politics/b.md"), "b")
			testfiles.WriteFile(t, filepath.Join(dir, "new/world/europe/e.md"), "e") // only in the new one
			r := watchPaths(t, dir, tt.paths...)

			mustRename(t, filepath.Join(dir, "content"), filepath.Join(dir, "old"))
			mustRename(t, filepath.Join(dir, "new"), filepath.Join(dir, "content"))
			waitNamed(t, r, 0, "content")

			n := len(r.snapshot())
			testfiles.WriteFile(t, filepath.Join(dir, "old/sport/football/f.md"), "edited in old")
			testfiles.WriteFile(t, filepath.Join(dir, "old/news/politics/a.md"), "edited in old")
			editSeen(t, r, dir, "content/world/europe/e.md", "content/world/europe/e.md")
			calls := editSeen(t, r, dir, "content/news/politics/b.md", "content/news/politics/b.md")
			for _, stale := range []string{"content/sport", "content/news/politics/a.md"} {
				if got := namedUnder(calls[n:], stale); len(got) > 0 {
					t.Errorf("edits under old/ reported as content: %v", got)
				}
			}
		})
	}
}

// TestRootRemovedAndBack deletes the watched folder, or the folder it is
// in, and makes it again.
func TestRootRemovedAndBack(t *testing.T) {
	tests := []struct{ root, removed string }{
		{"content", "content"},
		{"src/content", "src"},
	}
	for _, tt := range tests {
		t.Run(tt.removed, func(t *testing.T) {
			dir := t.TempDir()
			testfiles.WriteFile(t, filepath.Join(dir, tt.root, "news/politics/a.md"), "a")
			r := watchPaths(t, dir, tt.root)
			if err := os.RemoveAll(filepath.Join(dir, tt.removed)); err != nil {
				t.Fatal(err)
			}
			waitNamed(t, r, 0, tt.root)
			n := len(r.snapshot())
			testfiles.WriteFile(t, filepath.Join(dir, tt.root, "news/politics/b.md"), "b")
			waitNamed(t, r, n, tt.root)
			editSeen(t, r, dir, filepath.Join(tt.root, "news/politics/b.md"), filepath.Join(tt.root, "news/politics/b.md"))
		})
	}
}

// TestRootSymlink watches a content folder that is a symbolic link to the
// folder that holds the articles: changes in the target are reported under
// the link's path.
func TestRootSymlink(t *testing.T) {
	tests := []struct {
		name   string
		target func(t *testing.T, dir, elsewhere string) string
	}{
		{"relative", func(t *testing.T, dir, elsewhere string) string { return "copy" }},
		{"absolute", func(t *testing.T, dir, elsewhere string) string { return filepath.Join(elsewhere, "copy") }},
		{"chain", func(t *testing.T, dir, elsewhere string) string {
			// content -> link -> elsewhere/copy
			mustSymlink(t, filepath.Join(elsewhere, "copy"), filepath.Join(dir, "link"))
			return "link"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			for _, d := range []string{dir, elsewhere} {
				testfiles.WriteFile(t, filepath.Join(d, "copy/news/politics/a.md"), "a")
			}
			mustSymlink(t, tt.target(t, dir, elsewhere), filepath.Join(dir, "content"))
			target, err := filepath.EvalSymlinks(filepath.Join(dir, "content"))
			if err != nil {
				t.Fatal(err)
			}
			r := watchPaths(t, dir, "content")

			testfiles.WriteFile(t, filepath.Join(target, "news/politics/a.md"), "edited")
			waitNamed(t, r, 0, "content/news/politics/a.md")

			// A folder made in the target is watched too.
			n := len(r.snapshot())
			testfiles.WriteFile(t, filepath.Join(target, "sport/football/f.md"), "f")
			waitNamed(t, r, n, "content/sport")
			n = len(r.snapshot())
			testfiles.WriteFile(t, filepath.Join(target, "sport/football/f.md"), "edited")
			waitNamed(t, r, n, "content/sport/football/f.md")
		})
	}
}

// TestSymlinkRetargeted points a link, the content folder or an article,
// at another target: the change names the link, and the new target is
// watched, the old one not.
func TestSymlinkRetargeted(t *testing.T) {
	// retarget makes name a link to target: by renaming a new link over it
	// (ln -sfn does it so, atomically), or by removing it first.
	type retarget func(t *testing.T, target, name string)
	byRename := func(t *testing.T, target, name string) {
		mustSymlink(t, target, name+".tmp")
		mustRename(t, name+".tmp", name)
	}
	byRemove := func(t *testing.T, target, name string) {
		if err := os.Remove(name); err != nil {
			t.Fatal(err)
		}
		mustSymlink(t, target, name)
	}
	t.Run("root", func(t *testing.T) {
		for name, change := range map[string]retarget{"rename": byRename, "remove": byRemove} {
			t.Run(name, func(t *testing.T) {
				dir := t.TempDir()
				testfiles.WriteFile(t, filepath.Join(dir, "one/news/politics/a.md"), "a")
				testfiles.WriteFile(t, filepath.Join(dir, "two/news/politics/b.md"), "b")
				mustSymlink(t, "one", filepath.Join(dir, "content"))
				r := watchPaths(t, dir, "content")

				change(t, "two", filepath.Join(dir, "content"))
				waitNamed(t, r, 0, "content")
				n := len(r.snapshot())
				testfiles.WriteFile(t, filepath.Join(dir, "one/news/politics/a.md"), "edited in the old target")
				calls := editSeen(t, r, dir, "two/news/politics/b.md", "content/news/politics/b.md")
				if got := namedUnder(calls[n:], "content/news/politics/a.md"); len(got) > 0 {
					t.Errorf("edit in the old target reported: %v", calls[n:])
				}
			})
		}
	})
	t.Run("article", func(t *testing.T) {
		for name, change := range map[string]retarget{"rename": byRename, "remove": byRemove} {
			t.Run(name, func(t *testing.T) {
				dir, elsewhere := t.TempDir(), t.TempDir()
				testfiles.WriteFile(t, filepath.Join(elsewhere, "one.md"), "one")
				testfiles.WriteFile(t, filepath.Join(elsewhere, "two.md"), "two")
				link := filepath.Join(dir, "content/news/politics/s.md")
				mustSymlink(t, filepath.Join(elsewhere, "one.md"), link)
				r := watchPaths(t, dir, "content")

				change(t, filepath.Join(elsewhere, "two.md"), link)
				waitNamed(t, r, 0, "content/news/politics/s.md")
				n := len(r.snapshot())
				testfiles.WriteFile(t, filepath.Join(elsewhere, "two.md"), "two edited")
				waitNamed(t, r, n, "content/news/politics/s.md")

				// The old target is no longer watched: an edit of it, then
				// one in the content, gives a call naming only the latter.
				n = len(r.snapshot())
				testfiles.WriteFile(t, filepath.Join(elsewhere, "one.md"), "one edited")
				testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/m.md"), "marker")
				calls := waitNamed(t, r, n, "content/news/politics/m.md")
				if contains(calls[n:], "content/news/politics/s.md") {
					t.Errorf("edit of the old target reported: %v", calls[n:])
				}
			})
		}
	})
	t.Run("article target's folder moved away and back", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		testfiles.WriteFile(t, filepath.Join(elsewhere, "articles/s.md"), "s")
		testfiles.WriteFile(t, filepath.Join(elsewhere, "new/s.md"), "new s")
		link := filepath.Join(dir, "content/news/politics/s.md")
		mustSymlink(t, filepath.Join(elsewhere, "articles/s.md"), link)
		r := watchPaths(t, dir, "content")

		mustRename(t, filepath.Join(elsewhere, "articles"), filepath.Join(elsewhere, "old"))
		waitNamed(t, r, 0, "content/news/politics/s.md")
		n := len(r.snapshot())
		mustRename(t, filepath.Join(elsewhere, "new"), filepath.Join(elsewhere, "articles"))
		waitNamed(t, r, n, "content/news/politics/s.md")
		editSeen(t, r, elsewhere, "articles/s.md", "content/news/politics/s.md")
	})
	t.Run("root target replaced", func(t *testing.T) {
		// content -> copy, and copy replaced: mv copy old && mv new copy.
		dir := t.TempDir()
		testfiles.WriteFile(t, filepath.Join(dir, "copy/news/politics/a.md"), "a")
		testfiles.WriteFile(t, filepath.Join(dir, "new/news/politics/b.md"), "b")
		mustSymlink(t, "copy", filepath.Join(dir, "content"))
		r := watchPaths(t, dir, "content")

		mustRename(t, filepath.Join(dir, "copy"), filepath.Join(dir, "old"))
		mustRename(t, filepath.Join(dir, "new"), filepath.Join(dir, "copy"))
		waitNamed(t, r, 0, "content")
		n := len(r.snapshot())
		testfiles.WriteFile(t, filepath.Join(dir, "old/news/politics/a.md"), "edited in old")
		calls := editSeen(t, r, dir, "copy/news/politics/b.md", "content/news/politics/b.md")
		if got := namedUnder(calls[n:], "content/news/politics/a.md"); len(got) > 0 {
			t.Errorf("edit under old/ reported as content: %v", calls[n:])
		}
	})
}

// TestSymlinkedFileTarget edits the file a link in the content (or the
// config) leads to: the change names the link.
func TestSymlinkedFileTarget(t *testing.T) {
	const link = "content/news/politics/s.md"
	tests := []struct {
		name  string
		setup func(t *testing.T, dir, elsewhere string) // before the watch starts
		edit  func(t *testing.T, dir, elsewhere string)
		want  string
	}{
		{"absolute target", func(t *testing.T, dir, elsewhere string) {
			mustSymlink(t, filepath.Join(elsewhere, "shared.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "shared.md"), "edited")
		}, link},
		{"relative target", func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(dir, "shared/s.md"), "s")
			mustSymlink(t, "../../../shared/s.md", filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(dir, "shared/s.md"), "edited")
		}, link},
		{"atomic save of the target", func(t *testing.T, dir, elsewhere string) {
			mustSymlink(t, filepath.Join(elsewhere, "shared.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, ".shared.md.swp"), "saved")
			mustRename(t, filepath.Join(elsewhere, ".shared.md.swp"), filepath.Join(elsewhere, "shared.md"))
		}, link},
		{"chain of links", func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "real/r.md"), "r")
			mustSymlink(t, filepath.Join(elsewhere, "real/r.md"), filepath.Join(dir, "links/l.md"))
			mustSymlink(t, filepath.Join(dir, "links/l.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "real/r.md"), "edited")
		}, link},
		{"middle of a chain retargeted", func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "real/r.md"), "r")
			mustSymlink(t, filepath.Join(elsewhere, "real/r.md"), filepath.Join(dir, "links/l.md"))
			mustSymlink(t, filepath.Join(dir, "links/l.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			mustSymlink(t, filepath.Join(elsewhere, "shared.md"), filepath.Join(dir, "links/l.md.tmp"))
			mustRename(t, filepath.Join(dir, "links/l.md.tmp"), filepath.Join(dir, "links/l.md"))
		}, link},
		{"broken link's target made", func(t *testing.T, dir, elsewhere string) {
			mustSymlink(t, filepath.Join(elsewhere, "later.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "later.md"), "here now")
		}, link},
		{"folder of the target moved away", func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "real/r.md"), "r")
			mustSymlink(t, filepath.Join(elsewhere, "real/r.md"), filepath.Join(dir, link))
		}, func(t *testing.T, dir, elsewhere string) {
			mustRename(t, filepath.Join(elsewhere, "real"), filepath.Join(elsewhere, "gone"))
		}, link},
		{"config", func(t *testing.T, dir, elsewhere string) {
			if err := os.Remove(filepath.Join(dir, "config.yaml")); err != nil {
				t.Fatal(err)
			}
			mustSymlink(t, filepath.Join(elsewhere, "feed.yaml"), filepath.Join(dir, "config.yaml"))
		}, func(t *testing.T, dir, elsewhere string) {
			testfiles.WriteFile(t, filepath.Join(elsewhere, "feed.yaml"), "site_url: y\n")
		}, "config.yaml"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, elsewhere := t.TempDir(), t.TempDir()
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), "site_url: x\n")
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
			testfiles.WriteFile(t, filepath.Join(elsewhere, "shared.md"), "shared")
			testfiles.WriteFile(t, filepath.Join(elsewhere, "feed.yaml"), "site_url: x\n")
			tt.setup(t, dir, elsewhere)
			r := watchPaths(t, dir, "content", "config.yaml")
			tt.edit(t, dir, elsewhere)
			waitNamed(t, r, 0, tt.want)
		})
	}
}

// TestSymlinkMadeLater makes a link in the content while watched, and
// moves in a folder with one: their targets are watched from then on.
func TestSymlinkMadeLater(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	testfiles.WriteFile(t, filepath.Join(elsewhere, "one.md"), "one")
	testfiles.WriteFile(t, filepath.Join(elsewhere, "two.md"), "two")
	r := watchPaths(t, dir, "content")

	mustSymlink(t, filepath.Join(elsewhere, "one.md"), filepath.Join(dir, "content/news/politics/one.md"))
	waitNamed(t, r, 0, "content/news/politics/one.md")
	n := len(r.snapshot())
	testfiles.WriteFile(t, filepath.Join(elsewhere, "one.md"), "edited")
	waitNamed(t, r, n, "content/news/politics/one.md")

	staging := t.TempDir()
	mustSymlink(t, filepath.Join(elsewhere, "two.md"), filepath.Join(staging, "world/europe/two.md"))
	mustRename(t, filepath.Join(staging, "world"), filepath.Join(dir, "content/world"))
	n = len(r.snapshot())
	waitNamed(t, r, n, "content/world")
	n = len(r.snapshot())
	testfiles.WriteFile(t, filepath.Join(elsewhere, "two.md"), "edited")
	waitNamed(t, r, n, "content/world/europe/two.md")
}

// TestSymlinkedFolder links a category folder to one elsewhere. The
// loader does not follow links to folders (it reports them), so edits in
// the target change nothing; but the target's own fate (moved away,
// replaced by a file) changes what the link is, and is reported under the
// link's path.
func TestSymlinkedFolder(t *testing.T) {
	dir, elsewhere := t.TempDir(), t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	testfiles.WriteFile(t, filepath.Join(elsewhere, "europe/e.md"), "e")
	mustSymlink(t, filepath.Join(elsewhere, "europe"), filepath.Join(dir, "content/world/europe"))
	r := watchPaths(t, dir, "content")

	// An edit inside the linked folder, then one in the content: only the
	// latter is reported.
	testfiles.WriteFile(t, filepath.Join(elsewhere, "europe/e.md"), "edited")
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "marker")
	calls := waitNamed(t, r, 0, "content/news/politics/a.md")
	if got := namedUnder(calls, "content/world"); len(got) > 0 {
		t.Errorf("edit in a linked folder reported, but it is not read: %v", got)
	}

	// The target moved away, and a file put in its place.
	n := len(r.snapshot())
	mustRename(t, filepath.Join(elsewhere, "europe"), filepath.Join(elsewhere, "old"))
	waitNamed(t, r, n, "content/world/europe")
	n = len(r.snapshot())
	testfiles.WriteFile(t, filepath.Join(elsewhere, "europe"), "a file now")
	waitNamed(t, r, n, "content/world/europe")
}

// TestFolderRenamed renames a watched folder inside the content: edits
// in it are reported under its new name, not its old one.
func TestFolderRenamed(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	r := watchPaths(t, dir, "content")
	mustRename(t, filepath.Join(dir, "content/news"), filepath.Join(dir, "content/world"))
	waitNamed(t, r, 0, "content/world")
	n := len(r.snapshot())
	calls := editSeen(t, r, dir, "content/world/politics/a.md", "content/world/politics/a.md")
	if got := namedUnder(calls[n:], "content/news"); len(got) > 0 {
		t.Errorf("edit in a renamed folder reported under its old name: %v", got)
	}
}

// TestEventsLostNewFolder makes a folder while the kernel's event queue
// is full: its creation is lost, but the watch that follows the overflow
// watches it, so that later edits in it are seen.
func TestEventsLostNewFolder(t *testing.T) {
	r, dir := start(t)
	entered, release := r.blockFirstCall()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "1")
	<-entered
	cat := filepath.Join(dir, "content/news/politics")
	for i := range 9000 {
		if err := os.WriteFile(filepath.Join(cat, "f"+itoa(i%1000)+"-"+itoa(i/1000)+".md"), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testfiles.WriteFile(t, filepath.Join(dir, "content/world/europe/e.md"), "e") // its events are lost
	close(release)
	waitLost(t, r)
	editSeen(t, r, dir, "content/world/europe/e.md", "content/world/europe/e.md")
}

// TestSymlinkUnwatchable starts with a link whose target is in a folder
// that cannot be watched: the watch starts all the same, and the rest of
// the content is watched.
func TestSymlinkUnwatchable(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can watch any folder")
	}
	dir, elsewhere := t.TempDir(), t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "a")
	testfiles.WriteFile(t, filepath.Join(elsewhere, "locked/s.md"), "s")
	mustSymlink(t, filepath.Join(elsewhere, "locked/s.md"), filepath.Join(dir, "content/news/politics/s.md"))
	if err := os.Chmod(filepath.Join(elsewhere, "locked"), 0); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.Chmod(filepath.Join(elsewhere, "locked"), 0o755) })
	r := watchPaths(t, dir, "content")
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a.md"), "edited")
	waitNamed(t, r, 0, "content/news/politics/a.md")
}
