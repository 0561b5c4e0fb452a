package content

import (
	"bytes"
	"context"
	"crypto/sha256"
	"slices"
	"testing"
	"testing/fstest"
)

// mapFS returns files as a file system.
func mapFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data)}
	}
	return fsys
}

func loadFS(t *testing.T, l *Loader, fsys fstest.MapFS, opt Options) *Site {
	t.Helper()
	opt.Now, opt.Root = now, "content"
	site, err := l.Load(context.Background(), fsys, opt)
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	return site
}

const good2 = "---\nid: 2\ntitle: Second\npublished: 2025-01-03T10:00:00\nauthor: ivan\n---\nBody two.\n"

// TestDigest checks that Site.Digest changes with the path or bytes of any
// article file, and with nothing the loader ignores.
func TestDigest(t *testing.T) {
	base := map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2}
	with := func(change func(m map[string]string)) map[string]string {
		m := map[string]string{}
		for k, v := range base {
			m[k] = v
		}
		change(m)
		return m
	}
	want := loadFS(t, NewLoader(testCfg(t)), mapFS(base), Options{}).Digest
	if again := loadFS(t, NewLoader(testCfg(t)), mapFS(base), Options{}).Digest; again != want {
		t.Fatalf("two loads of the same content: digests %x and %x", again, want)
	}
	tests := []struct {
		name string
		same bool
		fsys map[string]string
	}{
		{"one byte of a body", false, with(func(m map[string]string) { m["news/politics/b.md"] = good2[:len(good2)-2] + "!\n" })},
		{"a draft added", false, with(func(m map[string]string) {
			m["news/politics/c.md"] = "---\nid: 3\ntitle: C\npublished: 2025-01-03T10:00:00\nauthor: ivan\ndraft: true\n---\n"
		})},
		{"a file removed", false, with(func(m map[string]string) { delete(m, "news/politics/b.md") })},
		{"a file renamed", false, with(func(m map[string]string) {
			m["news/politics/c.md"] = m["news/politics/b.md"]
			delete(m, "news/politics/b.md")
		})},
		{"two files swap bytes", false, with(func(m map[string]string) { m["news/politics/a.md"], m["news/politics/b.md"] = good2, good })},
		{"an ignored file", true, with(func(m map[string]string) { m["news/politics/_c.md"] = "anything" })},
		{"a hidden folder", true, with(func(m map[string]string) { m["news/.git/c.md"] = "anything" })},
		{"a file not .md", true, with(func(m map[string]string) { m["news/politics/notes.txt"] = "anything" })},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := loadFS(t, NewLoader(testCfg(t)), mapFS(tt.fsys), Options{}).Digest
			if (got == want) != tt.same {
				t.Errorf("digest %x, base %x: want same %v", got, want, tt.same)
			}
		})
	}
}

// TestDigestFromCache checks that a caching loader, which takes unchanged
// files from its cache, gives the digest a new loader gives.
func TestDigestFromCache(t *testing.T) {
	fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
	l := NewLoader(testCfg(t))
	l.Cache = true
	loadFS(t, l, fsys, Options{})
	fsys["news/politics/b.md"] = &fstest.MapFile{Data: []byte(good2 + "More.\n")}
	got := loadFS(t, l, fsys, Options{Changed: []string{"news/politics/b.md"}})
	if got.Reparsed != 1 {
		t.Fatalf("reparsed %d files, want 1", got.Reparsed)
	}
	if want := loadFS(t, NewLoader(testCfg(t)), fsys, Options{}).Digest; got.Digest != want {
		t.Errorf("digest from the cache %x, want %x", got.Digest, want)
	}
}

// TestUnchanged checks Options.Unchanged: asked with the digest the Site
// gets, it stops before parsing when it says yes, and otherwise the Site
// is what a plain load gives, also when the bytes kept from the first pass
// do not fit and files are read again.
func TestUnchanged(t *testing.T) {
	fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
	plain := loadFS(t, NewLoader(testCfg(t)), fsys, Options{})
	ids := func(s *Site) []int64 {
		var ids []int64
		for _, a := range s.Articles {
			ids = append(ids, a.ID)
		}
		slices.Sort(ids)
		return ids
	}
	for _, tt := range []struct {
		name   string
		answer bool
		keep   int64
	}{
		{"unchanged", true, keepLimit},
		{"changed", false, keepLimit},
		{"changed, nothing kept", false, 0},
		{"changed, one file kept", false, int64(len(good))},
	} {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLoader(testCfg(t))
			l.keep = tt.keep
			var asked [][sha256.Size]byte
			site := loadFS(t, l, fsys, Options{Unchanged: func(p Probe) bool {
				asked = append(asked, p.Digest)
				return tt.answer
			}})
			if len(asked) != 1 || asked[0] != plain.Digest {
				t.Fatalf("asked with %x, want once with %x", asked, plain.Digest)
			}
			if site.Digest != plain.Digest || site.Unchanged != tt.answer {
				t.Errorf("got digest %x unchanged %v, want %x %v", site.Digest, site.Unchanged, plain.Digest, tt.answer)
			}
			wantIDs := ids(plain)
			if tt.answer {
				wantIDs = nil
			}
			if got := ids(site); !slices.Equal(got, wantIDs) {
				t.Errorf("got articles %v, want %v", got, wantIDs)
			}
		})
	}
}

