package feed

import (
	"bytes"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/listing"
)

// tagged returns articles newest first, each of a section, category,
// author key and tags as given.
func tagged(specs ...string) []*content.Article {
	t0 := time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)
	var out []*content.Article
	for i, s := range specs {
		var sec, cat, author string
		fmt.Sscanf(s, "%s %s %s", &sec, &cat, &author)
		if author == "-" {
			author = ""
		}
		tags := splitTags(s)
		out = append(out, &content.Article{
			ID: int64(100 + i), Shown: &content.Shown{Title: "t" + strconv.Itoa(i)}, Published: t0.Add(-time.Duration(i) * time.Hour),
			Section: sec, SectionSlug: cat, AuthorKey: author, Tags: tags, Index: i,
		})
	}
	return out
}

// splitTags returns the tags of a spec: what follows "|", split on "|".
func splitTags(s string) []string {
	var tags []string
	for i := 0; i < len(s); i++ {
		if s[i] == '|' {
			j := i + 1
			for j < len(s) && s[j] != '|' {
				j++
			}
			tags = append(tags, s[i+1:j])
			i = j - 1
		}
	}
	return tags
}

// TestFilteredCollections checks which collections a listing has and
// which articles (by id, in listing order) each holds.
func TestFilteredCollections(t *testing.T) {
	arts := tagged(
		"news politics ivan |Go|go|Go", // a tag given twice counts once
		"news economy maria |Go | Ёжик",
		"digests weekly - |ёжик|",      // an empty tag selects nothing; no author key
		"news politics ivan |a/b?c#d%", // a value that needs encoding
	)
	tests := []struct {
		filters []string
		want    map[string][]int64 // dir -> ids
	}{
		{nil, map[string][]int64{"articles": {100, 101, 102, 103}}},
		{[]string{"section"}, map[string][]int64{
			"articles": {100, 101, 102, 103}, "articles/section/news": {100, 101, 103}, "articles/section/digests": {102},
		}},
		{[]string{"category"}, map[string][]int64{
			"articles": {100, 101, 102, 103},
			"articles/category/politics/section/news":  {100, 103},
			"articles/category/economy/section/news":   {101},
			"articles/category/weekly/section/digests": {102},
		}},
		{[]string{"tag", "author"}, map[string][]int64{
			"articles":             {100, 101, 102, 103},
			"articles/tag/_47o":    {100},
			"articles/tag/go":      {100},
			"articles/tag/_47o_20": {101},
			"articles/tag/_20_d0_81_d0_b6_d0_b8_d0_ba": {101},
			"articles/tag/_d1_91_d0_b6_d0_b8_d0_ba":    {102},
			"articles/tag/a_2fb_3fc_23d_25":            {103},
			"articles/author/ivan":                     {100, 103},
			"articles/author/maria":                    {101},
		}},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.filters), func(t *testing.T) {
			l := New(base, paging(2), tt.filters, arts)
			got := map[string][]int64{}
			var dirs []string
			for _, c := range l.Collections {
				dirs = append(dirs, c.Dir)
				if c.Dir != listing.CollectionDir(c.Params) {
					t.Errorf("collection %v in %s, want %s", c.Params, c.Dir, listing.CollectionDir(c.Params))
				}
				for _, a := range c.Articles {
					got[c.Dir] = append(got[c.Dir], a.ID)
				}
				if c.Count() != len(c.Articles) {
					t.Errorf("%s: count %d, %d articles", c.Dir, c.Count(), len(c.Articles))
				}
			}
			if dirs[0] != listing.Dir || !slices.IsSorted(dirs[1:]) {
				t.Errorf("collections in the order %q, want the main listing then sorted by folder", dirs)
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("got %v\nwant %v", got, tt.want)
			}
		})
	}
}

