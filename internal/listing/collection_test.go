package listing

import (
	"crypto/sha256"
	"fmt"
	"path"
	"strings"
	"testing"
)

var encodeTests = []struct {
	name, in, want string
}{
	{"lowercase", "go", "go"},
	{"uppercase", "Go", "_47o"},
	{"word", "news", "news"},
	{"digits and hyphen", "web-2-0", "web-2-0"},
	{"cyrillic", "Ёжик", "_d0_81_d0_b6_d0_b8_d0_ba"},
	{"cyrillic lowercase", "ёжик", "_d1_91_d0_b6_d0_b8_d0_ba"},
	{"empty", "", ""},
	{"dot", ".", "_2e"},
	{"dot dot", "..", "_2e_2e"},
	{"slash", "a/b", "a_2fb"},
	{"percent", "%2F", "_252_46"},
	{"query and fragment", "?#\\", "_3f_23_5c"},
	{"space", "a b", "a_20b"},
	{"underscore", "snake_case", "snake_5fcase"},
	{"tilde", "~x", "_7ex"},
	{"plus", "C++", "_43_2b_2b"},
	{"nul", "\x00", "_00"},
	{"control", "\x1f\x7f", "_1f_7f"},
	{"emoji", "🎉", "_f0_9f_8e_89"},
	{"invalid utf-8", "\xff\xfe", "_ff_fe"},
	{"device name", "con", "co_6e"},
	{"device name nul", "nul", "nu_6c"},
	{"device name com1", "com1", "com_31"},
	{"device name lpt0", "lpt0", "lpt_30"},
	{"device name uppercase", "AUX", "_41_55_58"},
	{"not a device name", "com10", "com10"},
	{"not a device name either", "console", "console"},
	{"longest plain", strings.Repeat("a", 200), strings.Repeat("a", 200)},
	{"longest plain escaped", strings.Repeat("a", 2) + strings.Repeat("A", 66), "aa" + strings.Repeat("_41", 66)},
	{"hashed", strings.Repeat("a", 201), "_ha92efd82109373e58f9a2056dee01e807e216ce6075f7051207c0a9f7d666e50"},
	{"hashed escaped", strings.Repeat("\xff", 67), "_hcf2ace77b897fa6f615f0c1d616c98bf9f99298788fb2a36b1dee4a86a25e55f"},
}

