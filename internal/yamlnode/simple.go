package yamlnode

import (
	"bytes"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// parseSimple reads the subset of YAML that front matter is almost always
// written in, much faster than yaml.v3:
//
//	key: plain or "double" or 'single' quoted text, a whole number, true/false
//	key: [flow, "list", of, scalars]
//	key:
//	  - block
//	  - list
//	# full-line comments and blank lines
//
// It returns the same nodes yaml.v3 would (kind, tag, value, line), and
// ok=false for anything outside the subset, which the caller then hands to
// yaml.v3: the subset is checked against yaml.v3 by FuzzSimple.
func (p *Parser) parseSimple(data []byte, offset int) (*yaml.Node, bool) {
	// Two nodes a line (key and value) and the root are enough unless
	// flow lists hold many items; more are allocated one by one.
	lines := bytes.Count(data, []byte("\n")) + 1
	if cap(p.nodes) < 2*lines+1 {
		p.nodes = make([]yaml.Node, 0, 2*lines+1+16)
	}
	if cap(p.content) < 2*lines {
		p.content = make([]*yaml.Node, 0, 2*lines+16)
	}
	nodes := slab(p.nodes[:0])
	defer func() { p.nodes = nodes }()
	root := nodes.new(yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: 1 + offset, Column: 1, Content: p.content[:0]})
	s := string(data)
	var seq *yaml.Node // the block list being read, if any
	seqIndent := -1
	first := true
	for n := 1; s != ""; n++ {
		var line string
		line, s, _ = strings.Cut(s, "\n")
		line = strings.TrimSuffix(line, "\r")
		if strings.ContainsRune(line, '\r') || !printable(line) {
			return nil, false
		}
		t := strings.TrimLeft(line, " ")
		if t == "" || t[0] == '#' && len(t) == len(line) {
			continue // blank line, or full-line comment at column 0
		}
		indent := len(line) - len(t)
		if strings.HasPrefix(t, "- ") || t == "-" {
			// An item of the block list opened by the key before it.
			if seq == nil || (seqIndent >= 0 && indent != seqIndent) {
				return nil, false
			}
			if len(seq.Content) == 0 {
				seq.Line, seq.Column = n+offset, indent+1 // yaml.v3 places a list at its first item
			}
			seqIndent = indent
			iv := strings.TrimLeft(t[1:], " ")
			item, ok := nodes.scalar(iv, n+offset, len(line)-len(iv)+1, false)
			if !ok {
				return nil, false
			}
			seq.Content = append(seq.Content, item)
			continue
		}
		if indent > 0 {
			return nil, false // continuation lines, nested mappings
		}
		if seq != nil && len(seq.Content) == 0 {
			// "key:" with no list after it: null.
			*seq = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: seq.Line, Column: seq.Column}
		}
		seq, seqIndent = nil, -1
		colon := strings.IndexByte(line, ':')
		if colon <= 0 || !isKey(line[:colon]) {
			return nil, false
		}
		rest := line[colon+1:]
		if rest != "" && rest[0] != ' ' {
			return nil, false
		}
		key := nodes.new(yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: line[:colon], Line: n + offset, Column: 1})
		v := strings.TrimLeft(rest, " ")
		col := len(line) - len(v) + 1
		var val *yaml.Node
		switch {
		case v == "":
			// A block list may follow; until then, an empty sequence.
			val = nodes.new(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Line: n + offset, Column: col})
			seq = val
		case v[0] == '[':
			var ok bool
			if val, ok = nodes.flowList(v, n+offset, col); !ok {
				return nil, false
			}
		default:
			var ok bool
			if val, ok = nodes.scalar(v, n+offset, col, false); !ok {
				return nil, false
			}
		}
		if first {
			root.Line = n + offset // yaml.v3 places a mapping at its first key
		}
		root.Content = append(root.Content, key, val)
		first = false
	}
	if seq != nil && len(seq.Content) == 0 {
		*seq = yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: seq.Line, Column: seq.Column}
	}
	if first {
		return nil, false
	}
	p.content = root.Content
	return root, true
}

