package build

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestOutputDirOverlap checks that a build refuses an output folder that
// is the content folder, lies inside it or holds it, however it is named
// (output_dir, --out, a symbolic link, a bind mount), with the config's
// line, and that it changes nothing: not the source articles, not the
// files beside them, not with Clean either. Not root, it runs as root of
// its own user and mount namespaces, for the bind mounts.
func TestOutputDirOverlap(t *testing.T) {
	if testfiles.InMountNamespace(t) {
		return
	}
	tests := []struct {
		name   string
		output string // output_dir, "" for none
		out    string // Options.OutDir relative to the site, "" for none
		link   bool   // "LINK" is a symbolic link to content, outside the site
		bind   string // "BOUND" is this folder of the site mounted again (mount --bind), outside the site
		clean  bool   // Options.Clean
		want   string
	}{
		{name: "equal", output: "content", want: `config.yaml:11: output_dir: "content" (`},
		{name: "equal, with a slash", output: "./content/", want: "is the content folder"},
		{name: "inside", output: "content/news/public", want: "lies inside the content folder"},
		{name: "holds it", output: ".", want: "holds the content folder"},
		{name: "holds it from above", output: "..", want: "holds the content folder"},
		{name: "through a link", output: "LINK", link: true, want: "is the content folder"},
		{name: "inside, through a link", output: "LINK/x", link: true, want: "lies inside the content folder"},
		{name: "through a link, --clean", output: "LINK", link: true, clean: true, want: "is the content folder"},
		{name: "a bind mount", output: "BOUND", bind: "content", clean: true, want: "is the content folder, under another name (a bind mount?): "},
		{name: "inside a bind mount", output: "BOUND/news", bind: "content", clean: true, want: "/content, under another name (a bind mount?): "},
		{name: "a bind mount of a folder inside", output: "BOUND", bind: "content/articles", clean: true, want: "/content, under another name (a bind mount?): "},
		{name: "holds it through a bind mount", output: "BOUND", bind: ".", clean: true, want: "/content, under another name (a bind mount?): "},
		{name: "--out", out: "content", want: "--out "},
		{name: "--out holds it", output: "public", out: ".", want: "holds the content folder"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := site(t, 3)
			// A section named like the pages' folder, and a file beside an
			// article: a build into the content folder would take them for
			// its own.
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig+"  offsets: all\nfilters: [section]\n")
			cfg := strings.Replace(siteConfig, "news: {politics: Politics}", "news: {politics: Politics}\n  articles: {2019: Old}", 1)
			base, err := os.MkdirTemp("", "feedgen-link")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(base) })
			link, bound := filepath.Join(base, "linked"), filepath.Join(base, "bound")
			if tt.output != "" {
				cfg += "output_dir: " + strings.NewReplacer("LINK", link, "BOUND", bound).Replace(tt.output) + "\n"
			}
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), cfg)
			testfiles.WriteFile(t, filepath.Join(dir, "content/articles/2019/post.md"), article(9, "2019-01-01T10:00:00"))
			testfiles.WriteFile(t, filepath.Join(dir, "content/articles/2019/notes.txt"), "mine")
			if tt.link {
				if err := os.Symlink(filepath.Join(dir, "content"), link); err != nil {
					t.Fatal(err)
				}
			}
			if tt.bind != "" {
				testfiles.BindMount(t, filepath.Join(dir, tt.bind), bound)
			}
			opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Clean: tt.clean}
			if tt.out != "" {
				opt.OutDir = filepath.Join(dir, tt.out)
			}
			before, beforeBase := snap(t, filepath.Dir(dir)), snapshot{}
			if tt.bind != "" {
				beforeBase = snap(t, base)
			}
			_, err = New(opt).Build(context.Background())
			var dl diag.List
			if !errors.As(err, &dl) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a config error with %q", err, tt.want)
			}
			if d := diffSnap(before, snap(t, filepath.Dir(dir))); len(d) > 0 {
				t.Errorf("the refused build changed %v", d)
			}
			if tt.bind != "" {
				if d := diffSnap(beforeBase, snap(t, base)); len(d) > 0 {
					t.Errorf("the refused build changed %v", d)
				}
			}
		})
	}
}

