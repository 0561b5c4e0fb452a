package content

import (
	"bytes"
	"context"
	"io/fs"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"time"

	"github.com/feedgen/feedgen/internal/listing"
)

// TestWalkCompare checks that walkCompare orders paths as fs.WalkDir
// finds them, which is not the order of their bytes ("a-b/x" sorts
// before "a/x", and is walked after it).
func TestWalkCompare(t *testing.T) {
	fsys := fstest.MapFS{}
	for _, p := range []string{"a/x/1.md", "a-b/x/1.md", "a.b/x/1.md", "ab/x/1.md", "a/x-y/1.md", "a/x/1-2.md", "a/x/1.md.md", "a/xy/0.md", "b/a/a.md", "a/x0/1.md", "A/x/1.md"} {
		fsys[p] = &fstest.MapFile{}
	}
	var walked []string
	fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if !d.IsDir() {
			walked = append(walked, p)
		}
		return err
	})
	sorted := slices.Clone(walked)
	slices.Reverse(sorted)
	slices.SortFunc(sorted, walkCompare)
	if !slices.Equal(sorted, walked) {
		t.Errorf("sorted by walkCompare:\n%q\nwalked:\n%q", sorted, walked)
	}
	if slices.IsSortedFunc(walked, strings.Compare) {
		t.Error("the walk's order is the bytes' order: the test shows nothing")
	}
}

// cachedFS is a content folder whose files have modification times (a
// stamp of a MapFS is its size and time alone).
func cachedFS(files map[string]string) fstest.MapFS {
	fsys := fstest.MapFS{}
	for name, data := range files {
		fsys[name] = &fstest.MapFile{Data: []byte(data), ModTime: time.Date(2025, 3, 1, 0, 0, 0, 0, time.UTC)}
	}
	return fsys
}

// later is a file clock long after every file of cachedFS changed.
func later() time.Time { return time.Now().Add(time.Hour) }

// writeCache writes the cache of site with extra bytes "x" + id for
// every published article.
func writeCache(t *testing.T, site *Site, key [32]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	err := site.WriteCache(&buf, key, []byte("tag"), func(a *Article) ([]byte, bool) { return []byte("x" + itoa(a.ID)), true })
	if err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func itoa(i int64) string { return strconv.FormatInt(i, 10) }

// TestCacheRoundTrip checks that a load with the cache of the one before
// it reads no file whose stamp is the same, parses no file whose bytes
// are the same, and gives the articles a parse gives (as slimmed:
// Article.Slim), drafts and scheduled ones included, with the extra bytes
// they were written with; and that the files it does not vouch for are
// read and parsed.
func TestCacheRoundTrip(t *testing.T) {
	files := map[string]string{
		"news/politics/a.md":     strings.Replace(good, "author: ivan\n", "author: ivan\ntags: [go, rust]\n", 1),
		"news/politics/b.md":     strings.Replace(good2, "published: 2025-01-03T10:00:00", "published: 2025-01-03T10:00:00.5+05:00", 1),
		"news/politics/draft.md": "---\nid: 3\ntitle: D\npublished: 2025-01-03T10:00:00\nauthor: ivan\ndraft: true\n---\n",
		"news/politics/later.md": "---\nid: 4\ntitle: L\npublished: 2027-01-03T10:00:00\nauthor: ivan\n---\n",
		"news/politics/warn.md":  "---\nid: 5\ntitle: W\npublished: 2025-01-03T10:00:00\nauthor: ivan\nautor: x\n---\n",
	}
	key := CacheKey([]byte("k"))
	fsys := cachedFS(files)
	first := loadFS(t, NewLoader(testCfg(t)), fsys, Options{FileClock: later, Parsed: func(a *Article) { a.Slim(listing.FieldTags) }})
	data := writeCache(t, first, key)

	tests := []struct {
		name       string
		change     func(fsys fstest.MapFS)
		key        [32]byte
		read, pars int
	}{
		{"nothing changed", func(fstest.MapFS) {}, key, 1, 1}, // the file with a warning
		{"a file touched", func(fsys fstest.MapFS) { fsys["news/politics/a.md"].ModTime = later() }, key, 2, 1},
		{"a file edited", func(fsys fstest.MapFS) {
			fsys["news/politics/a.md"].Data = []byte(strings.Replace(files["news/politics/a.md"], "Hello", "Hi", 1))
		}, key, 2, 2},
		{"a file added", func(fsys fstest.MapFS) {
			fsys["news/politics/c.md"] = &fstest.MapFile{Data: []byte(strings.Replace(good, "id: 1", "id: 9", 1))}
		}, key, 2, 2},
		{"another key", func(fstest.MapFS) {}, CacheKey([]byte("other")), 5, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fsys := cachedFS(files)
			tt.change(fsys)
			cache, err := ReadCache(bytes.NewReader(data))
			if err != nil {
				t.Fatal(err)
			}
			var kept []string
			var mu sync.Mutex
			opt := Options{FileClock: later, Cache: cache, Parsed: func(a *Article) { a.Slim(listing.FieldTags) }}
			if cache.Key() == tt.key {
				opt.Kept = func(a *Article, extra []byte) bool { // called on several goroutines
					mu.Lock()
					kept = append(kept, a.Path+" "+string(extra))
					mu.Unlock()
					return true
				}
			}
			site := loadFS(t, NewLoader(testCfg(t)), fsys, opt)
			if site.Read != tt.read || site.Reparsed != tt.pars {
				t.Errorf("read %d files, parsed %d; want %d, %d", site.Read, site.Reparsed, tt.read, tt.pars)
			}
			if cache.Damage() != "" {
				t.Errorf("damage %q", cache.Damage())
			}
			plain := loadFS(t, NewLoader(testCfg(t)), fsys, Options{Parsed: func(a *Article) { a.Slim(listing.FieldTags) }})
			if site.Digest != plain.Digest || site.Drafts != plain.Drafts || site.Scheduled != plain.Scheduled || !site.NextScheduled.Equal(plain.NextScheduled) {
				t.Errorf("got digest %x, %d drafts, %d scheduled next %v; a plain load %x, %d, %d, %v",
					site.Digest, site.Drafts, site.Scheduled, site.NextScheduled, plain.Digest, plain.Drafts, plain.Scheduled, plain.NextScheduled)
			}
			if got, want := describeArticles(site.Articles), describeArticles(plain.Articles); got != want {
				t.Errorf("articles:\n%s\nwant, as a plain load gives them:\n%s", got, want)
			}
			if got, want := site.Warnings.Error(), plain.Warnings.Error(); got != want {
				t.Errorf("warnings %q, want %q", got, want)
			}
			for _, k := range kept {
				if name, extra, _ := strings.Cut(k, " "); !strings.HasPrefix(extra, "x") || strings.Contains(name, "draft") || strings.Contains(name, "later") {
					t.Errorf("kept %q: want published articles only, with their extra bytes", k)
				}
			}
		})
	}
}

