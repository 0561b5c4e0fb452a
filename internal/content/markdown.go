package content

import (
	"strings"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// firstParagraph returns the first paragraph of a markdown body as plain
// text: markup removed, links and images replaced by their text, entities
// and backslash escapes resolved, soft line breaks as spaces and hard ones
// as newlines. It returns "" when the body has no paragraph.
func firstParagraph(p parser.Parser, body []byte) string {
	if len(body) == 0 {
		return ""
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
		return ""
	}
	var b strings.Builder
	plainText(&b, para, body)
	return strings.TrimSpace(b.String())
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
