package content

import (
	"bytes"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/yamlnode"
	"gopkg.in/yaml.v3"
)

// Front matter may write a value once and use it again: an anchor names a
// value (title: &t Hello), an alias repeats it (tags: *t), and a merge key
// takes in the keys of a mapping (<<: *base). yaml.v3 links an alias to
// the node it names, whose line is the anchor's; a problem with a field is
// reported where the field is, with a note saying where its value is
// written.

// A field is one key: value entry of the front matter, its own or merged in.
type field struct {
	key     string
	keyLine int        // the key's line, or that of the alias it was merged through
	keyNote string     // for a key merged through an alias, where it is written
	value   *yaml.Node // aliases followed
	line    int        // the value's line, or that of the alias it came through
	alias   string     // that alias; "" when the value is written at line
	merged  bool       // whether the alias is that of a merge key
}

// note is what a message about text of f's value written at line n adds:
// nothing when the value is written where it is reported.
func (f field) note(n int) string {
	switch {
	case f.alias == "":
		return ""
	case f.merged:
		return fmt.Sprintf(" (merged through *%s, written at line %d)", f.alias, n)
	}
	return fmt.Sprintf(" (through *%s, written at line %d)", f.alias, n)
}

// where returns the line to report a problem with text of f's value
// written at line n, and the note to add to its message.
func (f field) where(n int) (int, string) {
	if f.alias == "" {
		return n, ""
	}
	return f.line, f.note(n)
}

// item returns how to report a problem with it, an item of f's list
// value: the field to report it with, and the line where the item is
// written. An item that is an alias, in a list written in place, is
// reported at the alias.
func (f field) item(it *yaml.Node) (field, int) {
	if f.alias != "" || it.Kind != yaml.AliasNode {
		return f, it.Line
	}
	v := deref(it)
	return field{key: f.key, keyLine: f.keyLine, value: v, line: it.Line, alias: it.Value}, v.Line
}

// maxMergeDepth bounds the merge keys that lead to a mapping: merges of
// mappings that merge others, and so on.
const maxMergeDepth = 32

// A fieldReader reads the fields of one front matter after another,
// reusing its memory: the fields one read returns are valid until the
// next. The zero fieldReader is ready to use.
type fieldReader struct {
	fields []field
	set    map[string]bool     // keys set already, once a mapping is merged
	merged map[*yaml.Node]bool // mappings read already, once one is merged
}

// read returns the entries of the front matter root: its own, in order,
// then those merged in whose keys it does not set, as yaml.v3 decodes
// them. Every mapping is read at most once, so aliases cannot make the
// work grow beyond the size of the text. A key given twice in one
// mapping, and a merge key without mappings, are errors.
func (r *fieldReader) read(root *yaml.Node) ([]field, error) {
	if root.Kind != yaml.MappingNode {
		return nil, lineErr(root.Line, "front matter: want a mapping of key: value lines, got %s", describe(root))
	}
	clear(r.fields) // drop the last document's nodes
	r.fields, r.set, r.merged = r.fields[:0], nil, nil
	if err := r.mapping(root, field{}, 0); err != nil {
		return nil, err
	}
	return r.fields, nil
}

