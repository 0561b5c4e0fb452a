package build

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/feedgen/feedgen/internal/layout"
)

// TestCopiedOutputReadOnce copies a build's output as deploys and CI
// caches do, which keep the files' bytes and modification times but give
// them a new status change time (cp -rp, chmod -R, cp -al: a new link
// changes the shared inode's), then builds it twice with nothing changed.
// The first build reads the pages whose times say they changed since the
// manifest, finds them as it says, and moves the manifest past them; the
// second opens no page (nor chunk) file: nothing to do is cheap again.
// Both the no-change shortcut and a full build (no Options.Code: no
// shortcut) are checked, in both layouts.
func TestCopiedOutputReadOnce(t *testing.T) {
	copies := []struct {
		name string
		// copy returns the output folder to build, from the one built.
		copy func(t *testing.T, out string) string
	}{
		{name: "cp -rp", copy: func(t *testing.T, out string) string {
			return copyManifestFirst(t, out, "cp", "-rp")
		}},
		{name: "chmod -R", copy: func(t *testing.T, out string) string {
			// The manifest first, then the pages, as cp does them: a
			// chmod -R of the whole folder that reached manifest.json
			// last would leave nothing for a build to notice.
			manifest := filepath.Join(out, "manifest.json")
			run(t, "chmod", "a+r", manifest)
			after(t, manifest)
			run(t, "chmod", "-R", "a+r", filepath.Join(out, "articles"))
			return out
		}},
		{name: "cp -al", copy: func(t *testing.T, out string) string {
			return copyManifestFirst(t, out, "cp", "-al")
		}},
	}
	layouts := []struct {
		name string
		site func(t *testing.T) string
	}{
		{name: "pages", site: func(t *testing.T) string { return site(t, 5) }},
		{name: "chunks", site: func(t *testing.T) string { return chunkSite(t, 80) }},
	}
	for _, l := range layouts {
		for _, c := range copies {
			for _, code := range []string{testCode, ""} {
				name := l.name + "/" + c.name + "/shortcut"
				if code == "" {
					name = l.name + "/" + c.name + "/full"
				}
				t.Run(name, func(t *testing.T) {
					dir := l.site(t)
					opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: code}
					if _, err := New(opt).Build(context.Background()); err != nil {
						t.Fatal(err)
					}
					after(t, filepath.Join(dir, "public", "manifest.json"))
					opt.OutDir = c.copy(t, filepath.Join(dir, "public"))
					out := opt.OutDir
					opens := watchOpens(t, out)
					res, err := New(opt).Build(context.Background())
					if err != nil {
						t.Fatal(err)
					}
					if res.Written != 0 || res.Deleted != 0 {
						t.Fatalf("the first build after the copy wrote %d files and deleted %d, want none: %s", res.Written, res.Deleted, res.Summary())
					}
					if got := opens(); len(got) == 0 {
						t.Fatal("the first build after the copy read no page: the test copies nothing a build notices")
					}
					opens = watchOpens(t, out)
					if _, err := New(opt).Build(context.Background()); err != nil {
						t.Fatal(err)
					}
					if got := opens(); len(got) > 0 {
						t.Errorf("the second build after the copy opened %d files, want none: %v", len(got), got)
					}
				})
			}
		}
	}
}

// copyManifestFirst copies the output folder out beside it with the
// command given (cp -rp, cp -al), its manifest first: the files copied
// after it have later status change times, as any may have (a copy goes
// in the order of the folder's entries).
func copyManifestFirst(t *testing.T, out string, cmd ...string) string {
	t.Helper()
	dst := filepath.Join(filepath.Dir(out), "copy")
	if err := os.Mkdir(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		t.Fatal(err)
	}
	slices.SortStableFunc(entries, func(a, b fs.DirEntry) int {
		return boolInt(b.Name() == "manifest.json") - boolInt(a.Name() == "manifest.json")
	})
	for _, e := range entries {
		run(t, cmd[0], append(cmd[1:], filepath.Join(out, e.Name()), dst)...)
		after(t, filepath.Join(dst, e.Name()))
	}
	return dst
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// run runs a command, failing the test when it fails.
func run(t *testing.T, name string, args ...string) {
	t.Helper()
	if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
}

// watchOpens watches every folder under out/articles for files opened
// (inotify) and returns a function that stops and returns the paths,
// under out, of the files opened since: page and chunk files, not the
// folders nor the indexes (which every read of a manifest of the chunks
// layout reads).
func watchOpens(t *testing.T, out string) func() []string {
	t.Helper()
	opened := watchOpensUnder(t, filepath.Join(out, "articles"))
	return func() []string {
		t.Helper()
		var files []string
		for _, p := range opened() {
			if p = "articles/" + p; !layout.Classify(p).Names() { // read by manifest.Expand
				files = append(files, p)
			}
		}
		return files
	}
}

// watchOpensUnder watches every folder under root for files opened
// (inotify) and returns a function that stops and returns the paths,
// relative to root, of the files opened since, each once.
func watchOpensUnder(t *testing.T, root string) func() []string {
	t.Helper()
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	dirs := map[int32]string{}
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		wd, err := unix.InotifyAddWatch(fd, p, unix.IN_OPEN)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		dirs[int32(wd)] = filepath.ToSlash(rel)
		return nil
	})
	if err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	return func() []string {
		t.Helper()
		defer unix.Close(fd)
		// The events of an open are queued by the open itself: all are
		// there once the build returned.
		var opened []string
		buf := make([]byte, 64<<10)
		for {
			n, err := unix.Read(fd, buf)
			if err == unix.EAGAIN {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			for off := 0; off+unix.SizeofInotifyEvent <= n; {
				ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
				name := buf[off+unix.SizeofInotifyEvent : off+unix.SizeofInotifyEvent+int(ev.Len)]
				off += unix.SizeofInotifyEvent + int(ev.Len)
				if ev.Mask&unix.IN_Q_OVERFLOW != 0 {
					t.Fatal("inotify: events lost")
				}
				if ev.Mask&unix.IN_ISDIR != 0 || ev.Mask&unix.IN_OPEN == 0 {
					continue
				}
				p := path.Join(dirs[ev.Wd], string(bytes.TrimRight(name, "\x00")))
				if !slices.Contains(opened, p) {
					opened = append(opened, p)
				}
			}
		}
		return opened
	}
}
