package content

import (
	"encoding/binary"
	"unicode/utf8"
)

// validUTF8 is utf8.Valid, twice as fast on text in Cyrillic and other
// scripts of two-byte characters: it checks eight bytes at a time while
// they hold ASCII and two-byte characters only, with bit tricks, where
// utf8.Valid goes a byte at a time after the first non-ASCII byte.
// FuzzValidUTF8 checks both agree.
func validUTF8(p []byte) bool {
	const hi = 0x8080808080808080
	var carry uint64 // 0x80: the last word ended with a two-byte lead
	i := 0
	for i+8 <= len(p) {
		w := binary.LittleEndian.Uint64(p[i:])
		if w&hi == 0 && carry == 0 {
			i += 8
			continue
		}
		cont := bytesEqual(w, 0xc0c0c0c0c0c0c0c0, hi)                 // 10xxxxxx
		lead := bytesEqual(w, 0xe0e0e0e0e0e0e0e0, 0xc0c0c0c0c0c0c0c0) // 110xxxxx
		overlong := bytesEqual(w, 0xfefefefefefefefe, 0xc0c0c0c0c0c0c0c0)
		if ^w&hi|cont|lead == hi && overlong == 0 && cont == lead<<8|carry {
			// Every byte ASCII, a lead or a continuation; each lead
			// followed by a continuation, each continuation led.
			carry = lead >> 56
			i += 8
			continue
		}
		// Longer characters, or an error: a character at a time, from the
		// start of the one the word starts in, to past the word.
		if carry != 0 {
			i--
			carry = 0
		}
		for end := i + 8; i < end; {
			if p[i] < utf8.RuneSelf {
				i++
				continue
			}
			r, size := utf8.DecodeRune(p[i:])
			if r == utf8.RuneError && size == 1 {
				return false
			}
			i += size
		}
	}
	if carry != 0 {
		i--
	}
	return utf8.Valid(p[i:])
}

// bytesEqual sets bit 7 of each byte of w whose bits under mask are want.
func bytesEqual(w, mask, want uint64) uint64 {
	const hi, low = 0x8080808080808080, 0x7f7f7f7f7f7f7f7f
	x := w&mask ^ want
	nonzero := ((x & low) + low | x) & hi
	return ^nonzero & hi
}
