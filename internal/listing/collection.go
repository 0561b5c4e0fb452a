package listing

import (
	"crypto/sha256"
	"slices"
	"strings"
)

// MaxPlainName is the longest name EncodeValue writes byte by byte; a
// value whose encoding would be longer is named by its hash.
const MaxPlainName = 200

// HashPrefix starts the name of a value named by its hash: the prefix and
// the 64 lowercase hex digits of the SHA-256 of the value. A plain name
// never has it: there '_' is always followed by two hex digits, and 'h'
// is not one.
const HashPrefix = "_h"

// EncodeValue returns the name of the folder that holds the pages of the
// collection selected by filter value v: each byte of v that is a-z, 0-9
// or '-' is kept, every other byte becomes '_' and its two lowercase hex
// digits ("Go" is "_47o", "news" is "news", "Ёж" is "_d0_81_d0_b6").
// Names are only a-z, 0-9, '-' and '_', so they are safe in URL paths,
// object storage keys and file names everywhere; they are never "." or
// "..", and two values never share a name, also on case-insensitive file
// systems. Two exceptions keep names valid on Windows and short:
//
//   - a name that would be a device name of Windows (con, prn, aux, nul,
//     com0 to com9, lpt0 to lpt9) has its last byte escaped: "con" is
//     "co_6e";
//   - a name that would be longer than MaxPlainName bytes is HashPrefix
//     and the lowercase hex SHA-256 of v, 66 bytes, which DecodeValue
//     cannot reverse (the manifest keeps the values of every collection).
//
// The empty value is no filter and has no folder: its name is empty.
func EncodeValue(v string) string {
	n := 0
	for i := 0; i < len(v); i++ {
		if keep(v[i]) {
			n++
		} else {
			n += 3
		}
	}
	if n > MaxPlainName {
		b := make([]byte, 0, len(HashPrefix)+2*sha256.Size)
		b = append(b, HashPrefix...)
		for _, c := range sha256.Sum256([]byte(v)) {
			b = append(b, hex[c>>4], hex[c&0xf])
		}
		return string(b)
	}
	if n == len(v) {
		if deviceName(v) {
			return string(appendEscape([]byte(v[:len(v)-1]), v[len(v)-1]))
		}
		return v // the usual case, without a copy
	}
	b := make([]byte, 0, n)
	for i := 0; i < len(v); i++ {
		if keep(v[i]) {
			b = append(b, v[i])
		} else {
			b = appendEscape(b, v[i])
		}
	}
	return string(b)
}

// keep reports whether byte c stands for itself in a name.
func keep(c byte) bool {
	return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-'
}

func appendEscape(b []byte, c byte) []byte {
	return append(b, '_', hex[c>>4], hex[c&0xf])
}

// deviceName reports whether v, a name of kept bytes, is one Windows
// keeps for a device (in any case, and also with an extension, but a name
// never has a '.'): no folder can have it there.
func deviceName(v string) bool {
	switch len(v) {
	case 3:
		switch v {
		case "con", "prn", "aux", "nul":
			return true
		}
	case 4:
		return (v[:3] == "com" || v[:3] == "lpt") && '0' <= v[3] && v[3] <= '9'
	}
	return false
}

// CollectionDir returns the folder, inside the output folder, of the pages
// of the collection filtered by params: Dir for none (the main listing),
// else Dir then each parameter's key and EncodeValue of its value, in
// sorted key order: section=news, category=politics gives
// "articles/category/politics/section/news". Keys are filter names
// (lowercase letters); values are not empty (an empty value is no filter).
//
// Paths never collide. After Dir, the segments of a collection's folder
// are in turn a key and a name: keys are filter names (lowercase letters),
// names have no '.'. A page adds index.json where the next key would be,
// or a limit (digits) there and an offset file (digits and ".json") where
// the next name would be. Letters, digits and index.json differ, and so do
// names and files, so two equal paths have the same keys, names, limits
// and offsets: no page or folder of a collection is one of another
// collection or of the main listing (whose limit folders, such as
// articles/20, are where a key would be), and no file is a folder.
func CollectionDir(params []Param) string {
	if len(params) == 0 {
		return Dir
	}
	byKey := func(a, b Param) int { return strings.Compare(a.Key, b.Key) }
	if !slices.IsSortedFunc(params, byKey) {
		params = slices.Clone(params)
		slices.SortStableFunc(params, byKey)
	}
	var b strings.Builder
	b.WriteString(Dir)
	for _, p := range params {
		b.WriteByte('/')
		b.WriteString(p.Key)
		b.WriteByte('/')
		b.WriteString(EncodeValue(p.Value))
	}
	return b.String()
}