// describeArticles writes what a build takes of articles, one a line.
func describeArticles(articles []*Article) string {
	var b strings.Builder
	for _, a := range articles {
		b.WriteString(strings.Join([]string{itoa(a.ID), a.URL, strings.Join(a.Tags, "|"), a.AuthorKey,
			a.Published.String(), a.Instant.String(), a.Instant.Location().String(), a.Section, a.SectionSlug, a.Slug,
			a.Path, itoa(int64(a.Line)), itoa(int64(a.Index)), boolText(a.Draft), boolText(a.Shown == nil)}, " "))
		b.WriteByte('\n')
	}
	return b.String()
}

func boolText(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestCacheDamaged checks that a cache changed since it was written
// gives the records before the change, each checked, and none after:
// their files are read and parsed, and Damage says where it stopped.
func TestCacheDamaged(t *testing.T) {
	files := map[string]string{}
	for i := range 9 {
		files["news/politics/a"+itoa(int64(i))+".md"] = strings.Replace(good, "id: 1", "id: 1"+itoa(int64(i)), 1)
	}
	key := CacheKey()
	first := loadFS(t, NewLoader(testCfg(t)), cachedFS(files), Options{FileClock: later})
	data := writeCache(t, first, key)
	tests := []struct {
		name   string
		change func(d []byte) []byte
		damage string
		pars   int // at least
	}{
		{"whole", func(d []byte) []byte { return d }, "", 0},
		{"cut short", func(d []byte) []byte { return d[:len(d)*2/3] }, "cut short after ", 3},
		{"a byte flipped", func(d []byte) []byte { d[len(d)/2] ^= 1; return d }, "changed since a build wrote it", 4},
		{"no end", func(d []byte) []byte { return d[:len(d)-6] }, "cut short after 9 records", 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cache, err := ReadCache(bytes.NewReader(tt.change(bytes.Clone(data))))
			if err != nil {
				t.Fatal(err)
			}
			site := loadFS(t, NewLoader(testCfg(t)), cachedFS(files), Options{FileClock: later, Cache: cache, Kept: func(*Article, []byte) bool { return true }})
			if tt.damage == "" && cache.Damage() != "" || !strings.Contains(cache.Damage(), tt.damage) {
				t.Errorf("damage %q, want %q", cache.Damage(), tt.damage)
			}
			if site.Reparsed < tt.pars || tt.pars == 0 && site.Reparsed != 0 {
				t.Errorf("parsed %d files, want %d", site.Reparsed, tt.pars)
			}
			if len(site.Articles) != 9 {
				t.Errorf("%d articles, want 9", len(site.Articles))
			}
		})
	}
	for _, head := range [][]byte{nil, []byte("feedgen sources 2\n"), data[:len(cacheMagic)+10], append(bytes.Clone(data[:40]), 0xff)} {
		if _, err := ReadCache(bytes.NewReader(head)); err != ErrCacheFormat {
			t.Errorf("ReadCache(%q): %v, want ErrCacheFormat", head, err)
		}
	}
}

// FuzzReadCache feeds arbitrary bytes to the cache's reader, as a load
// finds files: it must never panic, and a record it gives must be one
// whose check holds.
func FuzzReadCache(f *testing.F) {
	files := map[string]string{"news/politics/a.md": good, "news/politics/b.md": good2}
	site, err := NewLoader(testCfg(f)).Load(context.Background(), cachedFS(files), Options{Now: now, Root: "content", FileClock: later})
	if err != nil {
		f.Fatal(err)
	}
	var buf bytes.Buffer
	site.WriteCache(&buf, CacheKey(), nil, func(*Article) ([]byte, bool) { return []byte("extra"), true })
	f.Add(buf.Bytes())
	f.Add(buf.Bytes()[:buf.Len()/2])
	f.Fuzz(func(t *testing.T, data []byte) {
		cache, err := ReadCache(bytes.NewReader(data))
		if err != nil {
			return
		}
		cache.articles = true
		for _, name := range []string{"news/politics/a.md", "news/politics/b.md", "news/politics/c.md"} {
			if k, ok := cache.find(name); ok && (k.size < 0 || k.art != nil && k.art.instNsec >= 1e9) {
				t.Errorf("%s: a record out of range: %+v", name, k)
			}
		}
	})
}
