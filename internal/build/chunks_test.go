package build

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// chunkConfig is siteConfig in the chunks layout, with tags and authors
// filtered.
var chunkConfig = strings.Replace(siteConfig, "  limits: [2, 3]\n", "  limits: [2, 3]\n  layout: chunks\nfilters: [tag, author]\n", 1)

// chunkArticle is article with a tag: t1 for every article, t2 for every
// third.
func chunkArticle(id int, date string) string {
	tags := "[t1]"
	if id%3 == 0 {
		tags = "[t1, t2]"
	}
	return strings.Replace(article(id, date), "author: ivan\n", "author: ivan\ntags: "+tags+"\n", 1)
}

// chunkSite writes a site of the chunks layout of n articles.
func chunkSite(t *testing.T, n int) string {
	t.Helper()
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), chunkConfig)
	for i := 1; i <= n; i++ {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a"+itoa(i)+".md"), chunkArticle(i, dateOf(i)))
	}
	return dir
}

// dateOf is the publication of article i of chunkSite: a day each, from
// 2024-01-01 on.
func dateOf(i int) string {
	return "2024-" + pad(1+(i-1)/28%12) + "-" + pad(1+(i-1)%28) + "T10:00:00"
}

// chunkFiles returns the chunks and the indexes (roots and leaves) that
// out's manifest lists, the chunks and leaves by expanding it.
func chunkFiles(t *testing.T, out string) (chunks, indexes []manifest.File) {
	t.Helper()
	for _, f := range readTestManifest(t, out).Files {
		switch {
		case chunk.IsChunk(f.Path):
			chunks = append(chunks, f)
		case chunk.IsIndex(f.Path), chunk.IsLeaf(f.Path):
			indexes = append(indexes, f) // a root or a leaf
		default:
			t.Errorf("%s: neither a chunk nor an index's root or leaf", f.Path)
		}
	}
	return chunks, indexes
}

func readTestManifest(t *testing.T, out string) *manifest.Manifest {
	t.Helper()
	r, err := manifest.Read(os.DirFS(out))
	if err != nil {
		t.Fatal(err)
	}
	return r.Manifest
}

// TestChunksIncremental checks what rebuilds of the chunks layout write:
// nothing when nothing changed; for one edited article, its chunk in each
// of its collections and their indexes (no other chunk); for a new
// article, the first chunk of each collection it joins and their
// indexes; and a clean build's bytes each time.
func TestChunksIncremental(t *testing.T) {
	const n = 300
	dir := chunkSite(t, n)
	out := filepath.Join(dir, "public")
	res := mustBuild(t, dir)
	if !res.Chunked || res.Chunks < 10 {
		t.Fatalf("first build: %d chunks, want many", res.Chunks)
	}
	chunks, indexes := chunkFiles(t, out)
	if roots := len(indexes) - len(leavesOf(indexes)); roots != 4 { // main, t1, t2, ivan
		t.Fatalf("%d indexes, want 4", roots)
	}
	for _, f := range chunks {
		data, err := os.ReadFile(filepath.Join(out, f.Path))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(data), `[{"id":`) || !strings.HasSuffix(string(data), "}]") {
			t.Errorf("%s: not an array of articles: %.40s", f.Path, data)
		}
	}

	// Unchanged: nothing written, by a new Builder and by the same one.
	before := snap(t, out)
	b := builder(dir)
	for range 2 {
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Written != 0 || res.Deleted != 0 {
			t.Errorf("unchanged build: %d written, %d deleted", res.Written, res.Deleted)
		}
	}
	if got := snap(t, out); !sameSnapshot(got, before) {
		t.Errorf("an unchanged build changed the folder")
	}

	// One edited article: 150, in main, t1, t2 and ivan.
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a150.md"), strings.Replace(chunkArticle(150, dateOf(150)), "Article 150", "Article CL", 1))
	res, err := builder(dir).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	after, afterIx := chunkFiles(t, out)
	added := newFiles(chunks, after)
	// Its chunk in each collection, and at most one neighbour each when
	// it filled its chunk past a maximum (not here: chunks are small).
	if len(added) < 1 || len(added) > 4 {
		t.Errorf("one edited article: %d new chunks %v, want 1 to 4", len(added), added)
	}
	// The leaf of each collection that names the chunk (collections of
	// the same chunks share their leaves), and the 4 roots.
	leaves := newFiles(leavesOf(indexes), leavesOf(afterIx))
	if len(leaves) < 1 || len(leaves) > 4 {
		t.Errorf("one edited article: %d new leaves, want 1 to 4", len(leaves))
	}
	if res.Written != len(added)+len(leaves)+4 || res.Deleted != len(added)+len(leaves) {
		t.Errorf("one edited article: %d written, %d deleted; want %d and %d", res.Written, res.Deleted, len(added)+len(leaves)+4, len(added)+len(leaves))
	}
	// A new Builder knows the other chunks by their inputs (inputsName):
	// it renders only what it writes.
	if res.Rendered != res.Written {
		t.Errorf("one edited article: %d files rendered, %d written", res.Rendered, res.Written)
	}
	identical(t, snap(t, out), cleanBuild(t, dir))

	// One new article, the newest: the first chunk of each collection.
	chunks, indexes = after, afterIx
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a999.md"), chunkArticle(999, "2025-12-31T10:00:00"))
	if res, err = builder(dir).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	after, afterIx = chunkFiles(t, out)
	leaves = newFiles(leavesOf(indexes), leavesOf(afterIx))
	if added := newFiles(chunks, after); len(added) > 4 || len(after) > len(chunks)+4 || len(leaves) > 4 || res.Written != len(added)+len(leaves)+4 {
		t.Errorf("one new article: %d new chunks, %d chunks before, %d after, %d new leaves, %d files written", len(added), len(chunks), len(after), len(leaves), res.Written)
	}
	identical(t, snap(t, out), cleanBuild(t, dir))
}

