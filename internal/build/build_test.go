package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/listing"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/testfiles"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// buildTime is the fixed build time of the tests.
var buildTime = time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)

func fixedNow() time.Time { return buildTime }

// snapshot is every file under dir with its bytes and modification time,
// but the caches of a build's sources (sources.go).
type snapshot map[string]fileState

type fileState struct {
	data    string
	modTime time.Time
}

func snap(t *testing.T, dir string) snapshot {
	t.Helper()
	s := snapshot{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == sourcesName || rel == encodedName {
			return nil // the caches of a build that bounds its memory (sources.go)
		}
		s[filepath.ToSlash(rel)] = fileState{string(data), info.ModTime()}
		return nil
	})
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return s
}

// diffSnap lists the files that differ between two snapshots.
func diffSnap(a, b snapshot) (changed []string) {
	for p, sa := range a {
		sb, ok := b[p]
		switch {
		case !ok:
			changed = append(changed, "-"+p)
		case sa.data != sb.data:
			changed = append(changed, "~"+p)
		case !sa.modTime.Equal(sb.modTime):
			changed = append(changed, "t"+p)
		}
	}
	for p := range b {
		if _, ok := a[p]; !ok {
			changed = append(changed, "+"+p)
		}
	}
	return changed
}

// waitNewerModTime waits until a file written now gets a later
// modification time than every file of s, so that a rewrite of one of them
// shows in its modification time (see diffSnap), however coarse the file
// system's clock (a tick of the kernel's, a second). It writes a file of
// its own, on the same file system, until its modification time is later.
func waitNewerModTime(t *testing.T, s snapshot) {
	t.Helper()
	var newest time.Time
	for _, f := range s {
		if f.modTime.After(newest) {
			newest = f.modTime
		}
	}
	probe := filepath.Join(t.TempDir(), "probe")
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		if err := os.WriteFile(probe, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		info, err := os.Stat(probe)
		if err != nil {
			t.Fatal(err)
		}
		if info.ModTime().After(newest) {
			return
		}
		select {
		case <-tick.C:
		case <-deadline:
			t.Fatalf("a file written now is dated %v, not after %v, 10s on", info.ModTime(), newest)
		}
	}
}

// goldenPage reports whether TestGoldenSample keeps page p as a golden
// file.
func goldenPage(p string) bool {
	k, ok := listing.ParsePageKey(p)
	if !ok {
		return true // the manifest
	}
	switch k.Dir {
	case listing.Dir, "articles/section/news", "articles/category/politics/section/news",
		"articles/tag/releases", "articles/author/ivan-petrov":
		return true
	}
	return false
}

func TestGoldenSample(t *testing.T) {
	out := t.TempDir()
	res, err := New(Options{FS: feedgen.Sample(), ConfigName: "config.yaml", OutDir: out, Now: fixedNow, Generator: "feedgen test", Code: testCode}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Estimate != res.Bytes {
		t.Errorf("estimate %d, want the exact size %d", res.Estimate, res.Bytes)
	}
	golden := filepath.Join("testdata", "golden")
	got := snap(t, out)
	// The manifest holds the SHA-256 of every page, so its golden file
	// pins every byte; the pages kept as files are the main listing's and
	// one collection of each filter, to read in a diff.
	for p := range got {
		if !goldenPage(p) {
			delete(got, p)
		}
	}
	if *update {
		os.RemoveAll(golden)
		for p, f := range got {
			name := filepath.Join(golden, filepath.FromSlash(p))
			os.MkdirAll(filepath.Dir(name), 0o755)
			if err := os.WriteFile(name, []byte(f.data), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		return
	}
	want := snap(t, golden)
	if len(want) == 0 {
		t.Fatalf("no golden files in %s: run go test ./internal/build -update", golden)
	}
	for p, w := range want {
		g, ok := got[p]
		if !ok {
			t.Errorf("missing %s", p)
			continue
		}
		if g.data != w.data {
			t.Errorf("%s differs from the golden file (go test ./internal/build -update to accept):\ngot  %.300s\nwant %.300s", p, g.data, w.data)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			t.Errorf("unexpected file %s", p)
		}
	}
}

const siteConfig = `site_url: https://www.example.com
base_url: https://api.example.com
sections:
  news: {politics: Politics}
authors:
  ivan: {name: Ivan, url: /authors/ivan/}
pagination:
  default_limit: 2
  limits: [2, 3]
`

func article(id int, date string) string {
	return "---\nid: " + itoa(id) + "\ntitle: Article " + itoa(id) + "\npublished: " + date + "\nauthor: ivan\n---\nBody " + itoa(id) + ".\n"
}

func itoa(i int) string { return strconv.Itoa(i) }

// site writes a site of n articles in a temporary folder and returns it.
func site(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig)
	for i := 1; i <= n; i++ {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a"+itoa(i)+".md"), article(i, "2025-01-"+pad(i)+"T10:00:00"))
	}
	return dir
}

func pad(i int) string {
	if i < 10 {
		return "0" + itoa(i)
	}
	return itoa(i)
}

// testCode is Options.Code of the tests' builders: a new Builder skips
// loading content that its output folder was built from.
const testCode = "test code"

func builder(dir string) *Builder {
	return New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode})
}

