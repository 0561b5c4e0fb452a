// Package yamlnode reads typed values out of a parsed YAML document
// (yaml.v3 nodes) while keeping the line of every value, so that callers
// can report problems as "path:line: message".
package yamlnode

import (
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Pair is one key: value entry of a mapping.
type Pair struct {
	Key     string
	KeyNode *yaml.Node
	Value   *yaml.Node
}

// Parse parses one YAML document whose first line is line offset+1 of its
// file: every node's Line, and the line of a *SyntaxError, are lines of
// the file. An empty document gives a nil node.
func Parse(data []byte, offset int) (*yaml.Node, error) {
	var p Parser
	return p.Parse(data, offset)
}

// A Parser is Parse for many documents in turn, one after the other: it
// reuses its memory, so the nodes one Parse returns are valid only until
// the next. A content loader parses thousands of front matters and keeps
// none of their nodes. The zero Parser is ready to use.
type Parser struct {
	nodes   []yaml.Node  // the nodes of the last document
	content []*yaml.Node // its root's Content
}

// Parse is the package's Parse, but for the nodes' lifetime.
func (p *Parser) Parse(data []byte, offset int) (*yaml.Node, error) {
	if n, ok := p.parseSimple(data, offset); ok {
		return n, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		se := syntaxError(err, data)
		// An error at the end of the text points past its last line.
		se.Line = min(se.Line, max(1, lineCount(data))) + offset
		return nil, se
	}
	if doc.Kind == 0 || len(doc.Content) == 0 {
		return nil, nil
	}
	if offset != 0 {
		shift(&doc, offset, 0)
	}
	return deref(doc.Content[0]), nil
}

func lineCount(data []byte) int {
	n := strings.Count(string(data), "\n")
	if len(data) > 0 && data[len(data)-1] != '\n' {
		n++
	}
	return n
}

func shift(n *yaml.Node, offset, depth int) {
	if depth > 1000 {
		return
	}
	n.Line += offset
	for _, c := range n.Content {
		shift(c, offset, depth+1)
	}
}

// SyntaxError is malformed YAML.
type SyntaxError struct {
	Line int // 1-based, relative to the parsed text; 0 when unknown
	Msg  string
}

func (e *SyntaxError) Error() string { return e.Msg }

var lineRE = regexp.MustCompile(`^(?:yaml: )?(?:line (\d+): )?(.*)$`)

// parserProblems are the messages of yaml.v3's parser (as opposed to its
// scanner). yaml.v3 numbers their lines from 0 and leaves out "line 0",
// while scanner errors are numbered from 1.
var parserProblems = map[string]bool{
	"did not find expected <stream-start>":   true,
	"did not find expected <document start>": true,
	"did not find expected key":              true,
	"did not find expected '-' indicator":    true,
	"did not find expected node content":     true,
	"did not find expected ',' or ']'":       true,
	"did not find expected ',' or '}'":       true,
	"found undefined tag handle":             true,
	"found incompatible YAML document":       true,
	"found duplicate %YAML directive":        true,
	"found duplicate %TAG directive":         true,
}

func syntaxError(err error, data []byte) *SyntaxError {
	msg := strings.TrimSpace(strings.TrimPrefix(err.Error(), "yaml: unmarshal errors:\n"))
	m := lineRE.FindStringSubmatch(msg)
	if m == nil {
		return &SyntaxError{Msg: "invalid YAML: " + msg}
	}
	line := 1
	if m[1] != "" {
		line, _ = strconv.Atoi(m[1])
		if parserProblems[m[2]] {
			line++
			line = problemLine(data, line, m[2])
		}
	}
	if m[2] == "mapping values are not allowed in this context" {
		if hint := colonInValue(data, line); hint != "" {
			return &SyntaxError{Line: line, Msg: hint}
		}
	}
	msg = "invalid YAML: " + m[2]
	if h := problemHints[m[2]]; h != "" {
		msg += ": " + h
	}
	return &SyntaxError{Line: line, Msg: msg}
}

// problemHints say how to mend the lines that parser problems are about.
var problemHints = map[string]string{
	"did not find expected key":           "indent this line as the keys of its mapping above it, or quote the whole value before it",
	"did not find expected '-' indicator": "indent this line as the items of its list above it",
}

// problemLine returns the line of data that the parser error msg is
// about, given the line yaml.v3 names, from: the line where the mapping,
// list or flow collection it was parsing starts (its context), which may
// be far above (a whole config's mapping starts at its first key). The
// problem is at the first line n such that the first n lines of data
// fail with the same error: lines up to the problem parse, and the
// parser stops at the first problem it meets. A binary search finds n in
// a few parses of a text that is wrong anyway; from when none is found.
func problemLine(data []byte, from int, msg string) int {
	ends := lineEnds(data)
	if from < 1 || from > len(ends) {
		return from
	}
	fails := func(n int) bool {
		var doc yaml.Node
		err := yaml.Unmarshal(data[:ends[n-1]], &doc)
		if err == nil {
			return false
		}
		m := lineRE.FindStringSubmatch(strings.TrimSpace(err.Error()))
		return m != nil && m[2] == msg
	}
	// The smallest n in [from, len(ends)] whose prefix fails.
	n := from + sort.Search(len(ends)-from+1, func(i int) bool { return fails(from + i) })
	if n > len(ends) {
		return from
	}
	return n
}

// lineEnds returns the offset just past each line of data (past its
// newline, or the end of data for a last line without one).
func lineEnds(data []byte) []int {
	var ends []int
	for i, c := range data {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		ends = append(ends, len(data))
	}
	return ends
}

// colonInValue returns, for line n of data a plain "key: value" whose
// value has a colon followed by a space or ending it (yaml.v3's
// "mapping values are not allowed in this context": a headline such as
// "Election: night"), what to write instead: the value in double quotes,
// the line rewritten. It returns "" when line n is not of that shape.
func colonInValue(data []byte, n int) string {
	ends := lineEnds(data)
	if n < 1 || n > len(ends) {
		return ""
	}
	start := 0
	if n > 1 {
		start = ends[n-2]
	}
	line := strings.TrimRight(string(data[start:ends[n-1]]), "\r\n")
	text := strings.TrimLeft(line, " ")
	text = strings.TrimPrefix(text, "- ")
	key, value, ok := strings.Cut(text, ": ")
	if !ok || key == "" || strings.ContainsAny(key[:1], "\"'[]{}&*!|>%@`#?:,- ") {
		return ""
	}
	value = strings.TrimSpace(value)
	comment := ""
	if i := strings.Index(value, " #"); i >= 0 {
		value, comment = strings.TrimSpace(value[:i]), " "+strings.TrimSpace(value[i:])
	}
	if value == "" || strings.ContainsRune("\"'[{|>&*!%@`", rune(value[0])) ||
		!strings.Contains(value, ": ") && !strings.HasSuffix(value, ":") {
		return ""
	}
	where := "a colon followed by a space"
	if !strings.Contains(value, ": ") {
		where = "a colon at its end"
	}
	quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(value) + `"`
	return fmt.Sprintf("the value of %s has %s; quote it: %s: %s%s", key, where, key, quoted, comment)
}

// deref follows aliases.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 100; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is absent or an explicit null ("key:" or "key: null").
func IsNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// Mapping returns the entries of a mapping node in document order.
// A key given twice is an error naming both lines.
func Mapping(n *yaml.Node) ([]Pair, error) {
	n = deref(n)
	if n == nil {
		return nil, nil
	}
	if n.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("want a mapping of key: value lines, got %s", describe(n))
	}
	pairs := make([]Pair, 0, len(n.Content)/2)
	seen := make(map[string]int, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), deref(n.Content[i+1])
		if k.Kind != yaml.ScalarNode {
			return nil, &LineError{Line: k.Line, Msg: "a key must be a plain name"}
		}
		if first, dup := seen[k.Value]; dup {
			return nil, &LineError{Line: k.Line, Msg: fmt.Sprintf("key %q given twice (first at line %d): keep one", k.Value, first)}
		}
		seen[k.Value] = k.Line
		pairs = append(pairs, Pair{Key: k.Value, KeyNode: k, Value: v})
	}
	return pairs, nil
}