// TestStraysRefused checks a first build into a folder that holds files
// under articles/ named like pages that no build of it wrote: it refuses,
// naming them, and changes nothing; with Clean it deletes them (files
// whose names no build writes are never deleted: TestForeignKeptWithClean); and no build touches a file outside
// articles/, manifest.json and its marker.
func TestStraysRefused(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	outside := map[string]string{
		"index.html":        "<html>",
		"assets/app.js":     "js",
		"articles.json":     "{}",
		".manifest.json.x":  "not a temporary file of feedgen's",
		"manifest.json.bak": "mine",
	}
	for p, data := range outside {
		testfiles.WriteFile(t, filepath.Join(out, p), data)
	}
	testfiles.WriteFile(t, filepath.Join(out, "articles/2019/7/0.json"), "<p>post")
	testfiles.WriteFile(t, filepath.Join(out, "articles/tag/x/index.json"), "<p>index")
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/.7.json.1-0.tmp"), "looks like a temporary file of a page no build has")
	before := snap(t, out)
	_, err := builder(dir).Build(context.Background())
	var se *strayError
	if !errors.As(err, &se) {
		t.Fatalf("got %v, want the refusal of files no build wrote", err)
	}
	for _, want := range []string{"holds 3 files that no feedgen build wrote", "has no manifest.json", "articles/2019/7/0.json", "articles/tag/x/index.json", "articles/2/.7.json.1-0.tmp", "--clean"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("the refused build changed %v", d)
	}

	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Clean: true}
	if _, err := New(opt).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Rebuilds: with other pages (stale ones deleted), unchanged (the
	// shortcut), and after a killed build.
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "limits: [2, 3]", "limits: [2]", 1))
	mustBuild(t, dir)
	mustBuild(t, dir)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a9.md"), article(9, "2025-01-09T10:00:00"))
	killedBuild(t, dir, killPoint{"page", 2})
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig)
	mustBuild(t, dir)
	got := snap(t, out)
	for p, data := range outside {
		if got[p].data != data {
			t.Errorf("%s: %q, want %q as it was", p, got[p].data, data)
		}
	}
	clean := cleanBuild(t, dir)
	for p := range outside {
		delete(got, p)
	}
	identical(t, got, clean)
}

// TestKilledFirstBuildRepaired kills a first build (no manifest yet) at
// several points: the build after it finds the pages it wrote listed in
// its marker, deletes or rewrites them, and refuses nothing.
func TestKilledFirstBuildRepaired(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process per kill point")
	}
	for _, k := range []killPoint{{"page", 1}, {"page", 5}, {"deleted", 1}, {"manifest", 1}} {
		t.Run(k.String(), func(t *testing.T) {
			dir := site(t, 12)
			killedBuild(t, dir, k)
			// The next build has fewer pages: those the killed one wrote
			// and this one does not have are to be deleted.
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "limits: [2, 3]", "limits: [2]", 1))
			mustBuild(t, dir)
			identical(t, snap(t, filepath.Join(dir, "public")), cleanBuild(t, dir))
		})
	}
}

// TestMarkerLists checks what the marker of an unfinished build lists:
// the pages the last manifest does not, with those of a marker already
// there, and that only paths under articles/ are taken from one.
func TestMarkerLists(t *testing.T) {
	dir := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(dir, outdir.Unfinished), "an older build\narticles/9/0.json\n../../etc/passwd\nmanifest.json\narticles/../x\n")
	pending := readPending(dir)
	if strings.Join(pending, " ") != "articles/9/0.json" {
		t.Fatalf("readPending = %q", pending)
	}
	got := newPages([]string{"articles/2/0.json", "articles/index.json", "articles/9/0.json"}, nil, pending)
	if strings.Join(got, " ") != "articles/2/0.json articles/9/0.json articles/index.json" {
		t.Errorf("newPages = %q", got)
	}
	if err := outdir.Mark(dir, got); err != nil {
		t.Fatal(err)
	}
	if back := readPending(dir); strings.Join(back, " ") != strings.Join(got, " ") {
		t.Errorf("read back %q, want %q", back, got)
	}
}

func TestTempOf(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"articles/2/.0.json.123-0.tmp", "articles/2/0.json"},
		{".manifest.json.7-12.tmp", "manifest.json"},
		{"articles/.index.json.1-0.tmp", "articles/index.json"},
		{"articles/2/0.json.123-0.tmp", ""},  // no leading dot
		{"articles/2/.0.json.12x-0.tmp", ""}, // not a pid
		{"articles/2/.0.json.123.tmp", ""},   // no -N
		{"articles/2/..123-0.tmp", ""},       // no name
		{"articles/2/.0.json.123-0.tmpx", ""},
	} {
		got, ok := tempOf(tt.in)
		if ok != (tt.want != "") || got != tt.want {
			t.Errorf("tempOf(%q) = %q, %v; want %q", tt.in, got, ok, tt.want)
		}
	}
}

