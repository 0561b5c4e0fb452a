package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestRoundTrip writes a bundle, reads it back, and checks that it holds
// the output exactly: the manifest's bytes, every page, the config.
func TestRoundTrip(t *testing.T) {
	o := buildSite(t, smallOpt)
	data := o.write(t, Options{})
	b, err := read(data)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	mdata, err := os.ReadFile(filepath.Join(o.out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b.ManifestData, mdata) {
		t.Errorf("got manifest %.100q, want the output's", b.ManifestData)
	}
	if !bytes.Equal(b.Config, o.config) {
		t.Errorf("got config %.100q, want the site's", b.Config)
	}
	if got, want := len(b.Manifest.Files), 1+12+12; got != want {
		t.Errorf("got %d pages, want %d", got, want)
	}
	var total int64
	for _, f := range b.Manifest.Files {
		got, err := fs.ReadFile(b.FS(), f.Path)
		if err != nil {
			t.Fatal(err)
		}
		want, err := os.ReadFile(filepath.Join(o.out, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s: got %.60q, want %.60q", f.Path, got, want)
		}
		total += f.Size
	}
	want := Info{
		Format: Format, Generator: "feedgen test", BundledBy: "feedgen test", BuildTime: buildTime,
		Articles: 12, Pages: 25, Bytes: total,
	}
	if b.Info != want {
		t.Errorf("got info %+v, want %+v", b.Info, want)
	}
	if b.Size != int64(len(data)) {
		t.Errorf("got size %d, want %d", b.Size, len(data))
	}
	if err := b.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
}

// TestLayout checks the entries: sorted names, deflated, dated with the
// build time, mode 0644 from Unix, sizes in the local header, and
// bundle.json as it is documented.
func TestLayout(t *testing.T) {
	o := buildSite(t, smallOpt)
	data := o.write(t, Options{BundledBy: "feedgen v1.2.3"})
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range zr.File {
		names = append(names, f.Name)
		if f.Method != zip.Deflate {
			t.Errorf("%s: got method %d, want deflate", f.Name, f.Method)
		}
		if !f.Modified.Equal(buildTime) {
			t.Errorf("%s: got modified %v, want %v", f.Name, f.Modified, buildTime)
		}
		if got := f.Mode(); got != 0o644 {
			t.Errorf("%s: got mode %v, want -rw-r--r--", f.Name, got)
		}
		if got := f.CreatorVersion >> 8; got != 3 {
			t.Errorf("%s: got creator %d, want 3 (Unix)", f.Name, got)
		}
		if f.Flags != 0 {
			t.Errorf("%s: got flags %#x, want 0 (no data descriptor, ASCII name)", f.Name, f.Flags)
		}
		if f.Comment != "" {
			t.Errorf("%s: got comment %q, want none", f.Name, f.Comment)
		}
	}
	if !slices.IsSorted(names) {
		t.Errorf("entries not sorted: %q", names)
	}
	if got, want := names[len(names)-3:], []string{InfoName, ConfigName, ManifestName}; !slices.Equal(got, want) {
		t.Errorf("got last entries %q, want %q", got, want)
	}
	if names[0] != "articles/10/0.json" {
		t.Errorf("got first entry %q, want articles/10/0.json", names[0])
	}
	info, err := fs.ReadFile(zr, InfoName)
	if err != nil {
		t.Fatal(err)
	}
	var total int64
	m := readManifest(t, o.out)
	for _, f := range m.Files {
		total += f.Size
	}
	want := `{
  "format": 1,
  "generator": "feedgen test",
  "bundled_by": "feedgen v1.2.3",
  "build_time": "2026-11-23T06:30:15Z",
  "articles": 12,
  "pages": 25,
  "bytes": ` + itoa(total) + `
}
`
	if string(info) != want {
		t.Errorf("got bundle.json\n%s\nwant\n%s", info, want)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func readManifest(t testing.TB, out string) *manifest.Manifest {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(out, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestUnzip checks that the standard unzip tool reads a bundle and
// extracts exactly the output, dated with the build time.
func TestUnzip(t *testing.T) {
	unzip, err := exec.LookPath("unzip")
	if err != nil {
		t.Skip("no unzip here")
	}
	o := buildSite(t, smallOpt)
	dir := t.TempDir()
	name := filepath.Join(dir, "feed.zip")
	if err := os.WriteFile(name, o.write(t, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(unzip, "-tq", name).CombinedOutput(); err != nil {
		t.Fatalf("unzip -t: %v\n%s", err, out)
	}
	x := filepath.Join(dir, "x")
	cmd := exec.Command(unzip, "-q", name, "-d", x)
	cmd.Env = append(os.Environ(), "TZ=UTC")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("unzip: %v\n%s", err, out)
	}
	for _, f := range readManifest(t, o.out).Files {
		got, err := os.ReadFile(filepath.Join(x, filepath.FromSlash(f.Path)))
		if err != nil {
			t.Fatal(err)
		}
		want, _ := os.ReadFile(filepath.Join(o.out, filepath.FromSlash(f.Path)))
		if !bytes.Equal(got, want) {
			t.Errorf("%s: unzip gives other bytes", f.Path)
		}
	}
	info, err := os.Stat(filepath.Join(x, manifest.Name))
	if err != nil {
		t.Fatal(err)
	}
	if !info.ModTime().Equal(buildTime) {
		t.Errorf("got modification time %v from unzip, want %v", info.ModTime().UTC(), buildTime)
	}
}

// TestReproducible bundles the same output several ways: the bytes are
// the same whatever the number of workers, the files' modification times
// or the order they were written in.
func TestReproducible(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 60, Limits: []int{5, 20}, Seed: 4})
	first := o.write(t, Options{})
	for _, workers := range []int{1, 3, 16} {
		if got := o.write(t, Options{Workers: workers}); !bytes.Equal(got, first) {
			t.Errorf("%d workers: the bundle differs", workers)
		}
	}
	old := time.Date(2001, 2, 3, 4, 5, 6, 0, time.UTC)
	err := filepath.WalkDir(o.out, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		return os.Chtimes(p, old, old)
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := o.write(t, Options{}); !bytes.Equal(got, first) {
		t.Errorf("after touching the files: the bundle differs")
	}
	if got := o.write(t, Options{BundledBy: "feedgen v9"}); bytes.Equal(got, first) {
		t.Errorf("another bundler: the same bytes, want bundle.json to name it")
	}
}

func TestEntryTime(t *testing.T) {
	tests := []struct {
		in, want time.Time
	}{
		{buildTime, buildTime},
		{time.Date(2026, 11, 23, 9, 30, 15, 999, time.FixedZone("MSK", 3*3600)), buildTime},
		{time.Unix(0, 0), time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC)},
		{time.Date(2200, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2107, 12, 31, 23, 59, 58, 0, time.UTC)},
	}
	for _, tt := range tests {
		if got := entryTime(tt.in); !got.Equal(tt.want) || got.Location() != time.UTC {
			t.Errorf("entryTime(%v): got %v, want %v", tt.in, got, tt.want)
		}
	}
}

// TestOldBuildTime bundles a build made at SOURCE_DATE_EPOCH=0: zip cannot
// store 1970, so the entries say 1980; the bundle still verifies and
// bundle.json keeps the real build time.
func TestOldBuildTime(t *testing.T) {
	o := buildSite(t, smallOpt)
	mpath := filepath.Join(o.out, manifest.Name)
	m := readManifest(t, o.out)
	m.BuildTime = time.Unix(0, 0).UTC()
	if err := os.WriteFile(mpath, m.Marshal(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := o.write(t, Options{})
	b, err := read(data)
	if err != nil {
		t.Fatalf("read: %v", err)
	}
	if !b.Info.BuildTime.Equal(time.Unix(0, 0)) {
		t.Errorf("got build time %v, want 1970-01-01", b.Info.BuildTime)
	}
	zr, _ := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if got := zr.File[0].Modified; !got.Equal(minTime) {
		t.Errorf("got entry time %v, want %v", got, minTime)
	}
}

// TestWriteRefuses checks that an output that does not match its manifest
// is not bundled, with a message naming the page.
func TestWriteRefuses(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, out string)
		want   string
	}{
		{"no manifest", func(t *testing.T, out string) {
			os.Remove(filepath.Join(out, manifest.Name))
		}, "no build here (no manifest.json): run feedgen build first"},
		{"page changed", func(t *testing.T, out string) {
			p := filepath.Join(out, "articles", "5", "3.json")
			data, _ := os.ReadFile(p)
			data[10] ^= 1
			os.WriteFile(p, data, 0o644)
		}, "articles/5/3.json: its SHA-256 differs from the manifest: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"another config", func(*testing.T, string) {},
			"the config given is not the one the build used (its SHA-256 differs from the manifest's config_sha256): pass the config.yaml of the build's site, or build again"},
		{"build unfinished", func(t *testing.T, out string) {
			os.WriteFile(filepath.Join(out, outdir.Unfinished), nil, 0o644)
		}, "a build of the output folder is running or did not finish (it left .feedgen-unfinished): run feedgen build, and bundle once it is done"},
		{"page missing", func(t *testing.T, out string) {
			os.Remove(filepath.Join(out, "articles", "10", "11.json"))
		}, "articles/10/11.json: missing: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"page longer", func(t *testing.T, out string) {
			p := filepath.Join(out, "articles", "index.json")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, append(data, ' '), 0o644)
		}, "articles/index.json: longer than the manifest says: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"page shorter", func(t *testing.T, out string) {
			p := filepath.Join(out, "articles", "index.json")
			data, _ := os.ReadFile(p)
			os.WriteFile(p, data[:len(data)-1], 0o644)
		}, "articles/index.json: shorter than the manifest says: the output changed since its manifest was written; run feedgen build (--clean to check every file's bytes), and bundle once it is done"},
		{"manifest lists a path outside", func(t *testing.T, out string) {
			m := readManifest(t, out)
			m.Files[3].Path = "../secret.json"
			os.WriteFile(filepath.Join(out, manifest.Name), m.Marshal(), 0o644)
		}, `checking the output's manifest: manifest.json: page "../secret.json": the name leads outside the archive (..)`},
		{"manifest lists config.yaml", func(t *testing.T, out string) {
			m := readManifest(t, out)
			f := m.Files[3]
			f.Path = ConfigName
			m.Files = append(m.Files, f)
			os.WriteFile(filepath.Join(out, manifest.Name), m.Marshal(), 0o644)
		}, `checking the output's manifest: manifest.json: file config.yaml: not a file of the pages layout (page or feed)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			o := buildSite(t, smallOpt)
			tt.change(t, o.out)
			if tt.name == "another config" {
				o.config = append(o.config, "# edited\n"...)
			}
			var buf bytes.Buffer
			_, err := Write(context.Background(), &buf, os.DirFS(o.out), Options{Config: o.config})
			if err == nil || err.Error() != tt.want {
				t.Errorf("got error %v, want %q", err, tt.want)
			}
		})
	}
}

func TestWriteCanceled(t *testing.T) {
	o := buildSite(t, smallOpt)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := Write(ctx, io.Discard, os.DirFS(o.out), Options{Config: o.config})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("got error %v, want context.Canceled", err)
	}
}

func TestWriteFails(t *testing.T) {
	o := buildSite(t, smallOpt)
	_, err := Write(context.Background(), failingWriter{}, os.DirFS(o.out), Options{Config: o.config})
	if err == nil || err.Error() != "writing bundle: disk full" {
		t.Errorf("got error %v, want %q", err, "writing bundle: disk full")
	}
	if _, err := Write(context.Background(), io.Discard, os.DirFS(o.out), Options{Level: 10}); err == nil {
		t.Errorf("level 10: got no error")
	}
}

type failingWriter struct{}

func (failingWriter) Write([]byte) (int, error) { return 0, errors.New("disk full") }

// TestProgress checks that progress reaches the total once, at the end.
func TestProgress(t *testing.T) {
	o := buildSite(t, corpus.Options{Articles: 300, Limits: []int{20}, Seed: 1})
	var calls [][2]int
	o.write(t, Options{Progress: func(done, total int) { calls = append(calls, [2]int{done, total}) }})
	if len(calls) == 0 || calls[len(calls)-1] != [2]int{304, 304} {
		t.Errorf("got progress %v, want it to end at 304 of 304", calls)
	}
}

// TestRezipped checks that a bundle re-zipped by another tool (data
// descriptors, folder entries, an entry stored), whose pages are all
// there, is refused: its bytes are not those feedgen bundle wrote, and
// verify holds every one.
func TestRezipped(t *testing.T) {
	o := buildSite(t, smallOpt)
	data := o.write(t, Options{})
	if ps := problems(t, rezip(t, entries(t, data))); ps != nil {
		t.Errorf("written again as feedgen writes it: got problems %q, want none", ps)
	}
	want := []string{
		"articles/10/0.json: damaged: its local header's flags are not what feedgen bundle writes",
		"articles/10/1.json: damaged: its local header's flags are not what feedgen bundle writes",
	}
	if ps := problems(t, otherZip(t, entries(t, data))); len(ps) < 2 || !slices.Equal(ps[:2], want) {
		t.Errorf("re-zipped: got problems %q, want them to start with %q", ps, want)
	}
	stored := edit(entries(t, data), "articles/5/0.json", func(e *zipEntry) bool { e.hdr.Method = zip.Store; return true })
	if ps := problems(t, otherZip(t, stored)); ps == nil {
		t.Errorf("with an entry stored: got no problem")
	}
}

// TestTampering damages a bundle in every way the issue names, and more:
// each is found, with its message naming the entry.
func TestTampering(t *testing.T) {
	o := buildSite(t, smallOpt)
	good := o.write(t, Options{})
	const page = "articles/5/3.json"
	m := readManifest(t, o.out)
	var pageSize int64
	for _, f := range m.Files {
		if f.Path == page {
			pageSize = f.Size
		}
	}
	mutate := func(name string, f func(*zipEntry) bool) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return rezip(t, edit(entries(t, good), name, f)) }
	}
	add := func(extra ...zipEntry) func(t *testing.T) []byte {
		return func(t *testing.T) []byte { return rezip(t, append(entries(t, good), extra...)) }
	}
	file := func(name, data string) zipEntry {
		return zipEntry{hdr: zip.FileHeader{Name: name, Method: zip.Deflate}, data: []byte(data)}
	}
	manifestWith := func(f func(m string) string) func(t *testing.T) []byte {
		return mutate(ManifestName, func(e *zipEntry) bool { e.data = []byte(f(string(e.data))); return true })
	}
	tests := []struct {
		name   string
		damage func(t *testing.T) []byte
		want   []string
	}{
		{"a byte of a page changed", mutate(page, func(e *zipEntry) bool { e.data[20] ^= 0x20; return true }),
			[]string{page + ": corrupted: its SHA-256 differs from the manifest"}},
		{"a page longer", mutate(page, func(e *zipEntry) bool { e.data = append(e.data, ' '); return true }),
			[]string{page + ": corrupted: " + itoa(pageSize+1) + " bytes, the manifest says " + itoa(pageSize)}},
		{"a page dropped", mutate(page, func(*zipEntry) bool { return false }),
			[]string{page + ": missing: the manifest lists it"}},
		{"a page added", add(file("articles/5/99.json", "{}")),
			[]string{"articles/5/99.json: extra: the manifest does not list it"}},
		{"a file added at the top", add(file("README.txt", "hello")),
			[]string{"README.txt: extra: the manifest does not list it"}},
		{"a folder added", add(zipEntry{hdr: zip.FileHeader{Name: "other/", Method: zip.Store}}),
			[]string{"other/: extra: a folder that holds no page of the manifest"}},
		{"a name twice", add(file(page, "{}")),
			[]string{page + ": found 2 times: a name may appear only once"}},
		{"manifest twice", add(file(ManifestName, "{}")),
			[]string{"manifest.json: found 2 times: a name may appear only once"}},
		{"a name outside", add(file("../evil.json", "{}")),
			[]string{`"../evil.json": the name leads outside the archive (..)`}},
		{"a name outside, deeper", add(file("articles/../../evil.json", "{}")),
			[]string{`"articles/../../evil.json": the name leads outside the archive (..)`}},
		{"an absolute name", add(file("/etc/cron.d/x", "{}")),
			[]string{`"/etc/cron.d/x": absolute path: entries must be relative to the archive`}},
		{"a drive letter", add(file("C:/x.json", "{}")),
			[]string{`"C:/x.json": absolute path (a drive letter): entries must be relative to the archive`}},
		{"a backslash", add(file(`articles\5\0.json`, "{}")),
			[]string{`"articles\\5\\0.json": backslash in the name: entries must use forward slashes`}},
		{"a dot element", add(file("articles/./5/0.json", "{}")),
			[]string{`"articles/./5/0.json": not a clean relative path (an empty or . element)`}},
		{"a symbolic link", func(t *testing.T) []byte {
			data := rezip(t, append(entries(t, good), file("link", "/etc/passwd")))
			patchCentral(t, data, "link", 38, (uint32(0o120777) << 16))
			return data
		}, []string{
			"link: damaged: its central directory record's file mode is not what feedgen bundle writes",
			"and 1 more problem caused by it, not listed",
		}},
		{"manifest missing", mutate(ManifestName, func(*zipEntry) bool { return false }),
			[]string{"manifest.json: missing: a bundle holds the manifest of its build"}},
		{"bundle.json missing", mutate(InfoName, func(*zipEntry) bool { return false }),
			[]string{"bundle.json: missing: a bundle holds a description of its build"}},
		{"config.yaml missing", mutate(ConfigName, func(*zipEntry) bool { return false }),
			[]string{"config.yaml: missing: a bundle holds the config.yaml its output was built with"}},
		{"manifest of an unknown format", manifestWith(func(m string) string { return strings.Replace(m, `{"format":1,`, `{"format":2,`, 1) }),
			[]string{"manifest.json: manifest format 2 is not supported (this feedgen reads format 1): open the bundle with the feedgen that wrote it"}},
		{"manifest not JSON", manifestWith(func(m string) string { return m[:len(m)/2] }),
			[]string{"manifest.json: not a manifest: unexpected end of JSON input"}},
		{"manifest lists a page twice", manifestWith(func(m string) string {
			return strings.Replace(m, `"files":[`+"\n", `"files":[`+"\n"+`{"path":"articles/10/0.json","size":1,"sha256":"`+strings.Repeat("0", 64)+`"},`+"\n", 1)
		}), []string{"manifest.json: page articles/10/0.json: listed twice"}},
		{"bundle.json of an unknown format", mutate(InfoName, func(e *zipEntry) bool {
			e.data = bytes.Replace(e.data, []byte(`"format": 1`), []byte(`"format": 7`), 1)
			return true
		}), []string{"bundle.json: bundle format 7 is not supported (this feedgen reads format 1): open the bundle with the feedgen that wrote it"}},
		{"bundle.json disagrees", mutate(InfoName, func(e *zipEntry) bool {
			e.data = bytes.Replace(e.data, []byte(`"pages": 25`), []byte(`"pages": 24`), 1)
			e.data = bytes.Replace(e.data, []byte(`"articles": 12`), []byte(`"articles": 13`), 1)
			return true
		}), []string{"bundle.json: says articles 13, the manifest 12", "bundle.json: says pages 24, the manifest 25"}},
		{"truncated", func(*testing.T) []byte { return good[:len(good)/2] },
			[]string{"truncated: the archive stops before its end (its central directory is missing); the file was cut short, copy it again"}},
		{"truncated by one byte", func(*testing.T) []byte { return good[:len(good)-1] },
			[]string{"truncated: the archive stops before its end (its central directory is missing); the file was cut short, copy it again"}},
		{"empty", func(*testing.T) []byte { return nil },
			[]string{"not a zip archive: the file is empty"}},
		{"not a zip", func(*testing.T) []byte { return []byte("<html>404 Not Found</html>\n") },
			[]string{"not a zip archive"}},
		{"several problems", func(t *testing.T) []byte {
			es := edit(entries(t, good), page, func(*zipEntry) bool { return false })
			es = edit(es, "articles/10/2.json", func(e *zipEntry) bool { e.data[3] ^= 1; return true })
			return rezip(t, append(es, file("zz.txt", ""), file("a/../../x", "")))
		}, []string{
			`"a/../../x": the name leads outside the archive (..)`,
			"articles/10/2.json: corrupted: its SHA-256 differs from the manifest",
			page + ": missing: the manifest lists it",
			"zz.txt: extra: the manifest does not list it",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, tt.damage(t))
			if !slices.Equal(got, tt.want) {
				t.Errorf("got problems\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
		})
	}
}

// TestRawDamage changes the bytes of the archive itself, as a bad disk or
// copy would: a flipped byte in a page's compressed data, in a CRC-32, in
// a local header.
func TestRawDamage(t *testing.T) {
	o := buildSite(t, smallOpt)
	good := o.write(t, Options{})
	const page = "articles/5/3.json"
	zr, err := zip.NewReader(bytes.NewReader(good), int64(len(good)))
	if err != nil {
		t.Fatal(err)
	}
	var f *zip.File
	for _, zf := range zr.File {
		if zf.Name == page {
			f = zf
		}
	}
	off, err := f.DataOffset()
	if err != nil {
		t.Fatal(err)
	}
	header := off - int64(30+len(page)+len(f.Extra))
	if string(good[header:header+4]) != "PK\x03\x04" {
		t.Fatalf("no local header at %d", header)
	}
	tests := []struct {
		name   string
		damage func(b []byte)
		want   string // the one problem, or its start when it ends with "…"
	}{
		{"a compressed byte flipped", func(b []byte) { b[off+int64(f.CompressedSize64)/2] ^= 0x55 }, page + ": corrupted: …"},
		{"the crc flipped in both headers", func(b []byte) {
			flipCRC(b, header, page)
		}, page + ": corrupted: its CRC-32 differs from the archive's"},
		{"the local header's signature", func(b []byte) { b[header] = 'X' }, page + ": damaged: its local header's signature is not what feedgen bundle writes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b := slices.Clone(good)
			tt.damage(b)
			got := problems(t, b)
			if len(got) == 0 {
				t.Fatal("got no problem")
			}
			prefix, isPrefix := strings.CutSuffix(tt.want, "…")
			if isPrefix && !strings.HasPrefix(got[0], prefix) || !isPrefix && got[0] != tt.want {
				t.Errorf("got problems %q, want %q", got, tt.want)
			}
		})
	}
}

// flipCRC flips a bit of the CRC-32 of the entry name, whose local header
// is at header, in the local header and the central directory.
func flipCRC(b []byte, header int64, name string) {
	b[header+14] ^= 1
	for i := bytes.Index(b, []byte("PK\x01\x02")); i >= 0 && i+46 <= len(b); {
		n := int(binary.LittleEndian.Uint16(b[i+28:]))
		if string(b[i+46:i+46+n]) == name {
			b[i+16] ^= 1
			return
		}
		next := bytes.Index(b[i+4:], []byte("PK\x01\x02"))
		if next < 0 {
			return
		}
		i += 4 + next
	}
}

// TestOpen opens a bundle file, and refuses a folder and a missing file.
func TestOpen(t *testing.T) {
	o := buildSite(t, smallOpt)
	name := filepath.Join(t.TempDir(), "feed.zip")
	if err := os.WriteFile(name, o.write(t, Options{}), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := Open(context.Background(), name)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := fs.ReadFile(b.FS(), "articles/index.json"); err != nil {
		t.Error(err)
	}
	if err := b.Close(); err != nil {
		t.Error(err)
	}
	pipe := filepath.Join(filepath.Dir(name), "pipe.zip")
	testfiles.FIFO(t, pipe)
	for _, tt := range []struct{ name, want string }{
		{filepath.Dir(name), "opening bundle: " + filepath.Dir(name) + " is not a regular file (a folder): a bundle is the .zip file that feedgen bundle writes"},
		// Opened without waiting for a writer, then refused.
		{pipe, "opening bundle: " + pipe + " is not a regular file (a named pipe): a bundle is the .zip file that feedgen bundle writes"},
		{name + ".nope", "opening bundle: open " + name + ".nope: no such file or directory"},
	} {
		if _, err := Open(context.Background(), tt.name); err == nil || err.Error() != tt.want {
			t.Errorf("Open(%s): got %v, want %q", tt.name, err, tt.want)
		}
	}
}

// TestBombs checks that archives made to exhaust memory are refused from
// their headers, before anything is decompressed: a manifest or a page of
// spaces that deflates a thousand times, and a manifest far larger than
// the archive's entries call for.
func TestBombs(t *testing.T) {
	o := buildSite(t, smallOpt)
	good := o.write(t, Options{})
	const page = "articles/5/3.json"
	spaces := func(n int) []byte { return bytes.Repeat([]byte{' '}, n) }
	tests := []struct {
		name string
		data []byte
		want string
	}{
		{"manifest of spaces", rezip(t, edit(entries(t, good), ManifestName, func(e *zipEntry) bool {
			e.data = append(e.data, spaces(8<<20)...)
			return true
		})), "manifest.json: refused: "},
		{"page of spaces", rezip(t, edit(entries(t, good), page, func(e *zipEntry) bool {
			e.data = append(e.data, spaces(4<<20)...)
			return true
		})), page + ": refused: "},
		{"manifest larger than its entries call for", rezip(t, edit(entries(t, good), ManifestName, func(e *zipEntry) bool {
			r := make([]byte, 3<<20) // random bytes: no ratio to refuse
			for i := range r {
				r[i] = byte(i*7919 + i>>8*31)
			}
			e.data = append(e.data, r...)
			return true
		})), "manifest.json: too large: "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problems(t, tt.data)
			found := false
			for _, p := range got {
				found = found || strings.HasPrefix(p, tt.want)
			}
			if !found {
				t.Errorf("got problems %q, want one starting %q", got, tt.want)
			}
		})
	}
}