// LineError is a problem at a specific line of the YAML text.
type LineError struct {
	Line int
	Msg  string
}

func (e *LineError) Error() string { return e.Msg }

// Line returns the line an error from this package points at, falling back to def.
func Line(err error, def int) int {
	var le *LineError
	if errors.As(err, &le) && le.Line > 0 {
		return le.Line
	}
	var se *SyntaxError
	if errors.As(err, &se) && se.Line > 0 {
		return se.Line
	}
	return def
}

// String reads a scalar as text. Numbers and booleans are taken as written
// (a title "2024" is the text 2024); null is the empty string.
func String(n *yaml.Node) (string, error) {
	n = deref(n)
	if IsNull(n) {
		return "", nil
	}
	if n.Kind != yaml.ScalarNode {
		return "", fmt.Errorf("want a text value, got %s", describe(n))
	}
	return n.Value, nil
}

// Int reads an integer scalar. Values that do not fit in int64 are errors.
func Int(n *yaml.Node) (int64, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || (n.Tag != "!!int" && n.Tag != "!!str") {
		return 0, fmt.Errorf("want a whole number, got %s", describe(n))
	}
	s := strings.ReplaceAll(n.Value, "_", "")
	v, err := strconv.ParseInt(s, 0, 64)
	if err != nil {
		if bi, ok := new(big.Int).SetString(s, 0); ok && n.Tag == "!!int" {
			return 0, fmt.Errorf("number %s is too large", bi)
		}
		return 0, fmt.Errorf("want a whole number, got %s", describe(n))
	}
	return v, nil
}

