package main

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/habit"
)

// TestCommandHabits runs every habit of habit.Commands, with and without
// an argument after it: a bad command line (exit 2) that names the
// command to run instead.
func TestCommandHabits(t *testing.T) {
	for _, h := range habit.Commands() {
		for _, extra := range [][]string{nil, {"news/general/x.md"}, {"--frobnicate", "x"}} {
			args := append(strings.Fields(strings.TrimPrefix(h.Parent, "feedgen")), h.Name)
			args = append(args, extra...)
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				var stdout, stderr bytes.Buffer
				code := run(args, strings.NewReader(""), &stdout, &stderr, os.Getenv)
				run := h.Run
				if strings.Contains(run, "%[1]s") {
					slug := "SECTION/CATEGORY/SLUG"
					if len(extra) == 1 {
						slug = "news/general/x"
					}
					run = fmt.Sprintf(run, slug)
				}
				want := fmt.Sprintf("feedgen: unknown command %q for %q: %s, run %s\n", h.Name, h.Parent, h.What, run)
				if code != exitUsage || !strings.HasPrefix(stderr.String(), want) {
					t.Errorf("exit %d, stderr:\n%s\nwant exit 2, stderr starting:\n%s", code, stderr.String(), want)
				}
			})
		}
	}
}

// TestArticleArg checks how a habit's argument becomes new article's
// SECTION/CATEGORY/SLUG.
func TestArticleArg(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "SECTION/CATEGORY/SLUG"},
		{[]string{"--kind"}, "SECTION/CATEGORY/SLUG"},
		{[]string{"x"}, "SECTION/CATEGORY/x"},
		{[]string{"x.md"}, "SECTION/CATEGORY/x"},
		{[]string{"posts/x.md"}, "SECTION/posts/x"},
		{[]string{"news/general/x.md"}, "news/general/x"},
		{[]string{"content/news/general/x.md"}, "news/general/x"},
		{[]string{"/news/general/x/"}, "news/general/x"},
	} {
		if got := habit.ArticleArg(tt.args); got != tt.want {
			t.Errorf("habit.ArticleArg(%q) = %q, want %q", tt.args, got, tt.want)
		}
	}
}