// slab hands out nodes from memory allocated beforehand.
type slab []yaml.Node

// new returns a node holding n: the next of the slab while it has room
// (appending never moves the nodes handed out before), else a new one.
func (nodes *slab) new(n yaml.Node) *yaml.Node {
	if len(*nodes) == cap(*nodes) {
		p := new(yaml.Node)
		*p = n
		return p
	}
	*nodes = append(*nodes, n)
	return &(*nodes)[len(*nodes)-1]
}

// isKey reports whether k is a plain text key: letters, digits and '_',
// not starting with a digit, and not a word YAML reads as a bool or null.
func isKey(k string) bool {
	if len(k) > 1000 {
		return false // yaml.v3 takes no implicit key of more than 1024 characters
	}
	switch k {
	case "", "true", "True", "TRUE", "false", "False", "FALSE", "null", "Null", "NULL":
		return false
	}
	if '0' <= k[0] && k[0] <= '9' {
		return false
	}
	for i := 0; i < len(k); i++ {
		c := k[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_') {
			return false
		}
	}
	return true
}

// printable rejects what YAML does not allow or reads as a line break.
func printable(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < 0x20 || c == 0x7f {
			return false // tabs included: kept out of the subset
		}
		if c >= utf8.RuneSelf {
			return printableUTF8(s[i:])
		}
	}
	return true
}

func printableUTF8(s string) bool {
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c >= 0x20 && c < 0x7f:
			i++
			continue
		case c >= 0xc3 && c < 0xe0 && i+1 < len(s) && s[i+1]&0xc0 == 0x80:
			i += 2 // U+00C0 to U+07FF: Latin, Greek, Cyrillic, ..., all printable
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		i += size
		switch {
		case r < 0x20 || r == 0x7f, r >= 0x80 && r <= 0x9f, r == 0x2028, r == 0x2029, r == 0xfeff,
			r >= 0xfffe && r <= 0xffff, r == utf8.RuneError:
			return false
		}
	}
	return true
}

