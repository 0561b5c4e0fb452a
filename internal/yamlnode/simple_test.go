package yamlnode

import (
	"fmt"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// viaYAML parses data with yaml.v3 only.
func viaYAML(data []byte, offset int) (*yaml.Node, error) {
	var doc yaml.Node
	if err := yaml.Unmarshal(data, &doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	shift(&doc, offset, 0)
	return doc.Content[0], nil
}

// same compares what the callers of this package read: kind, tag, value,
// line and children. yaml.v3 tags a time with a zone !!timestamp; both
// paths give its text, which is all that is read of it.
func same(a, b *yaml.Node, path string) error {
	if a == nil || b == nil {
		if a != b {
			return fmt.Errorf("%s: one is nil", path)
		}
		return nil
	}
	tag := func(n *yaml.Node) string {
		if n.Tag == "!!timestamp" {
			return "!!str"
		}
		return n.Tag
	}
	switch {
	case a.Kind != b.Kind:
		return fmt.Errorf("%s: kind %v, yaml.v3 %v", path, a.Kind, b.Kind)
	case tag(a) != tag(b):
		return fmt.Errorf("%s: tag %s, yaml.v3 %s", path, a.Tag, b.Tag)
	case a.Value != b.Value:
		return fmt.Errorf("%s: value %q, yaml.v3 %q", path, a.Value, b.Value)
	case a.Line != b.Line:
		return fmt.Errorf("%s (%q): line %d, yaml.v3 %d", path, a.Value, a.Line, b.Line)
	case len(a.Content) != len(b.Content):
		return fmt.Errorf("%s: %d children, yaml.v3 %d", path, len(a.Content), len(b.Content))
	}
	for i := range a.Content {
		if err := same(a.Content[i], b.Content[i], fmt.Sprintf("%s/%d", path, i)); err != nil {
			return err
		}
	}
	return nil
}

var simpleSeeds = []string{
	"id: 1\ntitle: Hello\npublished: 2025-01-02T10:00:00\n",
	"title: \"Say \\\"hi\\\" \\\\ \\/ \\n\"\nsub: 'it''s'\n",
	"tags: [a, \"b, c\", 'd', 2024]\nempty: []\n",
	"tags:\n  - a\n  - \"b\"\n  -\nnext: 1\n",
	"tags:\n- a\n- b\n",
	"# comment\nid: -0\n\ndraft: false\nx: ~\ny: null\nz:\nw: 1\n",
	"title: Кириллица «ёлочки» — 🎉 & <b>\r\nid: 7\r\n",
	"img: /images/a b.jpg?v=2&size=big\n",
	"a: 1.5\nb: 0x1F\nc: 1_000\nd: yes\ne: +5\n",
	"title: a: b\n",
	"title: x #c\n",
	"title: |\n  block\n",
	"a: &x 1\nb: *x\n",
	"key:value\n",
	"  id: 1\n",
	"title: multi\n  line\n",
	"t: [a, [b]]\n",
	"t: \"unterminated\n",
	"t: 2025-01-02T10:00:00+03:00\n",
}

func TestSimpleMatchesYAML(t *testing.T) {
	var p Parser
	for _, s := range simpleSeeds {
		t.Run(s, func(t *testing.T) { checkSimple(t, &p, []byte(s)) })
	}
}

func TestSimpleCoversTypicalFrontMatter(t *testing.T) {
	typical := "id: 12\ntitle: \"Выборы: итоги\"\npublished: 2025-01-02T10:00:00\nauthor: ivan\ntags: [a, b]\npageviews: 10\nimg_big: /i/x.jpg\ndraft: false\n"
	if _, ok := new(Parser).parseSimple([]byte(typical), 0); !ok {
		t.Errorf("typical front matter not read by the fast path")
	}
}

// checkSimple compares what p's fast path reads of data with yaml.v3.
// Tests share one Parser across documents, as a content loader does.
func checkSimple(t *testing.T, p *Parser, data []byte) {
	t.Helper()
	fast, ok := p.parseSimple(data, 3)
	if !ok {
		return
	}
	ref, err := viaYAML(data, 3)
	if err != nil {
		t.Fatalf("fast path read %q, yaml.v3 rejects it: %v", data, err)
	}
	if ref == nil || ref.Kind != yaml.MappingNode {
		t.Fatalf("fast path read %q as a mapping, yaml.v3 did not", data)
	}
	if err := same(fast, ref, ""); err != nil {
		t.Fatalf("%q: %v", data, err)
	}
}

// FuzzSimple: whatever the fast path accepts, yaml.v3 reads the same way.
func FuzzSimple(f *testing.F) {
	for _, s := range simpleSeeds {
		f.Add([]byte(s))
	}
	var p Parser
	f.Fuzz(func(t *testing.T, data []byte) {
		if strings.Count(string(data), "\n") > 200 {
			return
		}
		checkSimple(t, &p, data)
	})
}

const benchFrontMatter = `id: 4428
title: "Аэропорт слияние обучение & экспорт airport космос oil данные разработчик"
published: "2015-12-01T10:42:16"
announcement: "Цена банк завод космос обзор mobile сообщество погода football language студент обзор. Health университет город язык мнение наука import река. Platform цена mobile выборы machine выборы история opinion инвестор анализ. «Интернет модель суд суд model студент мнение аэропорт learning робот безопасность import», — said \"сообщество\"."
tags:
  - "hockey"
  - "software"
pageviews: 1112
comments_count: 13
author: marco-rossi
img_big: "/images/2015/12/airport-culture-2535_big.jpg"
img_big_2x: "/images/2015/12/airport-culture-2535_big_2x.jpg"
img_small: "/images/2015/12/airport-culture-2535_small.jpg"
img_small_2x: "/images/2015/12/airport-culture-2535_small_2x.jpg"
`

func BenchmarkParse(b *testing.B) {
	var p Parser
	for _, bm := range []struct {
		name string
		fn   func([]byte) bool
	}{
		{"simple", func(d []byte) bool { _, ok := new(Parser).parseSimple(d, 1); return ok }},
		{"simple, reused", func(d []byte) bool { _, ok := p.parseSimple(d, 1); return ok }},
		{"yaml.v3", func(d []byte) bool { _, err := viaYAML(d, 1); return err == nil }},
	} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(len(benchFrontMatter)))
			for b.Loop() {
				if !bm.fn([]byte(benchFrontMatter)) {
					b.Fatal("not parsed")
				}
			}
		})
	}
}
