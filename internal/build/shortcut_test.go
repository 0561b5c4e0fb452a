package build

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outdir"
	"github.com/feedgen/feedgen/internal/testfiles"
)

// TestUnchangedInputs checks the no-change shortcut of a new Builder (a
// new process): it parses no file when the code, config, options, content
// and the articles the build time lists are those the output folder's
// manifest records, and only then; every build ends with the output a
// clean build gives.
func TestUnchangedInputs(t *testing.T) {
	later := buildTime.Add(365 * 24 * time.Hour)
	earlier := time.Date(2025, 1, 3, 0, 0, 0, 0, time.UTC) // before a3 and a4 are published
	newest := time.Date(2025, 1, 4, 10, 0, 0, 0, time.UTC) // a4
	scheduled := time.Date(2027, 6, 1, 10, 0, 0, 0, time.UTC)
	at := func(now time.Time) func(o *Options) {
		return func(o *Options) { o.Now = func() time.Time { return now } }
	}
	tests := []struct {
		name     string
		change   func(t *testing.T, dir string)
		opt      func(o *Options)
		shortcut bool
		// refused: the build refuses a file no build wrote, changing
		// nothing; then one with Clean deletes or overwrites it.
		refused bool
		written int // -1: not checked
		deleted int // -1: not checked
	}{
		{name: "nothing", shortcut: true},
		{name: "a stray page in the output", refused: true, written: 0, deleted: 1, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/99.json"), "{}")
		}},
		{name: "a temporary file of a killed build", shortcut: true, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/.0.json.123-0.tmp"), "{")
		}},
		{name: "a page file cut short", written: 1, change: func(t *testing.T, dir string) {
			p := filepath.Join(dir, "public", "articles", "2", "0.json")
			data, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/0.json"), string(data[:len(data)-1]))
		}},
		{name: "a page file deleted", written: 1, change: func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, "public", "articles", "3", "0.json"))
		}},
		{name: "an article edited", written: -1, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a2.md"), strings.Replace(article(2, "2025-01-02T10:00:00"), "Body 2", "Body two", 1))
		}},
		{name: "an article added", written: -1, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a9.md"), article(9, "2025-01-09T10:00:00"))
		}},
		{name: "a draft edited", written: 0, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/draft.md"), strings.Replace(draft, "Draft body", "Other", 1))
		}},
		{name: "config edited", written: -1, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), strings.Replace(siteConfig, "Politics", "Politika", 1))
		}},
		{name: "config edited without effect", written: 0, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), siteConfig+"# a comment\n")
		}},
		{name: "a page left out of the manifest", refused: true, written: 1, change: func(t *testing.T, dir string) {
			editManifest(t, filepath.Join(dir, "public"), func(m *manifest.Manifest) { m.Files = m.Files[1:] })
		}},
		{name: "a file not a page listed in the manifest", written: 0, deleted: 1, change: func(t *testing.T, dir string) {
			testfiles.WriteFile(t, filepath.Join(dir, "public/articles/2/99.json"), "{}")
			sum := sha256.Sum256([]byte("{}"))
			editManifest(t, filepath.Join(dir, "public"), func(m *manifest.Manifest) {
				m.Files = append(m.Files, manifest.File{Path: "articles/2/99.json", Size: 2, SHA256: hex.EncodeToString(sum[:])})
			})
		}},
		{name: "build time reaches a scheduled article", written: -1, opt: at(later)},
		{name: "build time before a listed article", written: -1, deleted: -1, opt: at(earlier)},
		{name: "build time at the newest listed article", shortcut: true, opt: at(newest)},
		{name: "build time a second before it", written: -1, deleted: -1, opt: at(newest.Add(-time.Second))},
		{name: "build time a second before the scheduled article", shortcut: true, opt: at(scheduled.Add(-time.Second))},
		{name: "build time at the scheduled article", written: -1, opt: at(scheduled)},
		{name: "another base URL", written: -1, opt: func(o *Options) { o.BaseURL = "http://127.0.0.1:8080" }},
		{name: "future articles included", written: -1, opt: func(o *Options) { o.Future = true }},
		{name: "another feedgen", written: 0, opt: func(o *Options) { o.Code = "other code" }},
		{name: "no code", written: 0, opt: func(o *Options) { o.Code = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := shortcutSite(t)
			out := filepath.Join(dir, "public")
			first := mustBuild(t, dir)
			before := snap(t, out)
			if tt.change != nil {
				tt.change(t, dir)
			}
			opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode}
			if tt.opt != nil {
				tt.opt(&opt)
			}
			changed := snap(t, out)
			res, err := New(opt).Build(context.Background())
			if tt.refused {
				var se *strayError
				if !errors.As(err, &se) {
					t.Fatalf("got %v, want the refusal of a file no build wrote", err)
				}
				if d := diffSnap(changed, snap(t, out)); len(d) > 0 {
					t.Errorf("the refused build changed %v", d)
				}
				opt.Clean = true
				res, err = New(opt).Build(context.Background())
			}
			if err != nil {
				t.Fatal(err)
			}
			if took := res.Reparsed == 0; took != tt.shortcut || res.Skipped != tt.shortcut {
				t.Errorf("parsed %d files, skipped %v; want the shortcut %v", res.Reparsed, res.Skipped, tt.shortcut)
			}
			if got := strings.HasSuffix(res.Summary(), ", inputs unchanged"); got != tt.shortcut {
				t.Errorf("summary %q; want it to say the inputs were unchanged: %v", res.Summary(), tt.shortcut)
			}
			if tt.shortcut {
				if res.Articles != first.Articles || res.Drafts != first.Drafts || res.Scheduled != first.Scheduled ||
					res.Pages != first.Pages || res.Unchanged != first.Pages || res.Bytes != first.Bytes || res.Estimate != first.Bytes {
					t.Errorf("got %+v, want the counts of the build before: %+v", res, first)
				}
				if d := diffSnap(before, snap(t, out)); len(d) > 0 {
					t.Errorf("changed %v, want nothing", d)
				}
			}
			if tt.written >= 0 && res.Written != tt.written {
				t.Errorf("%d pages written, want %d", res.Written, tt.written)
			}
			if tt.deleted >= 0 && res.Deleted != tt.deleted {
				t.Errorf("%d pages deleted, want %d", res.Deleted, tt.deleted)
			}
			clean := t.TempDir()
			opt.OutDir = clean
			if _, err := New(opt).Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			got, want := snap(t, out), snap(t, clean)
			if !sameFiles(got, want) {
				t.Errorf("output %v differs from a clean build's %v", keys(got), keys(want))
			}
		})
	}
}