// Bool reads a boolean scalar (true or false).
func Bool(n *yaml.Node) (bool, error) {
	n = deref(n)
	if n != nil && n.Kind == yaml.ScalarNode && n.Tag == "!!bool" {
		switch strings.ToLower(n.Value) {
		case "true", "yes", "on", "y":
			return true, nil
		}
		return false, nil
	}
	return false, fmt.Errorf("want true or false, got %s", describe(n))
}

// Strings reads a sequence of text scalars. Null is an empty list.
func Strings(n *yaml.Node) ([]string, error) {
	n = deref(n)
	if IsNull(n) {
		return nil, nil
	}
	if n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a list of texts like [a, b], got %s", describe(n))
	}
	out := make([]string, 0, len(n.Content))
	for _, c := range n.Content {
		c = deref(c)
		if c.Kind != yaml.ScalarNode || IsNull(c) {
			msg := fmt.Sprintf("want a list of texts, item is %s", describe(c))
			if text, ok := colonItem(c); ok {
				quoted := `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(text) + `"`
				msg = fmt.Sprintf("want a list of texts, item %s is a mapping (a colon followed by a space); quote it: %s", text, quoted)
			}
			return nil, &LineError{Line: c.Line, Msg: msg}
		}
		out = append(out, c.Value)
	}
	return out, nil
}

// colonItem returns the text a list item that YAML read as a one-pair
// mapping was meant to be, when it is one (a tag such as "- Note: x" or
// [a: b]): its key and value, plain texts, on one line, joined by ": ".
func colonItem(n *yaml.Node) (string, bool) {
	if n.Kind != yaml.MappingNode || len(n.Content) != 2 {
		return "", false
	}
	k, v := n.Content[0], n.Content[1]
	// A mapping in braces ({a: b}) starts before its key: one written
	// as such, not a text with a colon.
	if k.Line != n.Line || k.Column != n.Column || k.Kind != yaml.ScalarNode || v.Kind != yaml.ScalarNode || k.Style != 0 || v.Style != 0 ||
		k.Line != v.Line || k.Value == "" || v.Tag == "!!null" {
		return "", false
	}
	return k.Value + ": " + v.Value, true
}

// Ints reads a sequence of integers.
func Ints(n *yaml.Node) ([]int64, error) {
	n = deref(n)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil, fmt.Errorf("want a list of whole numbers like [20, 50], got %s", describe(n))
	}
	out := make([]int64, 0, len(n.Content))
	for _, c := range n.Content {
		v, err := Int(c)
		if err != nil {
			return nil, &LineError{Line: deref(c).Line, Msg: err.Error()}
		}
		out = append(out, v)
	}
	return out, nil
}

// describe names what a node holds, for error messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		if n.Tag == "!!null" {
			return "an empty value"
		}
		v := n.Value
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return strconv.Quote(v)
	}
	return "an unsupported value"
}
