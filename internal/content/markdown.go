package content

import (
	"bytes"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/human"
	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// maxParsed is how much of a body the markdown parser reads to find its
// first paragraph. Its memory grows to about 60 times what it parses (a
// 25 MB paragraph took 1.5 GB), and its time, for some inputs, with the
// square of it (1,000 nested quotes ">>>…", ordered lists "1. 1. …" or
// unclosed link targets "[a](" take 0.1 s for 8 kB, 0.2–0.4 s for 16 kB, 4–5 s for 64 kB,
// and hours for 1 MB): so a body whose first paragraph is longer is
// refused, and one that is longer itself is parsed up to a blank line
// within this.
const maxParsed = 8 << 10

// paragraphError is a body whose first paragraph cannot be found within
// the bytes that are parsed.
type paragraphError struct{ msg string }

func (e *paragraphError) Error() string { return e.msg }

// firstParagraph returns the first paragraph of a markdown body as plain
// text: markup removed, links and images replaced by their text, entities
// and backslash escapes resolved, soft line breaks as spaces and hard ones
// as newlines. It returns "" when the body has no paragraph. A body over
// maxParsed bytes is parsed up to its last blank line within them: a
// *paragraphError when the first paragraph is not within them, or might
// refer to a link reference defined after them.
func firstParagraph(p parser.Parser, body []byte) (string, error) {
	return firstParagraphWithin(p, body, maxParsed)
}

// firstParagraphWithin is firstParagraph, parsing at most limit bytes.
func firstParagraphWithin(p parser.Parser, body []byte, limit int) (string, error) {
	lead := leadingParagraph(body)
	if len(lead) <= limit {
		return paragraphText(p, lead), nil
	}
	cut := lastBlankLine(body[:limit+1])
	if cut < 0 {
		return "", &paragraphError{fmt.Sprintf("the first paragraph is %s, more than the %s read for an announcement: write announcement: in the front matter, or start the body with a shorter paragraph",
			human.Bytes(int64(firstBlock(body))), human.Bytes(int64(limit)))}
	}
	text, src, found := paragraph(p, body[:cut])
	switch {
	case !found:
		return "", &paragraphError{fmt.Sprintf("no paragraph in the first %s of the body, all that is read for an announcement: write announcement: in the front matter",
			human.Bytes(int64(limit)))}
	case definesLabelOf(src, body[cut:]):
		return "", &paragraphError{fmt.Sprintf("the first paragraph may use a link reference ([x]: /url) defined after the first %s of the body, all that is read for an announcement: write announcement: in the front matter",
			human.Bytes(int64(limit)))}
	}
	return text, nil
}

// definesLabelOf reports whether rest defines a link reference ([x]: …)
// whose label the paragraph src may use: a text between brackets in src,
// compared as markdown does, without regard to case or runs of white
// space.
func definesLabelOf(src, rest []byte) bool {
	var labels [][]byte
	for i := 0; ; {
		open := bytes.IndexByte(src[i:], '[')
		if open < 0 {
			break
		}
		open += i
		end := bytes.IndexByte(src[open+1:], ']')
		if end < 0 {
			break
		}
		if label := bytes.Join(bytes.Fields(src[open+1:open+1+end]), []byte(" ")); len(label) > 0 {
			labels = append(labels, label)
		}
		i = open + 1
	}
	for i := 0; len(labels) > 0; {
		colon := bytes.Index(rest[i:], []byte("]:"))
		if colon < 0 {
			return false
		}
		colon += i
		line := bytes.LastIndexByte(rest[:colon], '\n') + 1
		if open := bytes.LastIndexByte(rest[line:colon], '['); open >= 0 {
			def := bytes.Join(bytes.Fields(rest[line+open+1:colon]), []byte(" "))
			for _, l := range labels {
				if bytes.EqualFold(def, l) {
					return true
				}
			}
		}
		i = colon + 2
	}
	return false
}

// lastBlankLine returns the offset of the last whole blank line (empty,
// or spaces and tabs) of b that comes after some text, or -1.
func lastBlankLine(b []byte) int {
	last, text := -1, false
	for i := 0; i < len(b); {
		n := bytes.IndexByte(b[i:], '\n')
		if n < 0 {
			break // a line cut short
		}
		if len(bytes.Trim(b[i:i+n], " \t\r")) > 0 {
			text = true
		} else if text {
			last = i
		}
		i += n + 1
	}
	return last
}

// firstBlock returns the length of body up to its first blank line after
// some text: how long its first paragraph, or block, is.
func firstBlock(body []byte) int {
	text := false
	for i := 0; i < len(body); {
		line, _, _ := bytes.Cut(body[i:], []byte("\n"))
		blank := len(bytes.Trim(line, " \t\r")) == 0
		if blank && text {
			return i
		}
		text = text || !blank
		i += len(line) + 1
	}
	return len(body)
}

// paragraphText is firstParagraph, parsing all of body.
func paragraphText(p parser.Parser, body []byte) string {
	text, _, _ := paragraph(p, body)
	return text
}

// paragraph parses body and returns its first paragraph as plain text and
// its source lines, and whether there is one.
func paragraph(p parser.Parser, body []byte) (plain string, src []byte, found bool) {
	if len(body) == 0 {
		return "", nil, false
	}
	doc := p.Parse(text.NewReader(body))
	var para ast.Node
	_ = ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		if n.Kind() == ast.KindParagraph {
			para = n
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	if para == nil {
		return "", nil, false
	}
	if lines := para.Lines(); lines.Len() > 0 {
		src = body[lines.At(0).Start:lines.At(lines.Len()-1).Stop]
	}
	var b strings.Builder
	plainText(&b, para, body)
	return strings.TrimSpace(b.String()), src, true
}

// leadingParagraph returns the part of body that the markdown parser needs
// to find the first paragraph: when body starts (blank lines aside) with
// lines that can only make a paragraph, up to the first blank line, that
// paragraph, else all of body. Parsing 300 bytes rather than 3 kB makes a
// build of 10,000 articles 8% cheaper. The lines must start with a letter:
// anything else might open another block (#, >, -, 1., ```, <div>, ...)
// or turn the lines into a heading (===). The rest of body cannot change
// the paragraph, but for link reference definitions ([x]: /url), which
// may come anywhere: a body with "]:" is parsed whole. FuzzFirstParagraph
// checks both ways agree.
func leadingParagraph(body []byte) []byte {
	if bytes.Contains(body, []byte("]:")) {
		return body
	}
	start := 0
	for start < len(body) {
		line, _, _ := bytes.Cut(body[start:], []byte("\n"))
		if len(bytes.Trim(line, " \t\r")) > 0 {
			break
		}
		start += len(line) + 1
	}
	end := start
	for end < len(body) {
		line, _, _ := bytes.Cut(body[end:], []byte("\n"))
		if len(bytes.Trim(line, " \t\r")) == 0 {
			return body[:end]
		}
		if c := line[0]; !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c >= utf8.RuneSelf) {
			return body
		}
		end += len(line) + 1
	}
	return body
}

func plainText(b *strings.Builder, n ast.Node, src []byte) {
	for c := n.FirstChild(); c != nil; c = c.NextSibling() {
		switch c := c.(type) {
		case *ast.Text:
			v := c.Value(src)
			if c.IsRaw() {
				b.Write(v)
			} else {
				b.Write(resolve(v))
			}
			switch {
			case c.HardLineBreak():
				b.WriteByte('\n')
			case c.SoftLineBreak():
				b.WriteByte(' ')
			}
		case *ast.String:
			if c.IsCode() || c.IsRaw() {
				b.Write(c.Value)
			} else {
				b.Write(resolve(c.Value))
			}
		case *ast.CodeSpan:
			for t := c.FirstChild(); t != nil; t = t.NextSibling() {
				if s, ok := t.(*ast.Text); ok {
					b.Write(s.Value(src))
				} else if s, ok := t.(*ast.String); ok {
					b.Write(s.Value)
				}
			}
		case *ast.AutoLink:
			b.Write(c.Label(src))
		case *ast.RawHTML:
			// markup: dropped
		default:
			plainText(b, c, src)
		}
	}
}

func resolve(v []byte) []byte {
	v = util.UnescapePunctuations(v)
	v = util.ResolveNumericReferences(v)
	return util.ResolveEntityNames(v)
}

func newMarkdownParser() parser.Parser {
	return goldmark.New().Parser()
}