func mustBuild(t *testing.T, dir string) *Result {
	t.Helper()
	res, err := builder(dir).Build(context.Background())
	if err != nil {
		t.Fatalf("build: %v", err)
	}
	return res
}

func TestIncremental(t *testing.T) {
	dir := site(t, 5)
	out := filepath.Join(dir, "public")
	res := mustBuild(t, dir)
	// index, limit 2: offsets 0-4, limit 3: offsets 0-4
	if res.Pages != 11 || res.Written != 11 {
		t.Fatalf("first build: %d pages, %d written; want 11, 11", res.Pages, res.Written)
	}
	before := snap(t, out)
	waitNewerModTime(t, before)

	res = mustBuild(t, dir)
	if res.Written != 0 || res.Deleted != 0 || res.Unchanged != 11 {
		t.Errorf("no-change build: written %d, deleted %d, unchanged %d; want 0, 0, 11", res.Written, res.Deleted, res.Unchanged)
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("no-change build touched %v", d)
	}

	// Editing the oldest article changes only the pages that hold it.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a1.md"), strings.Replace(article(1, "2025-01-01T10:00:00"), "Article 1", "Edited", 1))
	res = mustBuild(t, dir)
	got := diffSnap(before, snap(t, out))
	want := []string{"~articles/2/3.json", "~articles/2/4.json", "~articles/3/2.json", "~articles/3/3.json", "~articles/3/4.json", "~manifest.json"}
	if strings.Join(sorted(got), " ") != strings.Join(want, " ") {
		t.Errorf("edit changed %v, want %v", sorted(got), want)
	}
	if res.Written != 5 {
		t.Errorf("edit: %d pages written, want 5", res.Written)
	}

	// Deleting an article deletes the pages past the new end.
	os.Remove(filepath.Join(dir, "content/news/politics/a5.md"))
	res = mustBuild(t, dir)
	if res.Deleted != 2 {
		t.Errorf("delete: %d pages deleted, want 2", res.Deleted)
	}
	for _, p := range []string{"articles/2/4.json", "articles/3/4.json"} {
		if _, err := os.Stat(filepath.Join(out, p)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s still exists: %v", p, err)
		}
	}
}