// mapping adds the entries of m whose keys are not set already, then
// those of the mappings it merges. Reached through depth merges, the
// alias of via, if any, is the first on the way.
func (r *fieldReader) mapping(m *yaml.Node, via field, depth int) error {
	var merge *yaml.Node
	var lines map[string]int // the keys of m, when too many to look through
	if len(m.Content) > 64 {
		lines = make(map[string]int, len(m.Content)/2)
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		k, v := m.Content[i], m.Content[i+1]
		kv := deref(k)
		if kv.Kind != yaml.ScalarNode {
			return lineErr(k.Line, "front matter: a key must be a plain name")
		}
		if line, dup := keyBefore(m, i, kv.Value, lines); dup {
			return lineErr(k.Line, "front matter: key %q given twice (first at line %d): keep one", kv.Value, line)
		}
		if lines != nil {
			lines[kv.Value] = k.Line
		}
		if kv.Value == "<<" && kv.ShortTag() == "!!merge" {
			merge = v
			continue
		}
		if depth > 0 {
			if r.set[kv.Value] {
				continue // a mapping that merges m sets it
			}
			r.set[kv.Value] = true
		}
		f := field{key: kv.Value, keyLine: k.Line, value: deref(v), line: v.Line}
		switch {
		case via.alias != "":
			f.keyLine, f.keyNote = via.line, via.note(k.Line)
			f.line, f.alias, f.merged = via.line, via.alias, true
		case v.Kind == yaml.AliasNode:
			f.alias = v.Value
		}
		r.fields = append(r.fields, f)
	}
	if merge == nil {
		return nil
	}
	if depth == maxMergeDepth {
		line, _ := via.where(merge.Line)
		return lineErr(line, "<<: mappings merge each other more than %d deep: merge fewer mappings into one another", maxMergeDepth)
	}
	if depth == 0 {
		r.set = make(map[string]bool, len(r.fields))
		for _, f := range r.fields {
			r.set[f.key] = true
		}
		r.merged = map[*yaml.Node]bool{m: true}
	}
	sources := []*yaml.Node{merge}
	if merge.Kind == yaml.SequenceNode {
		sources = merge.Content
	}
	for _, s := range sources {
		v := deref(s)
		if v.Kind != yaml.MappingNode {
			line, note := via.where(s.Line)
			if via.alias == "" && s.Kind == yaml.AliasNode {
				line, note = s.Line, field{alias: s.Value}.note(v.Line)
			}
			return lineErr(line, "<<: want a mapping to merge, like <<: *base, or a list of them; got %s%s", describe(v), note)
		}
		if r.merged[v] {
			continue // its keys are set already
		}
		r.merged[v] = true
		next := via
		if next.alias == "" && s.Kind == yaml.AliasNode {
			next = field{line: s.Line, alias: s.Value, merged: true}
		}
		if err := r.mapping(v, next, depth+1); err != nil {
			return err
		}
	}
	return nil
}

// keyBefore returns the line of key among the keys of m before its i-th
// node, found in lines if not nil, and whether it is there.
func keyBefore(m *yaml.Node, i int, key string, lines map[string]int) (int, bool) {
	if lines != nil {
		line, ok := lines[key]
		return line, ok
	}
	for j := 0; j < i; j += 2 {
		if k := deref(m.Content[j]); k.Kind == yaml.ScalarNode && k.Value == key {
			return m.Content[j].Line, true
		}
	}
	return 0, false
}

func lineErr(line int, format string, args ...any) error {
	return &yamlnode.LineError{Line: line, Msg: fmt.Sprintf(format, args...)}
}

// deref follows aliases. An alias cannot name an alias, but the loop is
// bounded all the same.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// describe names what a node holds, as yamlnode's messages do.
func describe(n *yaml.Node) string {
	n = deref(n)
	switch {
	case n == nil || yamlnode.IsNull(n):
		return "an empty value"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Kind != yaml.ScalarNode:
		return "an unsupported value"
	}
	v := n.Value
	if len(v) > 40 {
		cut := 40
		for cut > 0 && !utf8.RuneStart(v[cut]) {
			cut--
		}
		v = v[:cut] + "..."
	}
	return strconv.Quote(v)
}

// badItem returns the first item of the list n that is not a text, as
// yamlnode.Strings finds it, or nil.
func badItem(n *yaml.Node) *yaml.Node {
	if n.Kind != yaml.SequenceNode {
		return nil
	}
	for _, it := range n.Content {
		if v := deref(it); v.Kind != yaml.ScalarNode || yamlnode.IsNull(v) {
			return it
		}
	}
	return nil
}

// aliasProblem rewrites an error of yamlnode.Parse about an alias of the
// front matter fm, whose first line is line offset+1 of its file, and
// reports whether it was one.
//
// yaml.v3 gives no line for an alias that names no anchor: the alias is
// found here.
func aliasProblem(fm []byte, offset int, err error) (line int, msg string, ok bool) {
	msg = err.Error()
	if msg == "invalid YAML: did not find expected alphabetic or numeric character" { // after & or *
		return yamlnode.Line(err, offset), msg + ": after * (an alias) or & (an anchor) comes a name of letters, digits, _ and -; put text that starts with * or & in quotes", true
	}
	name, ok := unknownAnchor(msg)
	if !ok {
		return 0, "", false
	}
	line = yamlnode.Line(err, offset)
	at, anchor := unknownAlias(fm, name)
	if at >= 0 {
		line = offset + lineAt(fm, at)
	}
	if anchor > 0 {
		return line, fmt.Sprintf("*%s comes before its anchor &%s at line %d: move the value marked &%s above its first use", name, name, offset+anchor, name), true
	}
	return line, fmt.Sprintf("*%s names no anchor: mark the value to reuse with &%s before it, or put text that starts with * in quotes", name, name), true
}