// TestFilteredPages checks every page of every filtered collection
// against the page of a listing of only its articles: the same count and
// results, and the links of the collection (listing.AppendHead with its
// parameters). The filtered pages are put together article by article
// from the main listing's bytes; the other listing's pages are slices of
// its own chunks.
func TestFilteredPages(t *testing.T) {
	var specs []string
	for i := range 700 { // more than one chunk of the main listing
		specs = append(specs, fmt.Sprintf("s%d c%d a%d |t%d|all|", i%3, i%2, i%5, i%7))
	}
	p := paging(3, 20)
	all := listing.FilterNames()
	l := New(base, p, all, tagged(specs...))
	if len(l.Collections) != 1+3+6+8+5 {
		t.Fatalf("%d collections, want 23", len(l.Collections))
	}
	// The reference: each collection holds exactly the articles of the
	// main listing that match its parameters, in the main listing's order,
	// and every value an article has has its collection.
	match := func(a *content.Article, params []listing.Param) bool {
		for _, p := range params {
			ok := false
			switch p.Key {
			case "section":
				ok = a.Section == p.Value
			case "category":
				ok = a.SectionSlug == p.Value
			case "tag":
				ok = slices.Contains(a.Tags, p.Value)
			case "author":
				ok = a.AuthorKey == p.Value
			}
			if !ok {
				return false
			}
		}
		return true
	}
	values := map[string]bool{}
	for _, a := range l.Main().Articles {
		values["section="+a.Section] = true
		values["category="+a.SectionSlug+"&section="+a.Section] = true
		values["author="+a.AuthorKey] = true
		for _, tag := range a.Tags {
			if tag != "" { // an empty tag selects nothing
				values["tag="+tag] = true
			}
		}
	}
	for _, c := range l.Collections[1:] {
		var want []*content.Article
		for _, a := range l.Main().Articles {
			if match(a, c.Params) {
				want = append(want, a)
			}
		}
		if !slices.Equal(c.Articles, want) {
			t.Errorf("%s: %d articles, the reference %d", c.Dir, len(c.Articles), len(want))
		}
		var key []string
		for _, p := range c.Params {
			key = append(key, p.Key+"="+p.Value)
		}
		delete(values, strings.Join(key, "&"))
	}
	if len(values) > 0 {
		t.Errorf("values without a collection: %v", values)
	}

	var scratch []byte
	alones := map[*Collection]*Listing{}
	for _, pg := range l.Pages() {
		c := pg.Coll
		if len(c.Params) == 0 {
			continue
		}
		alone := alones[c]
		if alone == nil {
			alone = New(base, p, nil, c.Articles)
			alones[c] = alone
		}
		ap := Page{Coll: alone.Main(), Limit: pg.Limit, Offset: pg.Offset}
		head := len(listing.AppendHead(nil, base, nil, c.Count(), pg.Limit, strconv.Itoa(pg.Offset)))
		want := listing.AppendHead(nil, base, c.Params, c.Count(), pg.Limit, strconv.Itoa(pg.Offset))
		want = append(want, mustPage(t, alone, ap)[head:]...)
		got := mustPage(t, l, pg)
		if string(got) != string(want) {
			t.Fatalf("%s:\ngot  %.300s\nwant %.300s", pg.Path, got, want)
		}
		var n int
		if n, scratch = l.PageSize(pg, scratch); n != len(got) {
			t.Errorf("%s: PageSize %d, want %d", pg.Path, n, len(got))
		}
		in, _ := l.PageInput(pg, nil)
		ain, _ := alone.PageInput(ap, nil)
		if in == ain {
			t.Errorf("%s: the same input as the unfiltered page, whose links differ", pg.Path)
		}
	}
}

// TestUpdateMatchesNew checks that a listing made by Update after
// another, whose articles mostly come from it (same values), has the
// collections and pages New makes of the same articles: with an article
// removed, one edited into other collections (a new value), one new, a
// collection left without articles and one new; and with other filters.
func TestUpdateMatchesNew(t *testing.T) {
	all := listing.FilterNames()
	before := tagged("s1 c1 a1 |t1|t2|", "s1 c2 a2 |t2|", "s2 c1 - |t3|t3|", "s2 c3 a1 |t4|", "s1 c1 a3", "s3 c1 a2 |t1|")
	edited := tagged("s4 c9 a9 |t2|t5|")[0]
	edited.ID, edited.Published, edited.Index = before[1].ID, before[1].Published, 1
	added := tagged("x x x", "s1 c1 a1 |t6|", "x x x")[1]
	after := []*content.Article{before[0], edited, before[2], before[4], before[5], added}
	p := paging(2, 3)
	for _, tt := range []struct {
		name          string
		filters, then []string
	}{
		{"same filters", all, all},
		{"other filters", []string{"tag"}, all},
	} {
		t.Run(tt.name, func(t *testing.T) {
			prev := New(base, p, tt.filters, before)
			got, want := Update(prev, base, p, tt.then, after), New(base, p, tt.then, after)
			if len(got.Collections) != len(want.Collections) {
				t.Fatalf("%d collections, want %d", len(got.Collections), len(want.Collections))
			}
			for i, c := range got.Collections {
				w := want.Collections[i]
				if c.Dir != w.Dir || !slices.Equal(c.Params, w.Params) || !slices.Equal(c.Articles, w.Articles) {
					t.Errorf("collection %d: %s %v %d articles, want %s %v %d articles", i, c.Dir, c.Params, c.Count(), w.Dir, w.Params, w.Count())
				}
			}
			gp, wp := got.Pages(), want.Pages()
			if len(gp) != len(wp) {
				t.Fatalf("%d pages, want %d", len(gp), len(wp))
			}
			for i := range gp {
				if g, w := mustPage(t, got, gp[i]), mustPage(t, want, wp[i]); !bytes.Equal(g, w) {
					t.Errorf("page %s:\n got %s\nwant %s", gp[i].Path, g, w)
				}
			}
		})
	}
}

