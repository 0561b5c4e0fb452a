package build

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

const filterConfig = siteConfig + "filters: [section, category, tag, author]\n"

// taggedArticle is article(id, date) with tags.
func taggedArticle(id int, date, tags string) string {
	return strings.Replace(article(id, date), "author: ivan\n", "author: ivan\ntags: ["+tags+"]\n", 1)
}

// TestFiltersIncremental edits a site with every filter, build after
// build, with the same Builder (told what changed) and with a new one: a
// build rewrites exactly the pages whose bytes change, in every
// collection, deletes the pages of a tag no article carries any more, and
// ends as a clean build would.
func TestFiltersIncremental(t *testing.T) {
	for _, newBuilder := range []bool{false, true} {
		name := "same builder"
		if newBuilder {
			name = "new builder"
		}
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), filterConfig)
			tagsOf := func(i int) string {
				if i%2 == 0 {
					return "Go, even"
				}
				return "Go, odd"
			}
			p := func(i int) string { return "content/news/politics/a" + itoa(i) + ".md" }
			for i := 1; i <= 9; i++ {
				testfiles.WriteFile(t, filepath.Join(dir, p(i)), taggedArticle(i, "2025-01-0"+itoa(i)+"T10:00:00", tagsOf(i)))
			}
			testfiles.WriteFile(t, filepath.Join(dir, p(10)), taggedArticle(10, "2025-01-10T10:00:00", "Go, solo"))
			b := builder(dir)
			if _, err := b.Build(context.Background()); err != nil {
				t.Fatal(err)
			}
			out := filepath.Join(dir, "public")
			if _, err := os.Stat(filepath.Join(out, "articles/tag/solo/2/0.json")); err != nil {
				t.Fatalf("no page of tag solo: %v", err)
			}
			steps := []struct {
				name, file, data string
				gone             string // a folder the step empties
			}{
				{"body of an odd article", p(3), strings.Replace(taggedArticle(3, "2025-01-03T10:00:00", tagsOf(3)), "Body 3", "Body three", 1), ""},
				{"tag removed", p(10), taggedArticle(10, "2025-01-10T10:00:00", "Go"), "articles/tag/solo"},
				{"tag added", p(4), taggedArticle(4, "2025-01-04T10:00:00", "Go, even, new"), ""},
			}
			for _, st := range steps {
				before := snap(t, out)
				waitNewerModTime(t, before) // a rewrite shows in the modification time
				testfiles.WriteFile(t, filepath.Join(dir, st.file), st.data)
				var err error
				if newBuilder {
					_, err = builder(dir).Build(context.Background())
				} else {
					_, err = b.Rebuild(context.Background(), []string{filepath.Join(dir, st.file)})
				}
				if err != nil {
					t.Fatalf("%s: %v", st.name, err)
				}
				after := snap(t, out)
				var changed []string
				for _, d := range diffSnap(before, after) {
					if d[0] == 't' {
						t.Errorf("%s: %s rewritten with the same bytes", st.name, d[1:])
					}
					if strings.Contains(d, "articles/tag/") || strings.Contains(d, "articles/author/") {
						changed = append(changed, d)
					}
				}
				if len(changed) == 0 {
					t.Errorf("%s: no page of a filtered collection changed", st.name)
				}
				if st.gone != "" {
					if _, err := os.Stat(filepath.Join(out, st.gone)); !os.IsNotExist(err) {
						t.Errorf("%s: %s still there (%v)", st.name, st.gone, err)
					}
				}
				identical(t, after, cleanBuild(t, dir))
			}
			res, err := builder(dir).Build(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if !res.Skipped || res.Written != 0 {
				t.Errorf("no-change build: skipped %t, %d written; want the shortcut", res.Skipped, res.Written)
			}
		})
	}
}