// unknownAlias returns the offset in fm of the alias *name that yaml.v3
// stops at for want of an anchor, or -1, and the line of fm of the anchor
// &name after it, if any.
//
// Every "*name" of the text might be the alias, or be in a comment or
// quoted text. Turned into plain text ("_name"), the alias no longer stops
// yaml.v3, while the others change nothing: with the first n kept and the
// rest turned into text, yaml.v3 stops at the alias if and only if it is
// one of the first n. A binary search for the smallest such n finds it, in
// a few parses of a front matter that is wrong anyway.
func unknownAlias(fm []byte, name string) (at, anchor int) {
	found := aliasesOf(fm, name)
	buf := make([]byte, len(fm))
	n := sort.Search(len(found)+1, func(n int) bool {
		copy(buf, fm)
		for _, i := range found[n:] {
			buf[i] = '_'
		}
		other, ok := unknownAnchor(parseError(buf, new(yaml.Node)))
		return ok && other == name
	})
	if n == 0 {
		return -1, 0 // not found: yaml.v3 reads aliases some other way
	}
	// The anchor, if there is one, comes later: with every alias of it,
	// and of a few other names that yaml.v3 stops at, turned into text,
	// the text may parse.
	copy(buf, fm)
	other := name
	for range 8 {
		for _, i := range aliasesOf(buf, other) {
			buf[i] = '_'
		}
		var doc yaml.Node
		msg := parseError(buf, &doc)
		if msg == "" {
			if a := findAnchor(&doc, name, 0); a != nil {
				anchor = a.Line
			}
			break
		}
		var ok bool
		if other, ok = unknownAnchor(msg); !ok {
			break
		}
	}
	return found[n-1], anchor
}

// aliasesOf returns the offsets of the text "*name" in text that yaml.v3
// would read as an alias of name, were it not in a comment or quoted.
func aliasesOf(text []byte, name string) []int {
	var found []int
	alias := []byte("*" + name)
	for i := 0; ; {
		j := bytes.Index(text[i:], alias)
		if j < 0 {
			return found
		}
		i += j + 1 + len(name)
		if i == len(text) || !isAnchorChar(text[i]) {
			found = append(found, i-1-len(name))
		}
	}
}

// unknownAnchor returns the name in yaml.v3's error message about an
// alias that names no anchor, and whether msg is one.
func unknownAnchor(msg string) (string, bool) {
	msg = strings.TrimPrefix(msg, "yaml: ")
	msg = strings.TrimPrefix(msg, "invalid YAML: ")
	name, ok := strings.CutPrefix(msg, "unknown anchor '")
	name, ok2 := strings.CutSuffix(name, "' referenced")
	return name, ok && ok2
}

// parseError returns the message of yaml.v3's error parsing text, or "".
func parseError(text []byte, doc *yaml.Node) string {
	if err := yaml.Unmarshal(text, doc); err != nil {
		return err.Error()
	}
	return ""
}

// isAnchorChar reports whether c can be part of an anchor's name, as
// yaml.v3 reads them.
func isAnchorChar(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '_' || c == '-'
}

// findAnchor returns the first node under n, in document order, with the
// anchor name.
func findAnchor(n *yaml.Node, name string, depth int) *yaml.Node {
	if n.Anchor == name {
		return n
	}
	if depth > 10000 {
		return nil
	}
	for _, c := range n.Content {
		if a := findAnchor(c, name, depth+1); a != nil {
			return a
		}
	}
	return nil
}

// lineAt returns the 1-based line of the byte at offset i of text, with
// lines ended as yaml.v3 ends them, for the lines it gives: LF, CR LF, CR,
// NEL, LS or PS.
func lineAt(text []byte, i int) int {
	line := 1
	for j := 0; j < i; j++ {
		switch c := text[j]; {
		case c == '\n':
			line++
		case c == '\r' && (j+1 == len(text) || text[j+1] != '\n'):
			line++
		case c == 0xc2 && j+1 < len(text) && text[j+1] == 0x85: // NEL
			line++
		case c == 0xe2 && j+2 < len(text) && text[j+1] == 0x80 && (text[j+2] == 0xa8 || text[j+2] == 0xa9): // LS, PS
			line++
		}
	}
	return line
}