// TestUpdateReusesChunks checks a listing made by Update after another
// whose articles' bytes it keeps where they are (see reuse): after a new
// article, an edited one, a removed one and an old one, each Update
// following the last, its pages are New's, and its main listing is
// runs of the chunks before it, a few articles copied.
func TestUpdateReusesChunks(t *testing.T) {
	specs := make([]string, 400)
	for i := range specs {
		specs[i] = fmt.Sprintf("s%d c%d a%d |t%d|", i%3, i%2, i%5, i%7)
	}
	arts := tagged(specs...)
	newest := tagged(append([]string{"s1 c1 a1 |t1|"}, specs...)...)[0]
	newest.ID, newest.Published = 9000, arts[0].Published.Add(time.Hour)
	oldest := tagged(specs...)[399]
	oldest.ID, oldest.Published = 50, arts[399].Published.Add(-time.Hour)
	p := paging(3, 20, 50)
	filters := listing.FilterNames()
	prev := New(base, p, filters, arts)
	for _, step := range []struct {
		name   string
		change func([]*content.Article) []*content.Article
	}{
		{"a new article", func(a []*content.Article) []*content.Article { return append([]*content.Article{newest}, a...) }},
		{"an edited article", func(a []*content.Article) []*content.Article {
			e := *a[150]
			e.Shown = &content.Shown{Title: "Edited"}
			return append(append(slices.Clone(a[:150]), &e), a[151:]...)
		}},
		{"a removed article", func(a []*content.Article) []*content.Article { return append(slices.Clone(a[:300]), a[301:]...) }},
		{"an old article", func(a []*content.Article) []*content.Article { return append(slices.Clone(a), oldest) }},
		{"the first article removed", func(a []*content.Article) []*content.Article { return slices.Clone(a[1:]) }},
	} {
		arts = step.change(arts)
		got, want := Update(prev, base, p, filters, arts), New(base, p, filters, arts)
		gp, wp := got.Pages(), want.Pages()
		if len(gp) != len(wp) {
			t.Fatalf("%s: %d pages, want %d", step.name, len(gp), len(wp))
		}
		for i := range gp {
			if g, w := mustPage(t, got, gp[i]), mustPage(t, want, wp[i]); !bytes.Equal(g, w) {
				t.Fatalf("%s: page %s:\n got %s\nwant %s", step.name, gp[i].Path, g, w)
			}
		}
		m, pm := got.Main(), prev.Main()
		shared, total := 0, 0
		for _, ch := range m.chunks {
			total += len(ch)
			for _, pch := range pm.chunks {
				for at := range pch {
					if len(ch) > 0 && &pch[at] == &ch[0] {
						shared += len(ch)
						break
					}
				}
			}
		}
		if shared < total*3/4 {
			t.Errorf("%s: %d of the main listing's %d bytes are prev's, want most", step.name, shared, total)
		}
		prev = got
	}
	// Edits all over the listing, each an Update after the last: its
	// chunks stay bounded (past the bound, it is written anew).
	for k := range 80 {
		i := (k * 137) % len(arts)
		e := *arts[i]
		e.Shown = &content.Shown{Title: fmt.Sprintf("Edit %d", k)}
		arts = append(append(slices.Clone(arts[:i]), &e), arts[i+1:]...)
		got, want := Update(prev, base, p, filters, arts), New(base, p, filters, arts)
		if n, most := len(got.Main().chunks), reuseChunks+runtime.GOMAXPROCS(0); n > most {
			t.Fatalf("edit %d: %d chunks, want at most %d", k, n, most)
		}
		for off := 0; off < len(arts); off += 40 {
			pg := Page{Coll: got.Main(), Limit: 50, Offset: off}
			if g, w := mustPage(t, got, pg), mustPage(t, want, Page{Coll: want.Main(), Limit: 50, Offset: off}); !bytes.Equal(g, w) {
				t.Fatalf("edit %d: page at %d differs", k, off)
			}
		}
		prev = got
	}
}
