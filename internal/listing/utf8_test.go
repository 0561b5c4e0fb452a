package listing

import (
	"bytes"
	"testing"
	"unicode/utf8"
)

// pythonReplace is what Python 3 (the original's language) gives for
// urllib.parse.unquote_to_bytes(q).decode("utf-8", "replace"), run once
// and kept here: the values of these escapes, as a query holds them.
var pythonReplace = []struct{ escaped, want string }{
	{"%C0%AF", "\ufffd\ufffd"},
	{"%ED%A0%80", "\ufffd\ufffd\ufffd"},
	{"%E2%82", "\ufffd"},
	{"%E2%82x", "\ufffdx"},
	{"%F0%9F%98", "\ufffd"},
	{"%F4%90%80%80", "\ufffd\ufffd\ufffd\ufffd"},
	{"%80%80", "\ufffd\ufffd"},
	{"%FF", "\ufffd"},
	{"%E0%80%AF", "\ufffd\ufffd\ufffd"},
	{"%F0%80%80%80", "\ufffd\ufffd\ufffd\ufffd"},
	{"%C2", "\ufffd"},
	{"%C2%41", "\ufffdA"},
	{"%E1%80%E2%82%AC", "\ufffd\u20ac"},
	{"%F1%80%80%E1%80%C2%80", "\ufffd\ufffd\u0080"},
	{"a%ffb%c3%28", "a\ufffdb\ufffd("},
	{"%EF%BF%BD", "\ufffd"},
	{"%F0%9F%8E%89%80", "\U0001f389\ufffd"},
	{"%ED%9F%BF%ED%A0%80", "\ud7ff\ufffd\ufffd\ufffd"},
	{"%F4%8F%BF%BF%F4", "\U0010ffff\ufffd"},
	{"%E0%A0", "\ufffd"},
	{"%E0%9F%80", "\ufffd\ufffd\ufffd"},
}

func TestUnescapePython(t *testing.T) {
	for _, tt := range pythonReplace {
		if got := unescape(tt.escaped); got != tt.want {
			t.Errorf("unescape(%q) = %+q, want %+q", tt.escaped, got, tt.want)
		}
	}
}

// referenceValid is the Unicode rule written from its definition, with
// Go's own UTF-8 validation as the judge of what is well-formed: at each
// position, a whole well-formed character is kept; else the longest
// prefix of one (a lead byte and continuation bytes that some character
// has after it) is one maximal subpart, replaced by U+FFFD; a byte that is
// no such prefix is one too.
func referenceValid(b []byte) string {
	var out bytes.Buffer
	for i := 0; i < len(b); {
		whole := 0
		for k := 1; k <= 4 && i+k <= len(b); k++ {
			if r, n := utf8.DecodeRune(b[i : i+k]); n == k && (r != utf8.RuneError || k == 3 && utf8.Valid(b[i:i+k])) {
				whole = k
				break
			}
		}
		if whole > 0 {
			out.Write(b[i : i+whole])
			i += whole
			continue
		}
		part := 1
		for k := 2; k <= 3 && i+k <= len(b); k++ {
			if prefixOfCharacter(b[i : i+k]) {
				part = k
			}
		}
		out.WriteString("\ufffd")
		i += part
	}
	return out.String()
}

// prefixOfCharacter reports whether p begins some well-formed character
// that is longer than p, trying every continuation byte.
func prefixOfCharacter(p []byte) bool {
	if len(p) >= 4 {
		return false
	}
	for c := 0x80; c <= 0xbf; c++ {
		q := append(append([]byte(nil), p...), byte(c))
		if r, n := utf8.DecodeRune(q); n == len(q) && r != utf8.RuneError || prefixOfCharacter(q) {
			return true
		}
	}
	return false
}

// FuzzValidUTF8 checks ValidUTF8 against the reference implementation of
// the rule.
func FuzzValidUTF8(f *testing.F) {
	for _, tt := range pythonReplace {
		f.Add([]byte(unescape(tt.escaped)))
		f.Add([]byte(tt.escaped))
	}
	f.Add([]byte("\xf0\x9f\x98\xe2\x82\xac\xc0\xaf\xed\xa0\x80\xf4\x90"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := ValidUTF8(b), referenceValid(b); got != want {
			t.Fatalf("ValidUTF8(%q) = %+q, want %+q", b, got, want)
		}
	})
}

// TestValidUTF8Reference checks the reference against Python's answers,
// so that the fuzz test compares with the rule, not with a mistake.
func TestValidUTF8Reference(t *testing.T) {
	for _, tt := range pythonReplace {
		raw := make([]byte, 0, len(tt.escaped))
		for i := 0; i < len(tt.escaped); i++ {
			if tt.escaped[i] == '%' {
				raw = append(raw, unhex(tt.escaped[i+1])<<4|unhex(tt.escaped[i+2]))
				i += 2
			} else {
				raw = append(raw, tt.escaped[i])
			}
		}
		if got := referenceValid(raw); got != tt.want {
			t.Errorf("referenceValid(%q) = %+q, want %+q", raw, got, tt.want)
		}
	}
}
