package yamlnode

import (
	"fmt"
	"testing"

	"gopkg.in/yaml.v3"
)

// TestStringsItems checks what a list of texts says of an item that is
// not one: a tag with a colon and a space, which YAML reads as a
// mapping, gets the item quoted.
func TestStringsItems(t *testing.T) {
	for _, tt := range []struct {
		doc, want string
	}{
		{"tags: [a, b]", ""},
		{"tags:\n  - ok\n  - Note: x", `3: want a list of texts, item Note: x is a mapping (a colon followed by a space); quote it: "Note: x"`},
		{"tags: [a: b]", `1: want a list of texts, item a: b is a mapping (a colon followed by a space); quote it: "a: b"`},
		{"tags:\n  - Say: \"hi\"", `2: want a list of texts, item is a mapping`},
		{"tags:\n  - a: 1\n    b: 2", `2: want a list of texts, item is a mapping`},
		{"tags:\n  - x:", `2: want a list of texts, item is a mapping`},
		{"tags:\n  - [a]", `2: want a list of texts, item is a list`},
		{"tags:\n  - {b: c}", `2: want a list of texts, item is a mapping`},
		{"tags: [{b: c}]", `1: want a list of texts, item is a mapping`},
		{`tags: ['a\b: c']`, ""},
		{`tags: [a\b: c"d]`, `1: want a list of texts, item a\b: c"d is a mapping (a colon followed by a space); quote it: "a\\b: c\"d"`},
	} {
		var doc yaml.Node
		if err := yaml.Unmarshal([]byte(tt.doc), &doc); err != nil {
			t.Fatalf("%q: %v", tt.doc, err)
		}
		_, err := Strings(doc.Content[0].Content[1])
		got := ""
		if le, ok := err.(*LineError); ok {
			got = fmt.Sprintf("%d: %s", le.Line, le.Msg)
		} else if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%q:\ngot  %s\nwant %s", tt.doc, got, tt.want)
		}
	}
}
