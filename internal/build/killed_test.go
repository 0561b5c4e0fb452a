package build

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// The killed build of these tests changes base_url for one of the same
// length: every page it writes has the size of the page it replaces, so
// only the bytes tell them apart.
var (
	configA = siteConfig
	configB = strings.Replace(siteConfig, "api.example.com", "api.exampla.com", 1)
)

// killPoint is where the helper process kills itself: at the n-th call
// of Builder.onStep with what.
type killPoint struct {
	what string
	n    int
}

func (k killPoint) String() string { return k.what + "#" + strconv.Itoa(k.n) }

// killPoints returns points all along a build of pages pages that all
// change: before and after the first pages, mid-way, after the last
// page, after the deletions, after the manifest.
func killPoints(pages int) []killPoint {
	var ks []killPoint
	for _, n := range []int{1, 2, 3, pages / 3, pages / 2, pages - 1, pages} {
		ks = append(ks, killPoint{"page", n})
	}
	return append(ks, killPoint{"deleted", 1}, killPoint{"manifest", 1})
}

// TestHelperKilledBuild is not a test: it is the build that
// TestKilledBuildRepaired runs in another process and kills (killSelf)
// at the point FEEDGEN_KILL_AT names (what#n).
func TestHelperKilledBuild(t *testing.T) {
	dir, at := os.Getenv("FEEDGEN_KILL_DIR"), os.Getenv("FEEDGEN_KILL_AT")
	if dir == "" {
		t.Skip("the build that TestKilledBuildRepaired kills")
	}
	what, ns, _ := strings.Cut(at, "#")
	n, _ := strconv.Atoi(ns)
	b := builder(dir)
	var calls atomic.Int64
	b.onStep = func(w string) {
		if w == what && calls.Add(1) == int64(n) {
			killSelf()
		}
	}
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Fatalf("build finished: it was to die at %s", at)
}

// killedBuild builds dir in another process, which is killed at k.
func killedBuild(t *testing.T, dir string, k killPoint) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperKilledBuild$")
	cmd.Env = append(os.Environ(), "FEEDGEN_KILL_DIR="+dir, "FEEDGEN_KILL_AT="+k.String())
	out, err := cmd.CombinedOutput()
	if !killed(err) {
		t.Fatalf("build to kill at %s: %v, want killed\n%s", k, err, out)
	}
}

// cleanBuild returns the files of a build of dir into an empty folder.
func cleanBuild(t *testing.T, dir string) snapshot {
	t.Helper()
	out := t.TempDir()
	b := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, OutDir: out})
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	return snap(t, out)
}

// identical fails t unless got holds the files of want, with their bytes.
func identical(t *testing.T, got, want snapshot) {
	t.Helper()
	var diff []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diff = append(diff, "missing "+p)
		} else if g.data != w.data {
			diff = append(diff, "differs "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diff = append(diff, "extra "+p)
		}
	}
	if len(diff) > 0 {
		if len(diff) > 5 {
			diff = append(diff[:5], strconv.Itoa(len(diff)-5)+" more")
		}
		t.Errorf("%d files differ from a clean build: %s", len(diff), strings.Join(diff, ", "))
	}
}

// TestKilledBuildRepaired kills a build (SIGKILL, another process) at
// many points, then builds with the inputs of the build before it, or
// with other inputs: either way the folder must be byte for byte a clean
// build's, although the killed build left pages of the old sizes that the
// manifest's inputs still describe.
func TestKilledBuildRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per kill point")
	}
	const articles = 12
	dir := site(t, articles)
	editC := func(t *testing.T, dir string) {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), strings.Replace(article(3, "2025-01-03T10:00:00"), "Body 3", "Body C", 1))
	}
	cleanA := cleanBuild(t, dir)
	editC(t, dir)
	cleanC := cleanBuild(t, dir)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), article(3, "2025-01-03T10:00:00"))
	pages := len(cleanA) - 1 // less the manifest

	next := []struct {
		name  string
		edit  func(t *testing.T, dir string)
		clean snapshot
	}{
		{"old inputs", func(*testing.T, string) {}, cleanA},
		{"other inputs", editC, cleanC},
	}
	for _, k := range killPoints(pages) {
		for _, nx := range next {
			t.Run(k.String()+"/"+nx.name, func(t *testing.T) {
				dir := site(t, articles)
				out := filepath.Join(dir, "public")
				mustBuild(t, dir)
				testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), configB)
				killedBuild(t, dir, k)
				testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), configA)
				nx.edit(t, dir)
				res := mustBuild(t, dir)
				if res.Skipped {
					t.Errorf("the build after a killed one took the no-change shortcut")
				}
				identical(t, snap(t, out), nx.clean)
				// And the one after that takes it again.
				if res := mustBuild(t, dir); !res.Skipped {
					t.Errorf("the second build after a killed one did not take the no-change shortcut")
				}
			})
		}
	}
}

// TestFailedBuildRepairedBySameBuilder stops a build mid-way (its context
// cancelled after some pages), then lets the same Builder build again
// with the old inputs, told that only the config changed: the folder must
// be a clean build's.
func TestFailedBuildRepairedBySameBuilder(t *testing.T) {
	const articles = 12
	dir := site(t, articles)
	cleanA := cleanBuild(t, dir)
	for _, n := range []int{1, 5, 20} {
		t.Run(strconv.Itoa(n), func(t *testing.T) {
			dir := site(t, articles)
			out := filepath.Join(dir, "public")
			b := builder(dir)
			if _, err := b.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var calls atomic.Int64
			b.onStep = func(w string) {
				if w == "page" && calls.Add(1) == int64(n) {
					cancel()
				}
			}
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), configB)
			config := []string{filepath.Join(dir, "config.yaml")}
			if _, err := b.Rebuild(ctx, config); !errors.Is(err, context.Canceled) {
				t.Fatalf("got error %v, want context.Canceled", err)
			}
			b.onStep = nil
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), configA)
			if _, err := b.Rebuild(context.Background(), config); err != nil {
				t.Fatal(err)
			}
			identical(t, snap(t, out), cleanA)
		})
	}
}

// TestManifestTempRemoved checks that the temporary file of a manifest
// write that was killed goes with the next build, the no-change one too.
func TestManifestTempRemoved(t *testing.T) {
	for _, change := range []bool{false, true} {
		t.Run("change="+strconv.FormatBool(change), func(t *testing.T) {
			dir := site(t, 3)
			out := filepath.Join(dir, "public")
			mustBuild(t, dir)
			tmp := filepath.Join(out, "."+manifest.Name+".4242-0.tmp")
			testfiles.WriteFile(t, filepath.Join(out, filepath.Base(tmp)), `{"format":`)
			if change {
				testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a4.md"), article(4, "2025-01-04T10:00:00"))
			}
			res := mustBuild(t, dir)
			if res.Skipped == change {
				t.Errorf("skipped = %t, want %t", res.Skipped, !change)
			}
			if exists(tmp) {
				t.Errorf("%s is still there", filepath.Base(tmp))
			}
		})
	}
}