func TestEncodeValue(t *testing.T) {
	for _, tt := range encodeTests {
		t.Run(tt.name, func(t *testing.T) {
			if got := EncodeValue(tt.in); got != tt.want {
				t.Errorf("EncodeValue(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestDecodeValue(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"plain", "news", "news", true},
		{"escaped", "_47o", "Go", true},
		{"cyrillic", "_d0_81_d0_b6_d0_b8_d0_ba", "Ёжик", true},
		{"dot", "_2e", ".", true},
		{"device name escaped", "co_6e", "con", true},
		{"longest plain", strings.Repeat("b", 200), strings.Repeat("b", 200), true},
		{"empty", "", "", false},
		{"uppercase hex", "_4F", "", false},
		{"kept byte escaped", "_61", "", false},
		{"hyphen escaped", "_2d", "", false},
		{"device name as it is", "con", "", false},
		{"device name escaped elsewhere", "_63on", "", false},
		{"bad hex", "_zz", "", false},
		{"short escape", "a_4", "", false},
		{"lone underscore", "_", "", false},
		{"uppercase", "Go", "", false},
		{"dot as it is", ".", "", false},
		{"dot dot as it is", "..", "", false},
		{"slash", "a/b", "", false},
		{"tilde", "~a", "", false},
		{"hashed", EncodeValue(strings.Repeat("a", 201)), "", false},
		{"too long", strings.Repeat("b", 201), "", false},
		{"escapes past the longest plain", strings.Repeat("_41", 67), "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := DecodeValue(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("DecodeValue(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestCollectionDir(t *testing.T) {
	tests := []struct {
		params []Param
		want   string
	}{
		{nil, "articles"},
		{[]Param{}, "articles"},
		{[]Param{{"tag", "Go"}}, "articles/tag/_47o"},
		{[]Param{{"tag", "go"}}, "articles/tag/go"},
		{[]Param{{"author", "ivan-petrov"}}, "articles/author/ivan-petrov"},
		{[]Param{{"section", "news"}}, "articles/section/news"},
		{[]Param{{"category", "politics"}, {"section", "news"}}, "articles/category/politics/section/news"},
		{[]Param{{"section", "news"}, {"category", "politics"}}, "articles/category/politics/section/news"},
		{[]Param{{"tag", "20"}}, "articles/tag/20"},
		{[]Param{{"tag", "index.json"}}, "articles/tag/index_2ejson"},
		{[]Param{{"tag", "../../etc"}}, "articles/tag/_2e_2e_2f_2e_2e_2fetc"},
	}
	for _, tt := range tests {
		if got := CollectionDir(tt.params); got != tt.want {
			t.Errorf("CollectionDir(%q) = %q, want %q", tt.params, got, tt.want)
		}
	}
	params := []Param{{"section", "news"}, {"category", "politics"}}
	CollectionDir(params)
	if params[0].Key != "section" {
		t.Errorf("CollectionDir sorted its argument: %q", params)
	}
}

// FuzzEncodeValue checks the promises of the encoding for any two values
// a and b: each name is only a-z, 0-9, '-' and '_', at most MaxPlainName
// bytes, never "." or ".." nor a device name of Windows; it is either
// HashPrefix and the SHA-256 of the value, exactly when the plain name
// would be too long, or decodes back to the value; and the names of two
// different values differ, also when case is folded. Every name that
// DecodeValue accepts is the name of what it decodes to.
func FuzzEncodeValue(f *testing.F) {
	hard := []string{"Go", "go", "Ёжик", "ёжик", "", ".", "..", "a/b", "%2F", "?#\\",
		strings.Repeat("x", 300), "\x00", "🎉", "\xff\xfe", "con", "co_6e", "_47o",
		strings.Repeat("A", 66) + "aa", strings.Repeat("A", 67)}
	for _, tt := range encodeTests {
		hard = append(hard, tt.in)
	}
	for i, a := range hard {
		f.Add(a, hard[(i+1)%len(hard)])
	}
	f.Add("Go", "go")
	f.Add("Ёжик", "ёжик")
	f.Fuzz(func(t *testing.T, a, b string) {
		na, nb := checkName(t, a), checkName(t, b)
		if a != b && strings.EqualFold(na, nb) {
			t.Fatalf("EncodeValue(%q) = %q and EncodeValue(%q) = %q: one name", a, na, b, nb)
		}
		if v, ok := DecodeValue(a); ok && EncodeValue(v) != a {
			t.Fatalf("DecodeValue(%q) = %q, whose name is %q", a, v, EncodeValue(v))
		}
		if a != "" {
			dir := CollectionDir([]Param{{"tag", a}})
			if path.Clean(dir) != dir || !strings.HasPrefix(dir, Dir+"/tag/") {
				t.Fatalf("CollectionDir for tag %q is %q", a, dir)
			}
			k := PageKey{Dir: dir, Limit: 20, Offset: 40}
			if got, ok := ParsePageKey(k.Path()); got != k || !ok {
				t.Fatalf("ParsePageKey(%q) = %+v, %v", k.Path(), got, ok)
			}
		}
	})
}

// The bytes a name may have, and those that stand for themselves.
const (
	nameBytes = "abcdefghijklmnopqrstuvwxyz0123456789-_"
	keptBytes = "abcdefghijklmnopqrstuvwxyz0123456789-"
)

// checkName checks the name of v and returns it.
func checkName(t *testing.T, v string) string {
	t.Helper()
	name := EncodeValue(v)
	for i := 0; i < len(name); i++ {
		if c := name[i]; strings.IndexByte(nameBytes, c) < 0 {
			t.Fatalf("EncodeValue(%q) = %q: byte %q", v, name, c)
		}
	}
	if len(name) > MaxPlainName || name == "." || name == ".." || (name == "") != (v == "") {
		t.Fatalf("EncodeValue(%q) = %q", v, name)
	}
	for _, d := range strings.Fields("con prn aux nul com0 com1 com2 com3 com4 com5 com6 com7 com8 com9 lpt0 lpt1 lpt2 lpt3 lpt4 lpt5 lpt6 lpt7 lpt8 lpt9") {
		if strings.EqualFold(name, d) {
			t.Fatalf("EncodeValue(%q) = %q, a device name of Windows", v, name)
		}
	}
	plain := 0
	for i := 0; i < len(v); i++ {
		if strings.IndexByte(keptBytes, v[i]) >= 0 {
			plain++
		} else {
			plain += 3
		}
	}
	if plain > MaxPlainName {
		sum := sha256.Sum256([]byte(v))
		if want := fmt.Sprintf("%s%x", HashPrefix, sum); name != want {
			t.Fatalf("EncodeValue of a value of %d bytes = %q, want %q", len(v), name, want)
		}
		if _, ok := DecodeValue(name); ok {
			t.Fatalf("DecodeValue(%q) of a hashed name: ok", name)
		}
		return name
	}
	if got, ok := DecodeValue(name); v != "" && (got != v || !ok) {
		t.Fatalf("DecodeValue(EncodeValue(%q)) = %q, %v; want %q, true", v, got, ok, v)
	}
	return name
}

// DecodeValue, for the tests, returns the value whose name EncodeValue gives as name. ok
// is false for a hashed name and for any name EncodeValue never writes:
// empty, longer than MaxPlainName, uppercase hex, a kept byte escaped,
// or a device name of Windows as it is.
func DecodeValue(name string) (v string, ok bool) {
	if name == "" || len(name) > MaxPlainName {
		return "", false
	}
	b := make([]byte, 0, len(name))
	for i := 0; i < len(name); i++ {
		switch c := name[i]; {
		case keep(c):
			b = append(b, c)
		case c == '_' && i+2 < len(name) && lowerHex(name[i+1]) && lowerHex(name[i+2]):
			b = append(b, unhex(name[i+1])<<4|unhex(name[i+2]))
			i += 2
		default:
			return "", false
		}
	}
	v = string(b)
	if EncodeValue(v) != name {
		return "", false // not the one name of v: "_61" for "a", "con"
	}
	return v, true
}

func lowerHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f'
}