// TestUnchangedKeptBytes checks that the second pass parses the bytes
// the first pass kept, those its digest was made of, rather than read the
// files again; and reads them again when nothing could be kept.
func TestUnchangedKeptBytes(t *testing.T) {
	for _, tt := range []struct {
		name string
		keep int64
		want []string // titles, sorted
	}{
		{"kept", keepLimit, []string{"Hello", "Second"}},
		{"nothing kept", 0, []string{"Hello again", "Second again"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			fsys := mapFS(map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2})
			l := NewLoader(testCfg(t))
			l.keep = tt.keep
			site := loadFS(t, l, fsys, Options{Unchanged: func(Probe) bool {
				// Edited between the passes.
				for _, f := range fsys {
					f.Data = bytes.Replace(f.Data, []byte("Hello"), []byte("Hello again"), 1)
					f.Data = bytes.Replace(f.Data, []byte("Second"), []byte("Second again"), 1)
				}
				return false
			}})
			var got []string
			for _, a := range site.Articles {
				got = append(got, a.Title)
			}
			slices.Sort(got)
			if !slices.Equal(got, tt.want) {
				t.Errorf("got titles %q, want %q", got, tt.want)
			}
		})
	}
}

// TestUnchangedNotAsked checks when Options.Unchanged is not asked: the
// content has errors found while walking it, or the loader has a cache
// (the caller knows more than the digest would tell).
func TestUnchangedNotAsked(t *testing.T) {
	ask := func(asked *bool) func(Probe) bool {
		return func(Probe) bool { *asked = true; return true }
	}
	var asked bool
	_, err := NewLoader(testCfg(t)).Load(context.Background(),
		mapFS(map[string]string{"news/politics/a.md": good, "news/stray.md": good2}),
		Options{Now: now, Root: "content", Unchanged: ask(&asked)})
	if err == nil || asked {
		t.Errorf("article outside a category: err %v, asked %v; want the error, not asked", err, asked)
	}

	fsys := mapFS(map[string]string{"news/politics/a.md": good})
	l := NewLoader(testCfg(t))
	l.Cache = true
	loadFS(t, l, fsys, Options{})
	asked = false
	if site := loadFS(t, l, fsys, Options{Unchanged: ask(&asked)}); asked || site.Unchanged || len(site.Articles) != 1 {
		t.Errorf("caching loader: asked %v, unchanged %v, %d articles; want not asked, 1 article", asked, site.Unchanged, len(site.Articles))
	}
}

// TestNextScheduled checks Site.NextScheduled: the earliest scheduled
// publication, zero when nothing is scheduled.
func TestNextScheduled(t *testing.T) {
	art := func(id int, pub string) string {
		return "---\nid: " + string(rune('0'+id)) + "\ntitle: T\npublished: " + pub + "\nauthor: ivan\n---\n"
	}
	site := loadFS(t, NewLoader(testCfg(t)), mapFS(map[string]string{
		"news/politics/a.md": art(1, "2025-01-02T10:00:00"),
		"news/politics/b.md": art(2, "2027-03-01T10:00:00+03:00"),
		"news/politics/c.md": art(3, "2027-02-01T10:00:00+03:00"),
	}), Options{})
	if want := "2027-02-01T07:00:00Z"; site.Scheduled != 2 || site.NextScheduled.UTC().Format("2006-01-02T15:04:05Z") != want {
		t.Errorf("got %d scheduled, next %v; want 2, next %s", site.Scheduled, site.NextScheduled.UTC(), want)
	}
	if site := loadFS(t, NewLoader(testCfg(t)), mapFS(map[string]string{"news/politics/a.md": good}), Options{}); !site.NextScheduled.IsZero() {
		t.Errorf("nothing scheduled: next %v, want zero", site.NextScheduled)
	}
}
