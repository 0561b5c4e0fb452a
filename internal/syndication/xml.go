package syndication

import (
	"time"
)

// Django writes feeds through Python's xml.sax.saxutils.XMLGenerator
// (short_empty_elements off: every element has an end tag), with
// attributes sorted by name; xmlWriter writes the same bytes.

const xmlHead = `<?xml version="1.0" encoding="utf-8"?>` + "\n"

// attr is one attribute of an element.
type attr struct{ name, value string }

// appendStart appends the start tag of name with attrs, which must be
// sorted by name.
func appendStart(dst []byte, name string, attrs ...attr) []byte {
	dst = append(append(dst, '<'), name...)
	for _, a := range attrs {
		dst = append(append(append(dst, ' '), a.name...), '=')
		dst = appendAttr(dst, a.value)
	}
	return append(dst, '>')
}

// appendEnd appends the end tag of name.
func appendEnd(dst []byte, name string) []byte {
	return append(append(append(dst, '<', '/'), name...), '>')
}

// appendElement appends an element holding text, as addQuickElement
// writes it.
func appendElement(dst []byte, name, text string, attrs ...attr) []byte {
	dst = appendStart(dst, name, attrs...)
	dst = appendText(dst, text)
	return appendEnd(dst, name)
}

// appendText appends s as XMLGenerator.characters writes it ('&', '<'
// and '>' escaped), without the control characters XML 1.0 cannot hold
// (U+0000 to U+0008, U+000B, U+000C, U+000E to U+001F), which Django
// refuses to write and a feed leaves out.
func appendText(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '&':
			dst = append(dst, "&amp;"...)
		case c == '<':
			dst = append(dst, "&lt;"...)
		case c == '>':
			dst = append(dst, "&gt;"...)
		case c < 0x20 && c != '\t' && c != '\n' && c != '\r':
		default:
			dst = append(dst, c)
		}
	}
	return dst
}

// appendAttr appends s quoted as saxutils.quoteattr quotes it: '&', '<',
// '>', newline, carriage return and tab escaped; in double quotes, or in
// single quotes when s holds a double quote and no single quote, else in
// double quotes with each double quote as &quot;. The control characters
// appendText leaves out are left out here too (Django checks only text,
// and would write them).
func appendAttr(dst []byte, s string) []byte {
	dq, sq := false, false
	for i := 0; i < len(s); i++ {
		dq = dq || s[i] == '"'
		sq = sq || s[i] == '\''
	}
	quote := byte('"')
	if dq && !sq {
		quote = '\''
	}
	dst = append(dst, quote)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '&':
			dst = append(dst, "&amp;"...)
		case '<':
			dst = append(dst, "&lt;"...)
		case '>':
			dst = append(dst, "&gt;"...)
		case '\n':
			dst = append(dst, "&#10;"...)
		case '\r':
			dst = append(dst, "&#13;"...)
		case '\t':
			dst = append(dst, "&#9;"...)
		case '"':
			if quote == '"' {
				dst = append(dst, "&quot;"...)
			} else {
				dst = append(dst, c)
			}
		default:
			if c >= 0x20 {
				dst = append(dst, c)
			}
		}
	}
	return append(dst, quote)
}

// iriToURI returns s as Django's iri_to_uri makes it, which feedgenerator
// applies to every link: urllib.parse.quote with the safe characters
// /#%[]=:;$&()+,!?*@'~ (and letters, digits, '_', '.', '-', '~'); every
// other byte of its UTF-8 as '%' and two uppercase hex digits.
func iriToURI(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if !uriSafe(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const upper = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		if c := s[i]; uriSafe(c) {
			b = append(b, c)
		} else {
			b = append(b, '%', upper[c>>4], upper[c&15])
		}
	}
	return string(b)
}

func uriSafe(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	switch c {
	case '_', '.', '-', '~', '/', '#', '%', '[', ']', '=', ':', ';', '$', '&', '(', ')', '+', ',', '!', '?', '*', '@', '\'':
		return true
	}
	return false
}

// appendRFC2822 appends t as Python's email.utils.format_datetime writes
// an aware time ("Mon, 04 Nov 2024 01:52:33 +0300"), in Django's zone
// (see djangoTime).
func appendRFC2822(dst []byte, t time.Time) []byte {
	t = djangoTime(t)
	dst = t.AppendFormat(dst, "Mon, 02 Jan 2006 15:04:05 ")
	return appendOffset(dst, t, false)
}

// appendRFC3339 appends t as Python's datetime.isoformat writes an aware
// time with no microseconds ("2024-11-04T01:52:33+03:00"), in Django's
// zone (see djangoTime).
func appendRFC3339(dst []byte, t time.Time) []byte {
	t = djangoTime(t)
	dst = t.AppendFormat(dst, "2006-01-02T15:04:05")
	return appendOffset(dst, t, true)
}

// djangoTime returns t as Django 3.2 makes a naive time aware in the
// site's zone, with pytz: the same wall clock, its offset rounded to the
// minute as pytz rounds it (half up), which moves the instant by as much
// where the offset has seconds (local mean times before about 1900:
// Amsterdam's +00:19:32 is +00:20).
func djangoTime(t time.Time) time.Time {
	name, off := t.Zone()
	if off%60 == 0 {
		return t
	}
	rounded := off + 30
	if rounded < 0 && rounded%60 != 0 {
		rounded -= 60 // floor division, as Python's //
	}
	rounded = rounded / 60 * 60
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.FixedZone(name, rounded))
}

// appendOffset appends the offset of t from UTC, whole minutes, as Python
// writes it: +HHMM (strftime's %z) or +HH:MM (isoformat, colon).
func appendOffset(dst []byte, t time.Time, colon bool) []byte {
	_, off := t.Zone()
	sign := byte('+')
	if off < 0 {
		sign, off = '-', -off
	}
	two := func(dst []byte, n int) []byte { return append(dst, byte('0'+n/10), byte('0'+n%10)) }
	dst = two(append(dst, sign), off/3600)
	if colon {
		dst = append(dst, ':')
	}
	return two(dst, off/60%60)
}