func sorted(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestFailedBuildLeavesOutput(t *testing.T) {
	tests := []struct {
		name   string
		break_ func(t *testing.T, dir string)
		want   string
	}{
		{"content error", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), "---\nid: x\n---\n")
		}, "content/news/politics/a2.md:2: id: want a positive whole number"},
		{"config error", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig+"typo: 1\n")
		}, `config.yaml:10: unknown key "typo"`},
		{"output too large", func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "limits: [2, 3]", "limits: [2, 3]\n  max_output_bytes: 100", 1))
		}, "more than pagination.max_output_bytes (100 B)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := site(t, 4)
			out := filepath.Join(dir, "public")
			mustBuild(t, dir)
			before := snap(t, out)
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), strings.Replace(article(3, "2025-01-03T10:00:00"), "Article 3", "Changed", 1))
			tt.break_(t, dir)
			_, err := builder(dir).Build(context.Background())
			var dl diag.List
			if !errors.As(err, &dl) {
				t.Fatalf("got error %v, want a diag.List", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error %q does not contain %q", err, tt.want)
			}
			if d := diffSnap(before, snap(t, out)); len(d) > 0 {
				t.Errorf("failed build changed the output: %v", d)
			}
		})
	}
}

func TestFailedFirstBuildWritesNothing(t *testing.T) {
	dir := site(t, 1)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/bad.md"), "")
	if _, err := builder(dir).Build(context.Background()); err == nil {
		t.Fatal("build succeeded, want an error")
	}
	if _, err := os.Stat(filepath.Join(dir, "public")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("output folder created by a failed build: %v", err)
	}
}

