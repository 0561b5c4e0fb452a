package preview

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/testfiles"
)

func mustSymlink(t *testing.T, target, name string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(name), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(target, name); err != nil {
		t.Fatal(err)
	}
}

func mustRename(t *testing.T, from, to string) {
	t.Helper()
	if err := os.Rename(from, to); err != nil {
		t.Fatal(err)
	}
}

// TestPreviewContentReplaced replaces the content folder by another (mv
// content old && mv new content): the preview serves the new articles, and
// follows edits in the new folder.
func TestPreviewContentReplaced(t *testing.T) {
	tests := []struct {
		name    string
		config  string
		content string // the content folder, relative to the site
	}{
		{"beside config.yaml", previewConfig, "content"},
		{"content_dir elsewhere", previewConfig + "content_dir: src/content\n", "src/content"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), tt.config)
			content := filepath.Join(dir, tt.content)
			for _, id := range []string{"1", "2", "3"} {
				testfiles.WriteFile(t, filepath.Join(content, "news/politics/a"+id+".md"), previewArticle(id, "Old "+id))
			}
			// The new folder has the same files, edited, but for one.
			staging := filepath.Join(dir, "staging")
			for _, id := range []string{"1", "2"} {
				testfiles.WriteFile(t, filepath.Join(staging, "news/politics/a"+id+".md"), previewArticle(id, "Replaced "+id))
			}
			p := runPreview(t, dir, "")

			mustRename(t, content, filepath.Join(dir, "old"))
			mustRename(t, staging, content)
			eventually(t, "the new folder's articles", func() bool {
				page := get(t, p.url)
				return strings.Contains(page, `"count":2,`) && strings.Contains(page, "Replaced 2") && !strings.Contains(page, "Old ")
			})

			// The new folder is watched.
			testfiles.WriteFile(t, filepath.Join(content, "news/politics/a2.md"), previewArticle("2", "Edited in the new folder"))
			eventually(t, "the edit in the new folder", func() bool { return strings.Contains(get(t, p.url), "Edited in the new folder") })
		})
	}
}

// TestPreviewSymlinks edits what links in the content lead to: an
// article's target, and the folder a content folder that is a link leads
// to.
func TestPreviewSymlinks(t *testing.T) {
	t.Run("article", func(t *testing.T) {
		dir, elsewhere := t.TempDir(), t.TempDir()
		testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), previewConfig)
		testfiles.WriteFile(t, filepath.Join(dir, "content/news/politics/a1.md"), previewArticle("1", "Title 1"))
		testfiles.WriteFile(t, filepath.Join(elsewhere, "shared.md"), previewArticle("2", "Shared"))
		mustSymlink(t, filepath.Join(elsewhere, "shared.md"), filepath.Join(dir, "content/news/politics/a2.md"))
		p := runPreview(t, dir, "")
		if page := get(t, p.url); !strings.Contains(page, "Shared") {
			t.Fatalf("the linked article is not served: %s", page)
		}

		testfiles.WriteFile(t, filepath.Join(elsewhere, "shared.md"), previewArticle("2", "Shared and edited"))
		eventually(t, "the edit of the link's target", func() bool { return strings.Contains(get(t, p.url), "Shared and edited") })

		// An atomic save of the target.
		testfiles.WriteFile(t, filepath.Join(elsewhere, ".shared.md.swp"), previewArticle("2", "Saved atomically"))
		mustRename(t, filepath.Join(elsewhere, ".shared.md.swp"), filepath.Join(elsewhere, "shared.md"))
		eventually(t, "the atomic save of the link's target", func() bool { return strings.Contains(get(t, p.url), "Saved atomically") })
	})
	t.Run("content folder", func(t *testing.T) {
		dir := t.TempDir()
		testfiles.WriteFile(t, filepath.Join(dir, "config.yaml"), previewConfig)
		testfiles.WriteFile(t, filepath.Join(dir, "one/news/politics/a1.md"), previewArticle("1", "In one"))
		testfiles.WriteFile(t, filepath.Join(dir, "two/news/politics/a1.md"), previewArticle("1", "In two"))
		mustSymlink(t, "one", filepath.Join(dir, "content"))
		p := runPreview(t, dir, "")

		testfiles.WriteFile(t, filepath.Join(dir, "one/news/politics/a1.md"), previewArticle("1", "Edited in one"))
		eventually(t, "the edit in the link's target", func() bool { return strings.Contains(get(t, p.url), "Edited in one") })

		// The link pointed at another folder (ln -sfn two content).
		mustSymlink(t, "two", filepath.Join(dir, "content.tmp"))
		mustRename(t, filepath.Join(dir, "content.tmp"), filepath.Join(dir, "content"))
		eventually(t, "the link's new target", func() bool { return strings.Contains(get(t, p.url), "In two") })
		testfiles.WriteFile(t, filepath.Join(dir, "two/news/politics/a1.md"), previewArticle("1", "Edited in two"))
		eventually(t, "the edit in the link's new target", func() bool { return strings.Contains(get(t, p.url), "Edited in two") })
	})
}