// TestRebuildKeepsFileInTheWay checks a Builder that wrote the folder
// last (watch mode), which does not scan it again: a file someone put
// where a new page of its next build goes is refused, not overwritten.
func TestRebuildKeepsFileInTheWay(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	b := builder(dir)
	if _, err := b.Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a4.md"), article(4, "2025-01-04T10:00:00"))
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/3.json"), "mine") // the new page of offset 3
	_, err := b.Rebuild(context.Background(), []string{filepath.Join(dir, "content/news/politics/a4.md")})
	var se *strayError
	if !errors.As(err, &se) || !strings.Contains(err.Error(), "articles/2/3.json") {
		t.Fatalf("got %v, want the refusal of articles/2/3.json", err)
	}
	if got := snap(t, out)["articles/2/3.json"].data; got != "mine" {
		t.Errorf("the file in the way holds %q", got)
	}
	// The next build of this Builder, which finds the marker, names it
	// too; one told to clean replaces it.
	if _, err := b.Build(context.Background()); !errors.As(err, &se) {
		t.Errorf("the build after: %v", err)
	}
	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Clean: true}
	if _, err := New(opt).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	identical(t, snap(t, out), cleanBuild(t, dir))
}

// TestOutThroughLink checks an output folder named through a link and
// "..": x/../y with x a link into the content folder is where the kernel
// takes it (inside the content folder), and is refused, writing nothing
// (the probe wrote a page over a file of the content folder).
func TestOutThroughLink(t *testing.T) {
	dir := site(t, 3)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/y/articles/index.json"), "USER")
	if err := os.Symlink(filepath.Join(dir, "content/news/politics"), filepath.Join(dir, "x")); err != nil {
		t.Fatal(err)
	}
	before := snap(t, filepath.Join(dir, "content"))
	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, OutDir: "x/../y"}
	chdir(t, dir)
	_, err := New(opt).Build(context.Background())
	if err == nil || !strings.Contains(err.Error(), "lies inside the content folder") {
		t.Fatalf("got %v, want the refusal of an output folder inside the content folder", err)
	}
	if d := diffSnap(before, snap(t, filepath.Join(dir, "content"))); len(d) > 0 {
		t.Errorf("the refused build changed %v", d)
	}
	if _, err := os.Stat(filepath.Join(dir, "y")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the refused build made y: %v", err)
	}
}

// TestCleanNoLinks checks that --clean never writes through a link: a
// link in place of a folder of pages, or of articles/ itself, is deleted
// (not what it points to) before any page is written; and a Builder that
// does not scan (it wrote the folder last) refuses a link put there since.
func TestCleanNoLinks(t *testing.T) {
	for _, link := range []string{"articles/2", "articles"} {
		t.Run(link, func(t *testing.T) {
			dir := site(t, 3)
			victim := t.TempDir()
			testfiles.WriteFile(t, filepath.Join(victim, "0.json"), "PRECIOUS")
			out := filepath.Join(dir, "public")
			os.MkdirAll(filepath.Dir(filepath.Join(out, link)), 0o755)
			if err := os.Symlink(victim, filepath.Join(out, link)); err != nil {
				t.Fatal(err)
			}
			if _, err := builder(dir).Build(context.Background()); !errors.As(err, new(*strayError)) {
				t.Fatalf("got %v, want the refusal of the link", err)
			}
			opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Clean: true}
			if _, err := New(opt).Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			if got := snap(t, victim); len(got) != 1 || got["0.json"].data != "PRECIOUS" {
				t.Errorf("the folder the link pointed to holds %v", keysOf(got))
			}
			identical(t, snap(t, out), cleanBuild(t, dir))
		})
	}
	t.Run("after the last build", func(t *testing.T) {
		dir := site(t, 3)
		out := filepath.Join(dir, "public")
		b := builder(dir)
		if _, err := b.Build(context.Background()); err != nil {
			t.Fatal(err)
		}
		victim := t.TempDir()
		if err := os.RemoveAll(filepath.Join(out, "articles/3")); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(victim, filepath.Join(out, "articles/3")); err != nil {
			t.Fatal(err)
		}
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a4.md"), article(4, "2025-01-04T10:00:00"))
		_, err := b.Rebuild(context.Background(), []string{filepath.Join(dir, "content/news/politics/a4.md")})
		if !errors.As(err, new(*strayError)) || !strings.Contains(err.Error(), "articles/3") {
			t.Fatalf("got %v, want the refusal of the link articles/3", err)
		}
		if got := snap(t, victim); len(got) != 0 {
			t.Errorf("wrote %v through the link", keysOf(got))
		}
	})
}

func keysOf(s snapshot) []string {
	var out []string
	for k := range s {
		out = append(out, k)
	}
	return out
}