// leavesOf returns the leaves of files.
func leavesOf(files []manifest.File) []manifest.File {
	var out []manifest.File
	for _, f := range files {
		if chunk.IsLeaf(f.Path) {
			out = append(out, f)
		}
	}
	return out
}

// newFiles returns the paths of after that before does not have.
func newFiles(before, after []manifest.File) []string {
	var out []string
	for _, f := range after {
		if !slices.ContainsFunc(before, func(g manifest.File) bool { return g.Path == f.Path }) {
			out = append(out, f.Path)
		}
	}
	return out
}

func sameSnapshot(a, b snapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for p, s := range a {
		if b[p] != s {
			return false
		}
	}
	return true
}

// TestSwitchLayouts builds the pages layout, then the chunks layout, then
// pages again into one folder: each build deletes the other's files, and
// leaves a clean build's.
func TestSwitchLayouts(t *testing.T) {
	dir := chunkSite(t, 40)
	out := filepath.Join(dir, "public")
	pagesConfig := strings.Replace(chunkConfig, "  layout: chunks\n", "", 1)
	for i, cfg := range []string{pagesConfig, chunkConfig, pagesConfig, chunkConfig} {
		testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), cfg)
		res := mustBuild(t, dir)
		if res.Chunked != (cfg == chunkConfig) {
			t.Errorf("build %d: chunked %v", i, res.Chunked)
		}
		if i > 0 && res.Deleted == 0 {
			t.Errorf("build %d: deleted nothing of the other layout", i)
		}
		identical(t, snap(t, out), cleanBuild(t, dir))
	}
}

// TestKilledChunkBuildRepaired kills a build of the chunks layout
// (SIGKILL, another process) at each of its steps, then builds with the
// inputs of the build before it or with the killed build's: the folder
// must be byte for byte a clean build's.
func TestKilledChunkBuildRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per kill point")
	}
	const articles = 80
	// An edit of the same length: the chunk that holds it, and the
	// indexes, keep their sizes.
	edit := func(t *testing.T, dir string) {
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), strings.Replace(chunkArticle(3, dateOf(3)), "Body 3", "Body C", 1))
	}
	dir := chunkSite(t, articles)
	cleanA := cleanBuild(t, dir)
	edit(t, dir)
	cleanC := cleanBuild(t, dir)

	var points []killPoint
	for n := 1; n <= 6; n++ { // a chunk in each of main, t1, ivan; then 3 indexes
		points = append(points, killPoint{"page", n})
	}
	points = append(points, killPoint{"deleted", 1}, killPoint{"manifest", 1})
	for _, k := range points {
		for _, nx := range []struct {
			name  string
			edit  func(t *testing.T, dir string)
			clean snapshot
		}{
			{"old inputs", func(*testing.T, string) {}, cleanA},
			{"other inputs", edit, cleanC},
		} {
			t.Run(k.String()+"/"+nx.name, func(t *testing.T) {
				dir := chunkSite(t, articles)
				out := filepath.Join(dir, "public")
				mustBuild(t, dir)
				edit(t, dir)
				killedBuild(t, dir, k)
				testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a3.md"), chunkArticle(3, dateOf(3)))
				nx.edit(t, dir)
				res := mustBuild(t, dir)
				if res.Skipped {
					t.Errorf("the build after a killed one took the no-change shortcut")
				}
				identical(t, snap(t, out), nx.clean)
			})
		}
	}
}

// TestChunksOnceSameOutput checks that a build of the chunks layout that
// bounds its memory (articles in a file, read back as the merge goes;
// chunks written behind, or not) writes what a Builder that keeps them
// writes.
func TestChunksOnceSameOutput(t *testing.T) {
	dir := chunkSite(t, 300)
	kept := filepath.Join(t.TempDir(), "kept")
	opt := func(out string) Options {
		return Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, OutDir: out, Now: fixedNow, Generator: "feedgen test"}
	}
	if _, err := New(opt(kept)).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	for _, after := range []int64{writeBehindAfter, 0} { // 0: every chunk written behind
		out := filepath.Join(t.TempDir(), "lean")
		b := New(opt(out))
		b.once = true // as Run does
		b.writeBehindAfter = after
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if !res.Chunked || res.Chunks < 10 {
			t.Fatalf("%d chunks", res.Chunks)
		}
		sameData(t, snap(t, out), snap(t, kept))
	}
}

