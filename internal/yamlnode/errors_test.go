package yamlnode

import (
	"strings"
	"testing"
)

// TestSyntaxErrors holds what Parse says of malformed YAML, and where:
// the line of the problem, not the line where the mapping or list it
// is in starts (yaml.v3's), and for a value with a colon, the line
// rewritten with the value quoted.
func TestSyntaxErrors(t *testing.T) {
	// A config whose mapping starts at line 4, after comments.
	head := "# a comment\n\n# another\nsite_url: https://www.example.com\nbase_url: https://api.example.com\n"
	tests := []struct {
		name   string
		text   string
		offset int
		line   int
		msg    string
	}{
		{"colon in a headline", "id: 1\ntitle: Election: night\n", 0, 2,
			`the value of title has a colon followed by a space; quote it: title: "Election: night"`},
		{"colon, front matter offset", "id: 1\ntitle: Election: night\n", 1, 3,
			`the value of title has a colon followed by a space; quote it: title: "Election: night"`},
		{"colon and quotes", "title: Он сказал: \"нет\" \\ да\n", 0, 1,
			`the value of title has a colon followed by a space; quote it: title: "Он сказал: \"нет\" \\ да"`},
		{"colon and a comment", "title: Election: night # the headline\n", 0, 1,
			`the value of title has a colon followed by a space; quote it: title: "Election: night" # the headline`},
		{"colon at the end", "title: Breaking:\n", 0, 1,
			`the value of title has a colon at its end; quote it: title: "Breaking:"`},
		{"colon, nested key", head + "sections:\n  news:\n    weekly: Digest: week\n", 0, 8,
			`the value of weekly has a colon followed by a space; quote it: weekly: "Digest: week"`},
		{"colon in a list item's mapping", "items:\n  - name: a: b\n", 0, 2,
			`the value of name has a colon followed by a space; quote it: name: "a: b"`},
		{"mapping values, not a colon in a value", "a: b\n  c: d\n", 0, 2,
			"invalid YAML: mapping values are not allowed in this context"},
		{"indented key, mapping from line 4", head + strings.Repeat("# filler\n", 25) + " pagination:\n  default_limit: 20\n", 0, 31,
			"invalid YAML: did not find expected key: indent this line as the keys of its mapping above it, or quote the whole value before it"},
		{"over-indented nested key", head + "sections:\n  news:\n    a:\n      x: 1\n     c: C\n    d: D\n", 0, 10,
			"invalid YAML: did not find expected key: indent this line as the keys of its mapping above it, or quote the whole value before it"},
		{"text after a quoted value", head + "title: \"x\" y\n", 0, 6,
			"invalid YAML: did not find expected key: indent this line as the keys of its mapping above it, or quote the whole value before it"},
		{"unclosed flow list", head + "filters: [tag,\n  author\n", 0, 7,
			"invalid YAML: did not find expected ',' or ']'"},
		{"unclosed flow list, offset", "id: 1\ntitle: [unclosed\npublished: x\n", 1, 3,
			"invalid YAML: did not find expected ',' or ']'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.text), tt.offset)
			if err == nil {
				t.Fatal("no error")
			}
			if got := Line(err, -1); got != tt.line || err.Error() != tt.msg {
				t.Errorf("got  %d: %s\nwant %d: %s", got, err, tt.line, tt.msg)
			}
		})
	}
}
