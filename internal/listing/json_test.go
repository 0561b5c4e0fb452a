package listing

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestAppendString(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", `""`},
		{"ascii", "hello", `"hello"`},
		{"html is not escaped", `<a href="/x">&amp;</a>`, `"<a href=\"/x\">&amp;</a>"`},
		{"slash", "a/b", `"a/b"`},
		{"quotes and backslash", `say "hi" \o/`, `"say \"hi\" \\o/"`},
		{"short escapes", "a\nb\rc\td\be\ff", `"a\nb\rc\td\be\ff"`},
		{"crlf", "line1\r\nline2", `"line1\r\nline2"`},
		{"other controls lowercase hex", "\x00\x01\x1f\x0b", `"\u0000\u0001\u001f\u000b"`},
		{"del is raw", "\x7f", "\"\x7f\""},
		{"cyrillic raw", "Привет, мир", `"Привет, мир"`},
		{"emoji raw", "🎉 party", `"🎉 party"`},
		{"line separators escaped", "a\u2028b\u2029c", `"a\u2028b\u2029c"`},
		{"nbsp raw", "a\u00a0b", "\"a\u00a0b\""},
		{"invalid utf-8 replaced", "a\xffb", "\"a\ufffdb\""},
		{"truncated rune replaced", "a\xe2\x82", "\"a\ufffd\ufffd\""},
		{"guillemets", "«ёлочки»", `"«ёлочки»"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := string(AppendString(nil, tt.in))
			if got != tt.want {
				t.Errorf("AppendString(%q) = %s, want %s", tt.in, got, tt.want)
			}
		})
	}
}

// FuzzAppendString checks that every output is valid JSON that decodes to
// the input (invalid UTF-8 replaced), with no escapes the original did not use.
func FuzzAppendString(f *testing.F) {
	for _, s := range []string{"", "a", "\u2028", "<>&/", "\"\\", "\x00\x1f", "Привет 🎉", "\r\n", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := AppendString(nil, s)
		if !utf8.Valid(out) {
			t.Fatalf("output is not UTF-8: %q", out)
		}
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Fatalf("output %q is not a JSON string: %v", out, err)
		}
		if want := strings.ToValidUTF8(s, "\ufffd"); back != want && !invalidRunes(s) {
			t.Fatalf("round trip: got %q, want %q", back, want)
		}
		body := string(out[1 : len(out)-1])
		for _, esc := range escapes(body) {
			switch esc {
			case `\u003c`, `\u003e`, `\u0026`, `\/`:
				t.Fatalf("output %q has escape %s", out, esc)
			}
		}
		if strings.ContainsRune(body, '\u2028') || strings.ContainsRune(body, '\u2029') {
			t.Fatalf("output %q has a raw line separator", out)
		}
	})
}

// escapes returns the escape sequences of the body of a JSON string, in
// order: a backslash and what it escapes ("\\\\" is one escape, not the
// start of another).
func escapes(body string) []string {
	var out []string
	for i := 0; i < len(body); i++ {
		if body[i] != '\\' || i+1 >= len(body) {
			continue
		}
		n := 2
		if body[i+1] == 'u' {
			n = min(6, len(body)-i)
		}
		out = append(out, body[i:i+n])
		i += n - 1
	}
	return out
}

// invalidRunes reports whether s holds invalid UTF-8: each bad byte becomes
// one U+FFFD, while strings.ToValidUTF8 folds runs into one.
func invalidRunes(s string) bool { return !utf8.ValidString(s) }

func TestEscapes(t *testing.T) {
	tests := []struct {
		body string
		want []string
	}{
		{`a\/b`, []string{`\/`}},
		{`\\/`, []string{`\\`}},
		{`\\u003c`, []string{`\\`}},
		{`\u003c\n`, []string{`\u003c`, `\n`}},
		{`plain`, nil},
	}
	for _, tt := range tests {
		if got := escapes(tt.body); !slices.Equal(got, tt.want) {
			t.Errorf("escapes(%q) = %q, want %q", tt.body, got, tt.want)
		}
	}
}