const draft = "---\nid: 50\ntitle: Draft\npublished: 2025-01-05T10:00:00\nauthor: ivan\ndraft: true\n---\nDraft body.\n"

// shortcutSite is site(t, 4) with a draft and an article scheduled after
// buildTime.
func shortcutSite(t *testing.T) string {
	t.Helper()
	dir := site(t, 4)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/draft.md"), draft)
	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/later.md"), article(60, "2027-06-01T10:00:00"))
	return dir
}

// sameFiles reports whether two outputs hold the same files with the same
// bytes, manifests aside but for their sources (whose digests cover the
// build time: compared only when the build times are the same).
func sameFiles(a, b snapshot) bool {
	if len(a) != len(b) {
		return false
	}
	for p, fa := range a {
		fb, ok := b[p]
		if !ok {
			return false
		}
		if p == manifest.Name {
			ma, erra := manifest.Parse([]byte(fa.data))
			mb, errb := manifest.Parse([]byte(fb.data))
			if erra != nil || errb != nil {
				return false
			}
			if !ma.BuildTime.Equal(mb.BuildTime) && ma.Source != nil && mb.Source != nil {
				ma.Source.Digest, mb.Source.Digest = "", ""
			}
			if sourceString(ma.Source) != sourceString(mb.Source) {
				return false
			}
			continue
		}
		if fa.data != fb.data {
			return false
		}
	}
	return true
}

func sourceString(s *manifest.Source) string {
	if s == nil {
		return "none"
	}
	return fmt.Sprintf("%s %d %d %v %v", s.Digest, s.Drafts, s.Scheduled, s.From, s.Until)
}

func keys(s snapshot) []string {
	var k []string
	for p := range s {
		k = append(k, p)
	}
	slices.Sort(k)
	return k
}