func TestRepairsInterruptedBuild(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	mustBuild(t, dir)
	clean := snap(t, out)
	// What a killed build leaves: its marker, listing the pages it was
	// to create, temporary files, a page written but not in the manifest,
	// a page deleted though the manifest lists it, and a stale page of a
	// limit no longer configured.
	testfiles.WriteFile(t, filepath.Join(out, outdir.Unfinished), "a feedgen build ...\narticles/7/0.json\n")
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/.1.json.999-0.tmp"), `{"count":3,"ne`)
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/0.json"), `{"count":99}`)
	os.Remove(filepath.Join(out, "articles/3/1.json"))
	testfiles.WriteFile(t, filepath.Join(out, "articles/7/0.json"), `{}`)
	res := mustBuild(t, dir)
	if res.Written != 2 || res.Deleted != 1 {
		t.Errorf("repair: written %d, deleted %d; want 2, 1", res.Written, res.Deleted)
	}
	after := snap(t, out)
	for p, f := range clean {
		if after[p].data != f.data {
			t.Errorf("%s not repaired", p)
		}
	}
	if len(after) != len(clean) {
		t.Errorf("after repair %d files, want %d: %v", len(after), len(clean), diffSnap(clean, after))
	}
}

func TestConcurrentBuilds(t *testing.T) {
	dir := site(t, 20)
	var wg sync.WaitGroup
	var logs [4]bytes.Buffer
	errs := make([]error, len(logs))
	for i := range logs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			b := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Log: &logs[i]})
			_, errs[i] = b.Build(context.Background())
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("build %d: %v", i, err)
		}
	}
	res := mustBuild(t, dir)
	if res.Written != 0 {
		t.Errorf("after concurrent builds a rebuild wrote %d pages, want 0", res.Written)
	}
	entries, _ := os.ReadDir(filepath.Join(dir, "public", "articles", "2"))
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func TestEmbeddedSampleDefaults(t *testing.T) {
	fsys := fstest.MapFS{
		"config.yaml":                   {Data: []byte(siteConfig)},
		"content/news/politics/only.md": {Data: []byte(article(1, "2025-01-01T10:00:00"))},
	}
	chdir(t, t.TempDir())
	res, err := New(Options{FS: fsys, ConfigName: "config.yaml", Now: fixedNow}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.OutDir != "public" || res.Articles != 1 {
		t.Errorf("out %q, %d articles; want public, 1", res.OutDir, res.Articles)
	}
	if _, err := os.Stat(filepath.Join("public", "articles", "index.json")); err != nil {
		t.Error(err)
	}
}

func chdir(t *testing.T, dir string) {
	t.Helper()
	t.Chdir(dir)
}

// TestRebuildMatchesCleanBuild changes a site step by step and rebuilds
// it, with the builder that made the last build (watch mode, told what
// changed) and with a new builder each time (a new "feedgen build", which
// learns what changed from the manifest's page inputs): the output is
// that of a clean build, and only the pages whose input changed are
// rendered.
func TestRebuildMatchesCleanBuild(t *testing.T) {
	for _, newBuilder := range []bool{false, true} {
		name := "same builder"
		if newBuilder {
			name = "new builder"
		}
		t.Run(name, func(t *testing.T) { testRebuilds(t, newBuilder) })
	}
}

func testRebuilds(t *testing.T, newBuilder bool) {
	dir := site(t, 9)
	b := builder(dir)
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	p := func(n int) string { return filepath.Join(dir, "content/news/politics/a"+itoa(n)+".md") }
	steps := []struct {
		name    string
		change  func()
		changed []string
		written int
	}{
		{"title edit", func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a5.md"), strings.Replace(article(5, "2025-01-05T10:00:00"), "Article 5", "New title", 1))
		}, []string{p(5)}, 5}, // index 4: offsets 3-4 of limit 2, 2-4 of limit 3
		{"nothing", func() {}, []string{}, 0},
		{"new article shifts every page", func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a10.md"), article(10, "2025-01-10T10:00:00"))
		}, []string{p(10)}, -1},
		{"date change reorders", func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), article(2, "2025-02-01T10:00:00"))
		}, []string{p(2)}, -1},
		{"delete", func() { os.Remove(p(7)) }, []string{p(7)}, -1},
		{"config change", func() {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "base_url: https://api.example.com", "base_url: https://api2.example.com", 1))
		}, []string{filepath.Join(dir, "config.yaml")}, -1},
		{"full rebuild without a hint", func() {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), strings.Replace(article(3, "2025-01-03T10:00:00"), "Body 3", "Body three", 1))
		}, nil, -1},
		{"a page file cut short", func() {
			f := filepath.Join(dir, "public", "articles", "2", "0.json")
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/0.json"), string(data[:len(data)/2]))
		}, nil, 1},
	}
	for _, st := range steps {
		st.change()
		var res *Result
		var err error
		if newBuilder {
			res, err = builder(dir).Build(context.Background())
		} else {
			res, err = b.Rebuild(context.Background(), st.changed)
		}
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		if st.written >= 0 && res.Written != st.written {
			t.Errorf("%s: %d pages written, want %d", st.name, res.Written, st.written)
		}
		if st.written >= 0 && res.Rendered != st.written {
			t.Errorf("%s: %d pages rendered, want %d (those whose input changed)", st.name, res.Rendered, st.written)
		}
		clean := t.TempDir()
		fresh := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, OutDir: clean})
		if _, err := fresh.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		got, want := snap(t, filepath.Join(dir, "public")), snap(t, clean)
		for path, w := range want {
			if path != manifest.Name && got[path].data != w.data {
				t.Errorf("%s: %s differs from a clean build", st.name, path)
			}
		}
		if len(got) != len(want) {
			t.Errorf("%s: %d files, a clean build has %d", st.name, len(got), len(want))
		}
	}
}

// TestWarningsOfFailedBuild checks that a build with errors still prints
// its warnings: a typo in a key is often what the errors come from.
func TestWarningsOfFailedBuild(t *testing.T) {
	dir := site(t, 2)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), "---\nid: 2\ntitel: Typo\npublished: 2025-01-02T10:00:00\nauthor: ivan\n---\n")
	var log bytes.Buffer
	_, err := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Log: &log}).Build(context.Background())
	if err == nil {
		t.Fatal("a build without a title succeeded")
	}
	if want := `warning: ` + filepath.Join(dir, "content") + `/news/politics/a2.md:3: unknown front matter key "titel" is ignored: did you mean "title"?`; !strings.Contains(log.String(), want) {
		t.Errorf("got log %q, want %q", log.String(), want)
	}
}

// TestOnPageSeesFirstBuild checks that a Builder with OnPage (the live
// preview) is handed every page of its first build, and of the first
// after Forget, even where the manifest on disk says a page is unchanged:
// its server holds no page yet.
func TestOnPageSeesFirstBuild(t *testing.T) {
	dir := site(t, 5)
	mustBuild(t, dir)
	var seen atomic.Int64
	b := New(Options{
		FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode,
		OnPage: func(string, []byte, [sha256.Size]byte) { seen.Add(1) },
	})
	for _, step := range []string{"first build", "after Forget"} {
		seen.Store(0)
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if int(seen.Load()) != res.Pages || res.Written != 0 {
			t.Errorf("%s: OnPage saw %d of %d pages, %d written; want all, 0 written", step, seen.Load(), res.Pages, res.Written)
		}
		b.Forget()
	}
}

// TestInputsOfAnotherGenerator checks that page inputs recorded by
// another feedgen are not trusted: it may put pages together differently.
func TestInputsOfAnotherGenerator(t *testing.T) {
	dir := site(t, 5)
	mustBuild(t, dir)
	for _, tt := range []struct {
		generator string
		rendered  int
	}{{"feedgen test", 0}, {"feedgen other", 11}} {
		b := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: tt.generator})
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Rendered != tt.rendered || res.Written != 0 {
			t.Errorf("%s: %d pages rendered, %d written; want %d, 0", tt.generator, res.Rendered, res.Written, tt.rendered)
		}
	}
}

// TestManifestReadEarly checks the manifest a build reads while its
// content loads: another build's manifest written meanwhile is read again,
// and a damaged one is a warning, after which every page is written.
func TestManifestReadEarly(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	mustBuild(t, dir)
	first, err := readManifest(context.Background(), out)
	if err != nil || first == nil {
		t.Fatalf("reading the manifest: %v", err)
	}
	early := func() (*manifest.Snapshot, error) { return first, nil }
	editManifest(t, out, func(m *manifest.Manifest) { m.Files = m.Files[:1] })
	var log bytes.Buffer
	b := New(Options{Log: &log})
	if m, _ := b.lastManifest(context.Background(), out, early); m == nil || len(m.Files) != 1 {
		t.Errorf("got a manifest of the files before the other build, want the other build's (1 file)")
	}

	// A damaged manifest proves no page the build's own: the build refuses
	// to touch them, unless told to (Clean), and then rewrites every page.
	testfiles.WriteFile(t, filepath.Join(dir, "public/"+manifest.Name), "{not json")
	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Log: &log}
	before := snap(t, out)
	_, err = New(opt).Build(context.Background())
	if se := (*strayError)(nil); !errors.As(err, &se) || !strings.Contains(err.Error(), "manifest.json cannot be read") {
		t.Errorf("got %v, want the refusal of pages no readable manifest lists", err)
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("the refused build changed %v", d)
	}
	if log.Len() > 0 {
		t.Errorf("log %q, want nothing from a refused build (it rewrites no page)", log.String())
	}
	opt.Clean = true
	res, err := New(opt).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(log.String(), "manifest.json: reading manifest:") || !strings.Contains(log.String(), "every page will be rewritten") {
		t.Errorf("log %q, want a warning about the damaged manifest", log.String())
	}
	if res.Rendered != res.Pages {
		t.Errorf("after a damaged manifest %d of %d pages rendered, want all", res.Rendered, res.Pages)
	}
}

// TestQuietBuildWaits checks that a quiet build waiting for another one
// says nothing of it: its log is for warnings only.
func TestQuietBuildWaits(t *testing.T) {
	for _, quiet := range []bool{false, true} {
		dir := site(t, 2)
		out := filepath.Join(dir, "public")
		if err := os.MkdirAll(out, 0o755); err != nil {
			t.Fatal(err)
		}
		unlock, err := outdir.Lock(context.Background(), out, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var log bytes.Buffer
		done := make(chan error, 1)
		go func() {
			b := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Log: &log, Quiet: quiet})
			_, err := b.Build(context.Background())
			done <- err
		}()
		// The build found the lock taken, and said so or not, before it
		// waits: only then is the lock let go.
		waitForLock(t, done)
		unlock()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if said := strings.Contains(log.String(), "waiting for another build"); said == quiet {
			t.Errorf("quiet %v: log %q", quiet, log.String())
		}
	}
}

// waitForLock waits until a goroutine waits in outdir.Lock for the lock to be
// free: a build that found it taken (and said so, unless quiet). Nothing
// tells that but the goroutine's stack: it is looked at every millisecond,
// for 10s at most. The test fails if the build ends first (done).
func waitForLock(t *testing.T, done <-chan error) {
	t.Helper()
	buf := make([]byte, 1<<20)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	deadline := time.After(10 * time.Second)
	for {
		stacks := string(buf[:runtime.Stack(buf, true)])
		for _, g := range strings.Split(stacks, "\n\n") {
			// Waiting, it is in the select between its context and the
			// next try.
			header, _, _ := strings.Cut(g, "\n")
			if strings.Contains(header, " [select") && strings.Contains(g, "\ngithub.com/feedgen/feedgen/internal/outdir.Lock(") {
				return
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the build ended (error %v) while another held the lock", err)
		case <-deadline:
			t.Fatalf("no build waits for the lock after 10s; goroutines:\n%s", stacks)
		case <-tick.C:
		}
	}
}

// TestRebuildReplacedContent checks a Rebuild told that the content folder
// itself changed (mv new content), or a folder it is in: everything under
// it is read again.
func TestRebuildReplacedContent(t *testing.T) {
	for _, changed := range []string{"content", "."} {
		t.Run(changed, func(t *testing.T) {
			dir := site(t, 3)
			b := builder(dir)
			if _, err := b.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			other := filepath.Join(t.TempDir(), "content")
			testfiles.WriteFile(t, filepath.Join(other, "news/politics/b1.md"), strings.Replace(article(1, "2025-01-01T10:00:00"), "Body 1", "Replaced", 1))
			if err := os.Rename(filepath.Join(dir, "content"), filepath.Join(t.TempDir(), "old")); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(other, filepath.Join(dir, "content")); err != nil {
				t.Fatal(err)
			}
			res, err := b.Rebuild(context.Background(), []string{filepath.Join(dir, changed)})
			if err != nil {
				t.Fatal(err)
			}
			if res.Articles != 1 {
				t.Errorf("got %d articles, want 1 (the new folder's)", res.Articles)
			}
			identical(t, snap(t, filepath.Join(dir, "public")), cleanBuild(t, dir))
		})
	}
}

// TestStrayFilesNamed checks that a build that finds files under
// articles/ that no build wrote refuses, naming them, and changes
// nothing; with Clean it deletes them, naming each, but not the stale
// pages of the last build nor temporary files. (A file whose name no
// build writes is never deleted: TestForeignKeptWithClean.)
func TestStrayFilesNamed(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	mustBuild(t, dir)
	testfiles.WriteFile(t, filepath.Join(out, "articles/7/0.json"), "mine")
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/.0.json.77-0.tmp"), "{")
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "limits: [2, 3]", "limits: [2]", 1))
	var log bytes.Buffer
	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Log: &log}
	before := snap(t, out)
	_, err := New(opt).Build(context.Background())
	if err == nil || !strings.Contains(err.Error(), "holds a file that no feedgen build wrote") || !strings.Contains(err.Error(), ": articles/7/0.json;") ||
		!strings.Contains(err.Error(), "--clean") {
		t.Fatalf("got %v, want the refusal naming articles/7/0.json", err)
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("the refused build changed %v", d)
	}
	opt.Clean = true
	if _, err := New(opt).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	want := "deleting " + filepath.Join(out, "articles/7/0.json") + " (--clean): no feedgen build wrote it\n"
	if log.String() != want {
		t.Errorf("log %q, want %q", log.String(), want)
	}
	if exists(filepath.Join(out, "articles/7/0.json")) || exists(filepath.Join(out, "articles/3")) || exists(filepath.Join(out, "articles/2/.0.json.77-0.tmp")) {
		t.Error("stray file, temporary file or stale pages left")
	}
}
