package content

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// fm returns a file whose front matter is the given lines: the front
// matter's first line is line 2 of the file.
func fm(lines ...string) string {
	return "---\n" + strings.Join(lines, "\n") + "\n---\nBody.\n"
}

// TestAliasErrors checks that a problem with a value written once and used
// through an alias (*name) or a merge key (<<: *name) is reported where it
// is used, not at the anchor, and says where the value is written.
func TestAliasErrors(t *testing.T) {
	const p = "content/news/politics/a.md:"
	const (
		id     = "id: 1"
		title  = "title: x"
		pub    = "published: 2025-01-02T10:00:00"
		author = "author: ivan"
	)
	tests := []struct {
		name string
		file string
		want string
	}{
		{"text for a list", fm("title: &t Hello", "id: 3", pub, author, "tags: *t"),
			p + `6: tags: want a list of texts like [a, b], got "Hello" (through *t, written at line 2)`},
		{"text for a number", fm("x: &i abc", title, pub, author, "id: *i"),
			p + `6: id: want a positive whole number, got "abc" (through *i, written at line 2)`},
		{"mapping for a text", fm("x: &m {a: 1}", id, pub, author, "title: *m"),
			p + `6: title: want a text value, got a mapping (through *m, written at line 2)`},
		{"list for a bool", fm("x: &s [a, b]", id, title, pub, author, "draft: *s"),
			p + `7: draft: want true or false, got a list (through *s, written at line 2)`},
		{"bad date", fm("x: &d 2025-13-01T00:00:00", id, title, author, "published: *d"),
			p + `6: published: "2025-13-01T00:00:00": month 13 is out of range: months are 01 to 12, and come before the day (YYYY-MM-DD): did you mean 2025-01-13T00:00:00? (through *d, written at line 2)`},
		{"negative counter", fm("x: &n -3", id, title, pub, author, "pageviews: *n"),
			p + `7: pageviews: -3 is negative: counters are 0 or more (through *n, written at line 2)`},
		{"empty title", fm(`x: &e " "`, id, pub, author, "title: *e"),
			p + `6: title is empty: give the article a headline (through *e, written at line 2)`},
		{"unknown author", fm("x: &a nobody", id, title, pub, "author: *a"),
			p + `6: unknown author "nobody": add it to authors in config.yaml, or use author_name and author_url (through *a, written at line 2)`},
		{"relative image", fm("x: &i img/a.jpg", id, title, pub, author, "img_big: *i"),
			p + `7: img_big: "img/a.jpg" is neither a path starting with / nor an http(s) URL (through *i, written at line 2)`},
		{"alias on the next line", fm("x: &t Hello", id, title, pub, author, "tags:", "  *t"),
			p + `8: tags: want a list of texts like [a, b], got "Hello" (through *t, written at line 2)`},
		{"bad item of an aliased list", fm("x: &s [a, {b: c}]", id, title, pub, author, "tags: *s"),
			p + `7: tags: want a list of texts, item is a mapping (through *s, written at line 2)`},
		{"bad item of an aliased block list", fm("x: &s", "  - a", "  - {b: c}", id, title, pub, author, "tags: *s"),
			p + `9: tags: want a list of texts, item is a mapping (through *s, written at line 4)`},
		{"aliased item", fm("x: &m {b: c}", id, title, pub, author, "tags:", "  - a", "  - *m"),
			p + `9: tags: want a list of texts, item is a mapping (through *m, written at line 2)`},
		{"aliased key", fm("x: &k id", "*k : abc", title, pub, author),
			p + `3: id: want a positive whole number, got "abc"`},
		{"aliased key given twice", fm("x: &k title", title, pub, id, author, "*k : y"),
			p + `7: front matter: key "title" given twice (first at line 3): keep one`},

		// Merge keys take in the keys of a mapping that the front matter
		// does not set itself.
		{"merged field", fm("base: &b", "  author: ivan", "  draft: maybe", id, title, pub, "<<: *b"),
			p + `8: draft: want true or false, got "maybe" (merged through *b, written at line 4)`},
		{"merged from a list", fm("a: &a {author: ivan}", "b: &b {draft: maybe}", id, title, pub, "<<: [*a, *b]"),
			p + `7: draft: want true or false, got "maybe" (merged through *b, written at line 3)`},
		{"merged from a list on lines of their own", fm("a: &a {author: ivan}", "b: &b {draft: maybe}", id, title, pub, "<<:", "  - *a", "  - *b"),
			p + `9: draft: want true or false, got "maybe" (merged through *b, written at line 3)`},
		{"merged through a merge", fm("a: &a {draft: maybe}", "b: &b {<<: *a, author: ivan}", id, title, pub, "<<: *b"),
			p + `7: draft: want true or false, got "maybe" (merged through *b, written at line 2)`},
		{"merged list with a bad item", fm("b: &b {tags: [a, {b: c}], author: ivan}", id, title, pub, "<<: *b"),
			p + `6: tags: want a list of texts, item is a mapping (merged through *b, written at line 2)`},
		{"inline merge", fm(id, title, pub, "<<: {author: ivan,", "  draft: maybe}"),
			p + `6: draft: want true or false, got "maybe"`},
		{"inline merge of an alias", fm("x: &d maybe", id, title, pub, "<<: {author: ivan, draft: *d}"),
			p + `6: draft: want true or false, got "maybe" (through *d, written at line 2)`},
		{"merged id", fm("b: &b {id: abc, author: ivan}", title, pub, "<<: *b"),
			p + `5: id: want a positive whole number, got "abc" (merged through *b, written at line 2)`},
		{"explicit keys win", fm("b: &b {draft: maybe, author: ivan}", "<<: *b", id, title, pub, "draft: false"),
			"<nil>"},
		{"first merged wins", fm("a: &a {author: ivan}", "b: &b {author: nobody, draft: maybe}", "<<: [*a, *b]", id, title, pub, "draft: true"),
			"<nil>"},
		{"merge of a list", fm("x: &s [a]", id, title, pub, author, "<<: *s"),
			p + `7: <<: want a mapping to merge, like <<: *base, or a list of them; got a list (through *s, written at line 2)`},
		{"merge of a text", fm(id, title, pub, author, "<<: base"),
			p + `6: <<: want a mapping to merge, like <<: *base, or a list of them; got "base"`},
		{"merge of a list with a text", fm("b: &b {author: ivan}", id, title, pub, "<<: [*b, x]"),
			p + `6: <<: want a mapping to merge, like <<: *base, or a list of them; got "x"`},
		{"merge of a list of lists", fm("x: &s [a]", "b: &b {author: ivan}", id, title, pub, "<<: [*b, *s]"),
			p + `7: <<: want a mapping to merge, like <<: *base, or a list of them; got a list (through *s, written at line 2)`},
		{"merge given twice", fm("b: &b {author: ivan}", id, title, pub, "<<: *b", "<<: *b"),
			p + `7: front matter: key "<<" given twice (first at line 6): keep one`},
		{"merge of itself", fm("x: &a {<<: *a}", id, title, pub, author, "<<: *a"),
			"<nil>"},
		{"merged key given twice", fm("x: &b {author: ivan, author: ivan}", id, title, pub, "<<: *b"),
			p + `2: front matter: key "author" given twice (first at line 2): keep one`},
		{"quoted merge key is a key", fm(id, title, pub, author, `"<<": x`),
			"<nil>"},

		// Aliases to no anchor: yaml.v3 gives no line; the alias's is found.
		{"unknown anchor", fm(title, id, pub, author, "tags: *nope"),
			p + `6: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"unknown anchor in a list", fm(`title: "not *nope"`, "# nor *nope", id, pub, author, "tags: [a, *nope]"),
			p + `7: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"unknown anchor after a longer name", fm("x: &nope2 a", title, id, pub, author, "tags: [*nope2, *nope]"),
			p + `7: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"anchor after its alias", fm("tags: *t", id, title, pub, author, "x: &t [a]"),
			p + `2: *t comes before its anchor &t at line 7: move the value marked &t above its first use`},
		{"text starting with *", fm("title: *Hello", id, pub, author),
			p + `2: *Hello names no anchor: mark the value to reuse with &Hello before it, or put text that starts with * in quotes`},
		{"emphasis in a title", fm(id, "title: *Bold* news", pub, author),
			p + `3: invalid YAML: did not find expected alphabetic or numeric character: after * (an alias) or & (an anchor) comes a name of letters, digits, _ and -; put text that starts with * or & in quotes`},
		{"unknown anchor after a block scalar", fm(title, id, pub, author, "announcement: |", "  See *nope.", "tags: *nope"),
			p + `8: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"unknown anchor as a key", fm(title, id, pub, author, "*nope : x"),
			p + `6: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"unknown anchor after a line separator", fm("title: x\u2028id: 1", pub, author, "tags: *nope"),
			p + `6: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"two anchors missing", fm("tags: [*a, *b]", id, title, pub, author, "x: &b [a]"),
			p + `2: *a names no anchor: mark the value to reuse with &a before it, or put text that starts with * in quotes`},
		{"unknown anchor with leading blank lines", "\n\n" + fm(title, id, pub, author, "tags: *nope"),
			p + `8: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
		{"unknown anchor with CR LF", strings.ReplaceAll(fm(title, id, pub, author, "tags: *nope"), "\n", "\r\n"),
			p + `6: *nope names no anchor: mark the value to reuse with &nope before it, or put text that starts with * in quotes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := load(t, map[string]string{"news/politics/a.md": tt.file})
			if got := errString(err); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestMerge checks which of the keys given more than once through merge
// keys is taken: the front matter's own, then the mappings merged in the
// order given, as yaml.v3 decodes them.
func TestMerge(t *testing.T) {
	site, err := load(t, map[string]string{"news/politics/a.md": fm(
		"c: &c {pageviews: 6, comments_count: 7}",
		"a: &a {title: From a, author: ivan, tags: [a]}",
		"b: &b {title: From b, tags: [b], pageviews: 5, <<: *c}",
		"<<: [*a, *b]",
		"id: 1",
		"published: 2025-01-02T10:00:00",
		"tags: [own]",
	)})
	if err != nil {
		t.Fatal(err)
	}
	a := site.Articles[0]
	if got, want := fmt.Sprintf("%s %s %v %d %d", a.Title, a.AuthorKey, a.Tags, a.Pageviews, a.Comments), "From a ivan [own] 5 7"; got != want {
		t.Errorf("got %s, want %s", got, want)
	}

	// A key of a merged mapping is reported where it is merged.
	site, err = load(t, map[string]string{"news/politics/a.md": fm(
		"base: &b",
		"  titel: x",
		"<<: *b",
		"id: 1",
		"title: x",
		"published: 2025-01-02T10:00:00",
		"author: ivan",
	)})
	if err != nil {
		t.Fatal(err)
	}
	want := `content/news/politics/a.md:2: unknown front matter key "base" is ignored` + "\n" +
		`content/news/politics/a.md:4: unknown front matter key "titel" is ignored: did you mean "title"? (merged through *b, written at line 3)`
	if got := site.Warnings.Error(); got != want {
		t.Errorf("warnings:\ngot  %s\nwant %s", got, want)
	}
}

func TestLineAt(t *testing.T) {
	tests := []struct {
		text string
		want int
	}{
		{"*a", 1},
		{"x\n*a", 2},
		{"x\r\n*a", 2},
		{"x\r*a", 2},
		{"x\r\n\r\n\n*a", 4},
		{"x\u0085y\u2028z\u2029*a", 4},
		{"x\u00a0\u2027*a", 1},
	}
	for _, tt := range tests {
		if got := lineAt([]byte(tt.text), strings.Index(tt.text, "*")); got != tt.want {
			t.Errorf("lineAt(%q) = %d, want %d", tt.text, got, tt.want)
		}
	}
}

// aliasBombs are front matters that expand to a great many values if
// aliases and merges are followed blindly.
func aliasBombs() map[string]string {
	var list, merge, chain strings.Builder
	list.WriteString("a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol, lol]\n")
	merge.WriteString("m0: &m0 {k0: v}\n")
	chain.WriteString("c0: &c0 {k0: v}\n")
	for i := 1; i <= 40; i++ {
		fmt.Fprintf(&list, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
		fmt.Fprintf(&chain, "c%d: &c%d {k%d: v, <<: *c%d}\n", i, i, i, i-1)
	}
	// As deep as merges may go, each level merging the one below four
	// times: 4^32 merges for a reader without memory.
	for i := 1; i < maxMergeDepth; i++ {
		fmt.Fprintf(&merge, "m%d: &m%d {k%d: v, <<: [*m%d, *m%d, *m%d, *m%d]}\n", i, i, i, i-1, i-1, i-1, i-1)
	}
	const head = "id: 1\ntitle: x\npublished: 2025-01-02T10:00:00\nauthor: ivan\n"
	return map[string]string{
		"list":  "---\n" + list.String() + head + "tags: *a40\n---\n",
		"merge": "---\n" + merge.String() + head + fmt.Sprintf("<<: *m%d\n---\n", maxMergeDepth-1),
		"chain": "---\n" + chain.String() + head + "<<: *c40\n---\n",
	}
}

// TestAliasBombs checks that front matter built to expand exponentially
// through aliases is read in little time, with a clear error.
func TestAliasBombs(t *testing.T) {
	const p = "content/news/politics/a.md:"
	want := map[string]string{
		"list":  p + "47: tags: want a list of texts, item is a list (through *a40, written at line 42)",
		"merge": "<nil>",
		"chain": p + "47: <<: mappings merge each other more than 32 deep: merge fewer mappings into one another",
	}
	for name, file := range aliasBombs() {
		t.Run(name, func(t *testing.T) {
			done := make(chan error)
			go func() {
				_, err := load(t, map[string]string{"news/politics/a.md": file})
				done <- err
			}()
			select {
			case err := <-done:
				if got := errString(err); got != want[name] {
					t.Errorf("got  %s\nwant %s", got, want[name])
				}
			case <-time.After(10 * time.Second):
				t.Fatal("load did not finish: aliases expanded")
			}
		})
	}
}