// scalar reads one scalar that makes up all of v (trailing spaces aside).
// In a flow list, inFlow also rejects the flow indicators.
func (nodes *slab) scalar(v string, line, col int, inFlow bool) (*yaml.Node, bool) {
	v = strings.TrimRight(v, " ")
	node := nodes.new(yaml.Node{Kind: yaml.ScalarNode, Line: line, Column: col})
	if v == "" {
		node.Tag = "!!null"
		return node, !inFlow
	}
	switch v[0] {
	case '"':
		s, ok := doubleQuoted(v)
		node.Tag, node.Value, node.Style = "!!str", s, yaml.DoubleQuotedStyle
		return node, ok
	case '\'':
		if len(v) < 2 || v[len(v)-1] != '\'' {
			return nil, false
		}
		body := v[1 : len(v)-1]
		if strings.Contains(strings.ReplaceAll(body, "''", ""), "'") {
			return nil, false
		}
		node.Tag, node.Value, node.Style = "!!str", strings.ReplaceAll(body, "''", "'"), yaml.SingleQuotedStyle
		return node, true
	case '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '%', '@', '`', '+', '.', '<', '=':
		if v[0] != '-' {
			return nil, false
		}
	}
	if strings.Contains(v, ": ") || strings.HasSuffix(v, ":") || strings.Contains(v, " #") {
		return nil, false
	}
	if inFlow && strings.ContainsAny(v, ",[]{}:#") {
		return nil, false
	}
	node.Value = v
	switch v {
	case "true", "True", "TRUE", "false", "False", "FALSE":
		node.Tag = "!!bool"
		return node, true
	case "~", "null", "Null", "NULL":
		node.Tag = "!!null"
		return node, true
	}
	if c := v[0]; c == '-' || '0' <= c && c <= '9' {
		switch {
		case isInt(v):
			node.Tag = "!!int"
		case isDateTime(v):
			node.Tag = "!!str" // yaml.v3: !!str, or !!timestamp with a zone; read as text either way
		default:
			return nil, false // floats, hex, underscores, "-x": yaml.v3's business
		}
		return node, true
	}
	node.Tag = "!!str"
	return node, true
}

// isInt matches -?(0|[1-9][0-9]*) of at most 18 digits.
func isInt(v string) bool {
	d := strings.TrimPrefix(v, "-")
	if d == "" || len(d) > 18 || (d[0] == '0' && len(d) > 1) {
		return false
	}
	for i := 0; i < len(d); i++ {
		if d[i] < '0' || d[i] > '9' {
			return false
		}
	}
	return true
}

// isDateTime matches YYYY-MM-DDTHH:MM:SS, which yaml.v3 reads as text.
func isDateTime(v string) bool {
	const pat = "dddd-dd-ddTdd:dd:dd"
	if len(v) != len(pat) {
		return false
	}
	for i := 0; i < len(pat); i++ {
		if pat[i] == 'd' {
			if v[i] < '0' || v[i] > '9' {
				return false
			}
		} else if v[i] != pat[i] {
			return false
		}
	}
	return true
}

// doubleQuoted reads a double-quoted scalar that is all of v, with the
// simple escapes only.
func doubleQuoted(v string) (string, bool) {
	if len(v) < 2 || v[len(v)-1] != '"' {
		return "", false
	}
	body := v[1 : len(v)-1]
	i := strings.IndexAny(body, `"\`)
	if i < 0 {
		return body, true
	}
	b := make([]byte, 0, len(body))
	for i >= 0 {
		b = append(b, body[:i]...)
		if body[i] == '"' || i+1 >= len(body) {
			return "", false
		}
		switch body[i+1] {
		case '\\', '"':
			b = append(b, body[i+1])
		case 'n':
			b = append(b, '\n')
		case 't':
			b = append(b, '\t')
		case 'r':
			b = append(b, '\r')
		default:
			return "", false
		}
		body = body[i+2:]
		i = strings.IndexAny(body, `"\`)
	}
	return string(append(b, body...)), true
}

// flowList reads [a, "b", 'c'] that is all of v.
func (nodes *slab) flowList(v string, line, col int) (*yaml.Node, bool) {
	v = strings.TrimRight(v, " ")
	if len(v) < 2 || v[len(v)-1] != ']' {
		return nil, false
	}
	node := nodes.new(yaml.Node{Kind: yaml.SequenceNode, Tag: "!!seq", Style: yaml.FlowStyle, Line: line, Column: col})
	body := v[1 : len(v)-1]
	if strings.TrimLeft(body, " ") == "" {
		return node, true
	}
	pos := col + 1
	for {
		t := strings.TrimLeft(body, " ")
		pos += len(body) - len(t)
		body = t
		end := 0
		switch {
		case body == "":
			return nil, false // trailing comma
		case body[0] == '"':
			end = closingQuote(body, '"')
		case body[0] == '\'':
			end = closingQuote(body, '\'')
		default:
			end = strings.IndexByte(body, ',')
			if end < 0 {
				end = len(body)
			}
		}
		if end <= 0 {
			return nil, false
		}
		item, ok := nodes.scalar(body[:end], line, pos, true)
		if !ok {
			return nil, false
		}
		node.Content = append(node.Content, item)
		rest := strings.TrimLeft(body[end:], " ")
		pos += len(body) - len(rest)
		if rest == "" {
			return node, true
		}
		if rest[0] != ',' {
			return nil, false
		}
		body = rest[1:]
		pos++
	}
}

// closingQuote returns the length of the quoted scalar at the start of s,
// quotes included, or 0.
func closingQuote(s string, q byte) int {
	for i := 1; i < len(s); i++ {
		switch {
		case q == '"' && s[i] == '\\':
			i++
		case s[i] == q && q == '\'' && i+1 < len(s) && s[i+1] == '\'':
			i++
		case s[i] == q:
			return i + 1
		}
	}
	return 0
}