// TestSourceRecorded checks Manifest.Source: the counts and the bounds of
// the build times that list the same articles, none with --future, and no
// source at all after warnings, whose next build parses every file again
// to repeat them.
func TestSourceRecorded(t *testing.T) {
	dir := shortcutSite(t)
	res := mustBuild(t, dir)
	s := res.Manifest.Source
	if s == nil {
		t.Fatal("no source recorded")
	}
	from, until := time.Date(2025, 1, 4, 10, 0, 0, 0, time.UTC), time.Date(2027, 6, 1, 10, 0, 0, 0, time.UTC) // the site is in UTC
	if s.Drafts != 1 || s.Scheduled != 1 || s.From == nil || !s.From.Equal(from) || s.Until == nil || !s.Until.Equal(until) {
		t.Errorf("got source %+v from %v until %v; want 1 draft, 1 scheduled, from %v until %v", s, s.From, s.Until, from, until)
	}

	future, err := New(Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Code: testCode, Future: true, OutDir: t.TempDir()}).Build(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if s := future.Manifest.Source; s == nil || s.From != nil || s.Until != nil || s.Digest == res.Manifest.Source.Digest {
		t.Errorf("--future: got source %+v, want one without bounds and with another digest", s)
	}

	testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a1.md"), strings.Replace(article(1, "2025-01-01T10:00:00"), "author:", "autor: x\nauthor:", 1))
	for i := range 2 {
		var log bytes.Buffer
		b := builder(dir)
		b.opt.Log = &log
		res, err := b.Build(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if res.Manifest.Source != nil || res.Reparsed == 0 || !strings.Contains(log.String(), `unknown front matter key "autor"`) {
			t.Errorf("build %d with a warning: source %+v, parsed %d files, log %q; want no source, every file parsed, the warning", i+1, res.Manifest.Source, res.Reparsed, log.String())
		}
	}
}

// TestWriteZone checks that the time zone enters the source digest by its
// offsets, not its name: other time zone data under the same name is
// another input.
func TestWriteZone(t *testing.T) {
	moscow, err := time.LoadLocation("Europe/Moscow")
	if err != nil {
		t.Skip("no time zone data:", err)
	}
	var real, fixed, utc bytes.Buffer
	writeZone(&real, moscow)
	writeZone(&fixed, time.FixedZone("Europe/Moscow", 3*3600))
	writeZone(&utc, time.UTC)
	if real.String() == fixed.String() || strings.Count(real.String(), "\n") < 10 {
		t.Errorf("Moscow's offsets (%d lines) and a fixed zone of the same name write the same", strings.Count(real.String(), "\n"))
	}
	if got := utc.String(); got != "-2208988800 UTC 0\n" {
		t.Errorf("UTC: got %q, want one line", got)
	}

	dir := shortcutSite(t)
	b := builder(dir)
	if _, err := b.loadConfig(); err != nil {
		t.Fatal(err)
	}
	var content [32]byte
	before := b.sourceDigest("", content, []byte("{}"))
	b.cfg.Location = time.FixedZone("UTC", 3600)
	if b.sourceDigest("", content, []byte("{}")) == before {
		t.Error("the source digest does not change with the zone's offsets")
	}
}

// TestUnchangedRechecksUnderLock checks that the shortcut, having found the
// content unchanged, checks the manifest again once it holds the lock:
// another build may have replaced it meanwhile.
func TestUnchangedRechecksUnderLock(t *testing.T) {
	dir := shortcutSite(t)
	out := filepath.Join(dir, "public")
	mustBuild(t, dir)
	unlock, err := outdir.Lock(context.Background(), out, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	waiting := make(chan struct{})
	b := builder(dir)
	b.opt.Log = signalWriter(waiting)
	done := make(chan *Result, 1)
	go func() {
		res, err := b.Build(context.Background())
		if err != nil {
			t.Error(err)
		}
		done <- res
	}()
	<-waiting // the build found the content unchanged and waits for the lock
	editManifest(t, out, func(m *manifest.Manifest) {
		m.Source.Digest = strings.Repeat("0", 64) // as another build of other inputs would
	})
	unlock()
	if res := <-done; res == nil || res.Skipped || res.Reparsed == 0 {
		t.Errorf("got %+v; want a full build", res)
	}
}

// signalWriter closes ch on its first write.
type signalWriter chan struct{}

func (w signalWriter) Write(p []byte) (int, error) {
	select {
	case <-w:
	default:
		close(w)
	}
	return len(p), nil
}

// editManifest rewrites the manifest of the output folder out, changed by
// edit.
func editManifest(t *testing.T, out string, edit func(m *manifest.Manifest)) {
	t.Helper()
	p := filepath.Join(out, manifest.Name)
	data, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	edit(m)
	if err := writeAtomic(p, m.Marshal()); err != nil {
		t.Fatal(err)
	}
}

// TestManifestFlipRepaired checks that a byte of manifest.json changed at
// the same size (a collection's count, a digit of config_sha256, of the
// source digest) is not taken for the manifest of the same inputs: the
// next build, with --clean or not, writes it again, byte for byte as it
// was (the probe's M4: "inputs unchanged", forever).
func TestManifestFlipRepaired(t *testing.T) {
	flips := []struct {
		name string
		re   string // its first group's first byte is changed
	}{
		{"a count", `"count":(\d)`},
		{"the articles", `"articles":(\d)`},
		{"config_sha256", `"config_sha256":"([0-9a-f])`},
		{"the source digest", `"digest":"([0-9a-f])`},
	}
	for _, layout := range []string{"pages", "chunks"} {
		for _, f := range flips {
			for _, clean := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/%s/clean=%t", layout, f.name, clean), func(t *testing.T) {
					dir := shortcutSite(t)
					if layout == "chunks" {
						dir = chunkSite(t, 5)
					}
					name := filepath.Join(dir, "public", manifest.Name)
					mustBuild(t, dir)
					good, err := os.ReadFile(name)
					if err != nil {
						t.Fatal(err)
					}
					loc := regexp.MustCompile(f.re).FindSubmatchIndex(good)
					if loc == nil {
						t.Fatalf("no %s in %s", f.re, good)
					}
					bad := slices.Clone(good)
					if bad[loc[2]] == '7' {
						bad[loc[2]] = '8'
					} else {
						bad[loc[2]] = '7'
					}
					testfiles.Replace(t, name, bad)
					opt := Options{FS: os.DirFS(dir), ConfigName: "config.yaml", Root: dir, Now: fixedNow, Generator: "feedgen test", Code: testCode, Clean: clean}
					if _, err := New(opt).Build(context.Background()); err != nil {
						t.Fatal(err)
					}
					if got, _ := os.ReadFile(name); !bytes.Equal(got, good) {
						t.Errorf("manifest.json not repaired:\n%s\nwant\n%s", got, good)
					}
				})
			}
		}
	}
}