// TestChunksEstimate checks that the size a chunks build is checked
// against max_output_bytes with (and warns with) is the bytes of the
// chunks and indexes it writes: a chunk shared by collections of the same articles
// (here the main listing, tag t1 and author ivan) is counted once, as it
// is written once; and that a build whose chunks fit max_output_bytes is
// not refused.
func TestChunksEstimate(t *testing.T) {
	dir := chunkSite(t, 300)
	out := filepath.Join(dir, "public")
	res := mustBuild(t, dir)
	chunks, indexes := chunkFiles(t, out)
	var written int64
	for _, f := range append(chunks, indexes...) {
		written += f.Size
	}
	if res.Estimate != written || res.Bytes != written {
		t.Errorf("estimate %d, bytes %d; want the %d bytes of the %d chunks and %d indexes written", res.Estimate, res.Bytes, written, len(chunks), len(indexes))
	}
	// max_output_bytes at that size: built; a byte less: refused,
	// saying the size and the files (the chunks and the indexes).
	limit := func(n int64) {
		testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(chunkConfig, "  layout: chunks\n", "  layout: chunks\n  max_output_bytes: "+strconv.FormatInt(n, 10)+"\n", 1))
	}
	limit(written)
	if _, err := builder(dir).Build(context.Background()); err != nil {
		t.Fatalf("a build of %d bytes at max_output_bytes %d: %v", written, written, err)
	}
	limit(written - 1)
	_, err := builder(dir).Build(context.Background())
	want := fmt.Sprintf("the output would be %s in %d files, more than", human.Bytes(written), len(chunks)+len(indexes))
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("at max_output_bytes %d: %v, want an error saying %q", written-1, err, want)
	}
}

// TestChunkInputsChanged changes the build's cache of chunk inputs
// (inputsName) as a hand or a bad disk could, then edits an unrelated
// article and builds: the build must write what a clean build writes,
// whatever the cache says (a line that is not the build's is not
// trusted: its chunk is rendered), and write the cache again.
func TestChunkInputsChanged(t *testing.T) {
	// swap exchanges the chunks (path and size) of two lines whose
	// chunks are of sizes of the same length: the file keeps its length.
	swap := func(t *testing.T, data []byte) []byte {
		lines := strings.SplitAfter(string(data), "\n")
		for i := range lines {
			for j := i + 1; j < len(lines); j++ {
				a, b := strings.Fields(lines[i]), strings.Fields(lines[j])
				if len(a) >= 3 && len(b) >= 3 && len(a[2]) == len(b[2]) && a[2] != b[2] {
					a[1], b[1], a[2], b[2] = b[1], a[1], b[2], a[2]
					lines[i], lines[j] = strings.Join(a, " ")+"\n", strings.Join(b, " ")+"\n"
					return []byte(strings.Join(lines, ""))
				}
			}
		}
		t.Fatal("no two lines to swap")
		return nil
	}
	tests := []struct {
		name   string
		change func(t *testing.T, data []byte) []byte
		lines  string // the lines not believed
	}{
		{"two chunks swapped", swap, "2 lines"},
		{"a byte of a size", func(t *testing.T, data []byte) []byte {
			i := bytes.LastIndexByte(data[:len(data)-1], '\n') + 1 // the last line
			f := bytes.Fields(data[i:])
			at := i + bytes.Index(data[i:], f[2])
			data[at] = "1234567890"[(data[at]-'0'+1)%10] // another size, as long
			return data
		}, "1 line"},
		{"cut in a line", func(t *testing.T, data []byte) []byte { return data[:len(data)/2] }, "1 line"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := chunkSite(t, 300)
			out := filepath.Join(dir, "public")
			mustBuild(t, dir)
			name := filepath.Join(out, inputsName)
			data, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			testfiles.WriteFile(t, name, string(tt.change(t, data)))
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a150.md"), strings.Replace(chunkArticle(150, dateOf(150)), "Article 150", "Article CL", 1))
			var log strings.Builder
			b := builder(dir)
			b.opt.Log = &log
			if _, err := b.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			identical(t, snap(t, out), cleanBuild(t, dir))
			want := "warning: " + filepath.Join("public", inputsName) + ": " + tt.lines + " changed since a build wrote it (by hand, or on a bad disk): not believed, their chunks are rendered again\n"
			if got := strings.ReplaceAll(log.String(), dir+string(filepath.Separator), ""); got != want {
				t.Errorf("got log %q, want %q", got, want)
			}
		})
	}
}