// TestBuildName checks which names under articles/ a build may delete as
// its own (--clean, stale pages): only those it writes.
func TestBuildName(t *testing.T) {
	for _, tt := range []struct {
		p    string
		want bool
	}{
		{"articles/20/0.json", true},
		{"articles/index.json", true},
		{"articles/tag/go/3/60.json", true},
		{"articles/tag/go/index.json", true},
		{"articles/2/.7.json.1-0.tmp", true},
		{chunk.ChunkPath([32]byte{0xab}), true},
		{"articles/chunks/" + strings.Repeat("ab", 32) + ".json", false},
		{"articles/tag/go/chunks.json", true},
		{"articles/precious.md", false},
		{"articles/index.html", false},
		{"articles/2019/post.html", false},
		{"articles/notes.txt", false},
		{"articles/20/00.json", false},
		{"articles/20/-1.json", false},
		{"articles/0/0.json", false},
		{"articles/20/0.json.bak", false},
		{"articles/.precious.md.1-0.tmp", false},
		{"articles", false},
		{"manifest.json", false},
	} {
		if got := buildName(tt.p); got != tt.want {
			t.Errorf("buildName(%q) = %t, want %t", tt.p, got, tt.want)
		}
	}
}

// TestForeignKeptWithClean checks the probe's case (M3): a source article
// under the output's articles/ is never deleted, not with Clean either:
// the build refuses, naming it, and changes nothing; a stray page is
// still deleted by Clean once the foreign file is moved out.
func TestForeignKeptWithClean(t *testing.T) {
	dir := site(t, 3)
	out := filepath.Join(dir, "public")
	mustBuild(t, dir)
	testfiles.WriteFile(t, filepath.Join(out, "articles/precious.md"), article(99, "2025-01-20T10:00:00"))
	testfiles.WriteFile(t, filepath.Join(out, "articles/20/index.html"), "<p>")
	testfiles.WriteFile(t, filepath.Join(out, "articles/2/9.json"), "{}")
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a4.md"), article(4, "2025-01-04T10:00:00"))
	var log bytes.Buffer
	opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Log: &log, Clean: true}
	before := snap(t, out)
	_, err := New(opt).Build(context.Background())
	var fe *foreignError
	if !errors.As(err, &fe) {
		t.Fatalf("got %v, want the refusal of files whose names no build writes", err)
	}
	for _, want := range []string{out + "/articles holds 2 files whose names no feedgen build writes", "articles/20/index.html, articles/precious.md;", "even with --clean", "move them out of " + out + "/articles "} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	if d := diffSnap(before, snap(t, out)); len(d) > 0 {
		t.Errorf("the refused build changed %v", d)
	}
	if log.Len() > 0 {
		t.Errorf("log %q, want nothing", log.String())
	}
	os.Remove(filepath.Join(out, "articles/precious.md"))
	os.Remove(filepath.Join(out, "articles/20/index.html"))
	if _, err := New(opt).Build(context.Background()); err != nil {
		t.Fatal(err)
	}
	if exists(filepath.Join(out, "articles/2/9.json")) {
		t.Error("--clean left the stray page articles/2/9.json")
	}
}

// TestForeignThroughBindMount is the probe's layout (M3): one folder
// mounted both as the output folder and as a section of the content
// folder, holding a source article under articles/. A build, with Clean
// too, refuses the output folder (it is a folder of the content, by
// device and inode) and deletes nothing; were it let through, it would
// still not delete the article (TestForeignKeptWithClean).
func TestForeignThroughBindMount(t *testing.T) {
	if testfiles.InMountNamespace(t) {
		return
	}
	dir := site(t, 0)
	testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "news: {politics: Politics}", "news: {politics: Politics, articles: Old}", 1)+"output_dir: bound\n")
	shared := t.TempDir()
	testfiles.WriteFile(t, filepath.Join(shared, "politics/a1.md"), article(1, "2025-01-01T10:00:00"))
	testfiles.WriteFile(t, filepath.Join(shared, "articles/precious.md"), article(2, "2025-01-02T10:00:00"))
	os.MkdirAll(filepath.Join(dir, "content/news"), 0o755)
	testfiles.BindMount(t, shared, filepath.Join(dir, "content/news"))
	testfiles.BindMount(t, shared, filepath.Join(dir, "bound"))
	for _, clean := range []bool{false, true} {
		opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Clean: clean}
		_, err := New(opt).Build(context.Background())
		var dl diag.List
		if want := "output_dir: \"bound\" (" + filepath.Join(dir, "bound") + ") is " + filepath.Join(dir, "content/news") + ", a folder mounted inside the content folder"; !errors.As(err, &dl) || !strings.Contains(err.Error(), want) {
			t.Errorf("clean %t: got %v, want a config error with %q", clean, err, want)
		}
		if !exists(filepath.Join(shared, "articles/precious.md")) {
			t.Fatalf("clean %t: the source article was deleted (%v)", clean, err)
		}
	}
}
