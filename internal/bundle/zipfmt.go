package bundle

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"time"
)

// A bundle's zip structure, written (Write) and checked (Read) here byte
// for byte: the subset of APPNOTE.TXT that feedgen writes, in this order
// and nothing else:
//
//	for each entry, in name order:
//	  local header   30 bytes, the name, an extended timestamp (9 bytes)
//	  data           deflated, no data descriptor
//	central directory: a record per entry, in the same order
//	zip64 end record and locator, when there are 65,535 entries or more
//	  or the archive passes 4 GiB
//	end record
//	comment          the seal: sealPrefix, then the hex SHA-256 of the
//	                 SHA-256 of each entry's compressed data, in order
//
// Every field of every header is fixed (versions, flags but the UTF-8
// one, method, mode, the time of the build), follows from the entry (its
// name, CRC-32 and sizes), or from where the entry is: so a reader that
// knows the entries writes the archive's every byte again, outside the
// deflated data, and compares; the seal holds the data, which
// decompressing does not wholly see (the padding bits of its last byte
// read as any value). These are the bytes archive/zip's Writer wrote for
// bundles before this file (a bundle of then has no comment, and reads as
// one: testdata/v1.zip).

// Signatures and lengths of the records.
const (
	localSig   = 0x04034b50
	centralSig = 0x02014b50
	end64Sig   = 0x06064b50
	loc64Sig   = 0x07064b50
	endSig     = 0x06054b50

	localLen   = 30
	centralLen = 46
	end64Len   = 56
	loc64Len   = 20
	endLen     = 22
	extTimeLen = 9  // the extended timestamp: id, size, flags, time
	zip64Len   = 28 // the zip64 extra field: id, size, three sizes
)

// The fixed fields.
const (
	versionNeeded = 20        // zip 2.0: deflate
	versionMadeBy = 3<<8 | 20 // by Unix, zip 2.0
	version64     = 45        // of the zip64 end record
	methodDeflate = 8
	flagUTF8      = 0x800
	modeAttrs     = 0o100644 << 16 // a regular file, -rw-r--r--, from Unix
	extTimeID     = 0x5455
	zip64ID       = 0x0001
	max16         = 1<<16 - 1
	max32         = 1<<32 - 1
)

// sealPrefix starts the comment of a bundle; the hex SHA-256 of the
// SHA-256 of each entry's compressed data, in order, follows it. A sum of
// sums, so that each entry's is taken as its data is read, on any core.
const sealPrefix = "feedgen bundle; SHA-256 of its entries' compressed data: "

// sealLen is the length of a bundle's comment.
const sealLen = len(sealPrefix) + 2*sha256.Size

// seal returns the comment of an archive whose entries' sums have the
// SHA-256 sum.
func seal(sum []byte) string { return sealPrefix + hex.EncodeToString(sum) }

// zentry is what the headers of an entry are made of.
type zentry struct {
	name         string
	crc          uint32
	csize, usize uint64 // compressed, uncompressed
}

// stamp is the time of every entry of a bundle (entryTime of the build
// time), as the headers store it: an MS-DOS time and date, and the
// extended timestamp's Unix time.
type stamp struct {
	time, date uint16
	unix       uint32
}

func stampOf(t time.Time) stamp {
	t = entryTime(t)
	return stamp{
		date: uint16(t.Day() + int(t.Month())<<5 + (t.Year()-1980)<<9),
		time: uint16(t.Second()/2 + t.Minute()<<5 + t.Hour()<<11),
		unix: uint32(t.Unix()),
	}
}

var le = binary.LittleEndian

func flagsOf(name string) uint16 {
	if !isASCII(name) {
		return flagUTF8 // the name is UTF-8 (checkName made sure)
	}
	return 0
}

// zip64 reports whether the central directory record of an entry of
// these sizes at offset holds them in a zip64 extra field.
func (e *zentry) zip64(offset uint64) bool {
	return e.csize >= max32 || e.usize >= max32 || offset >= max32
}

// appendLocal appends the local header of entry e.
func appendLocal(b []byte, e *zentry, s stamp) []byte {
	b = le.AppendUint32(b, localSig)
	b = le.AppendUint16(b, versionNeeded)
	b = le.AppendUint16(b, flagsOf(e.name))
	b = le.AppendUint16(b, methodDeflate)
	b = le.AppendUint16(b, s.time)
	b = le.AppendUint16(b, s.date)
	b = le.AppendUint32(b, e.crc)
	b = le.AppendUint32(b, uint32(min(e.csize, max32)))
	b = le.AppendUint32(b, uint32(min(e.usize, max32)))
	b = le.AppendUint16(b, uint16(len(e.name)))
	b = le.AppendUint16(b, extTimeLen)
	b = append(b, e.name...)
	return appendExtTime(b, s)
}

func appendExtTime(b []byte, s stamp) []byte {
	b = le.AppendUint16(b, extTimeID)
	b = le.AppendUint16(b, extTimeLen-4)
	b = append(b, 1) // the modification time only
	return le.AppendUint32(b, s.unix)
}

// localSize is the length of the local header of an entry named name.
func localSize(name string) int64 { return int64(localLen + len(name) + extTimeLen) }

// appendCentral appends the central directory record of entry e, whose
// local header is at offset.
func appendCentral(b []byte, e *zentry, s stamp, offset uint64) []byte {
	z := e.zip64(offset)
	b = le.AppendUint32(b, centralSig)
	b = le.AppendUint16(b, versionMadeBy)
	b = le.AppendUint16(b, versionNeeded)
	b = le.AppendUint16(b, flagsOf(e.name))
	b = le.AppendUint16(b, methodDeflate)
	b = le.AppendUint16(b, s.time)
	b = le.AppendUint16(b, s.date)
	b = le.AppendUint32(b, e.crc)
	extra := extTimeLen
	if z {
		b = le.AppendUint32(b, max32)
		b = le.AppendUint32(b, max32)
		extra += zip64Len
	} else {
		b = le.AppendUint32(b, uint32(e.csize))
		b = le.AppendUint32(b, uint32(e.usize))
	}
	b = le.AppendUint16(b, uint16(len(e.name)))
	b = le.AppendUint16(b, uint16(extra))
	b = le.AppendUint16(b, 0) // comment
	b = le.AppendUint16(b, 0) // disk
	b = le.AppendUint16(b, 0) // internal attributes
	b = le.AppendUint32(b, modeAttrs)
	b = le.AppendUint32(b, uint32(min(offset, max32)))
	b = append(b, e.name...)
	b = appendExtTime(b, s)
	if z {
		b = le.AppendUint16(b, zip64ID)
		b = le.AppendUint16(b, zip64Len-4)
		b = le.AppendUint64(b, e.usize)
		b = le.AppendUint64(b, e.csize)
		b = le.AppendUint64(b, offset)
	}
	return b
}

// appendEnd appends the end of an archive whose central directory of
// records entries, size bytes, starts at offset, and whose comment is
// comment bytes long (the comment itself is not appended): the zip64 end
// record and locator when they are needed, then the end record.
func appendEnd(b []byte, records, size, offset uint64, comment int) []byte {
	if records >= max16 || size >= max32 || offset >= max32 {
		b = le.AppendUint32(b, end64Sig)
		b = le.AppendUint64(b, end64Len-12)
		b = le.AppendUint16(b, version64)
		b = le.AppendUint16(b, version64)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, records)
		b = le.AppendUint64(b, records)
		b = le.AppendUint64(b, size)
		b = le.AppendUint64(b, offset)
		b = le.AppendUint32(b, loc64Sig)
		b = le.AppendUint32(b, 0)
		b = le.AppendUint64(b, offset+size) // where the zip64 end record is
		b = le.AppendUint32(b, 1)
		records, size, offset = max16, max32, max32
	}
	b = le.AppendUint32(b, endSig)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, 0)
	b = le.AppendUint16(b, uint16(records))
	b = le.AppendUint16(b, uint16(records))
	b = le.AppendUint32(b, uint32(size))
	b = le.AppendUint32(b, uint32(offset))
	return le.AppendUint16(b, uint16(comment))
}

// A field is where a field of a record starts, and its name in messages.
type field struct {
	at   int
	name string
}

var localFields = []field{
	{0, "signature"}, {4, "version needed to extract"}, {6, "flags"},
	{8, "compression method"}, {10, "modification time"}, {12, "modification date"},
	{14, "CRC-32"}, {18, "compressed size"}, {22, "size"}, {26, "name length"},
	{28, "extra field length"}, {30, "name"},
}

var centralFields = []field{
	{0, "signature"}, {4, "version made by"}, {6, "version needed to extract"},
	{8, "flags"}, {10, "compression method"}, {12, "modification time"},
	{14, "modification date"}, {16, "CRC-32"}, {20, "compressed size"},
	{24, "size"}, {28, "name length"}, {30, "extra field length"},
	{32, "comment length"}, {34, "disk number"}, {36, "internal attributes"},
	{38, "file mode"}, {42, "local header offset"}, {46, "name"},
}

var endFields = []field{
	{0, "signature"}, {4, "disk number"}, {6, "disk of the central directory"},
	{8, "entries on this disk"}, {10, "entries"}, {12, "central directory size"},
	{16, "central directory offset"}, {20, "comment length"},
}

var end64Fields = []field{
	{0, "signature"}, {4, "record size"}, {12, "version made by"},
	{14, "version needed to extract"}, {16, "disk number"}, {20, "disk of the central directory"},
	{24, "entries on this disk"}, {32, "entries"}, {40, "central directory size"},
	{48, "central directory offset"},
	{56, "locator's signature"}, {60, "locator's disk"}, {64, "locator's offset"}, {72, "locator's disk count"},
}

// fieldAt names the field of a record (fields) at byte i; past the
// fixed part, of a header of a name nameLen bytes long, the name, then
// the extra field.
func fieldAt(fields []field, i, nameLen int) string {
	last := fields[len(fields)-1]
	if last.name == "name" && i >= last.at+nameLen {
		return "extra field"
	}
	name := fields[0].name
	for _, f := range fields {
		if f.at > i {
			break
		}
		name = f.name
	}
	return name
}

// firstDiff returns the first byte at which a and b differ, their
// shorter length when one is the start of the other, or -1.
func firstDiff(a, b []byte) int {
	n := min(len(a), len(b))
	for i := range n {
		if a[i] != b[i] {
			return i
		}
	}
	if len(a) != len(b) {
		return n
	}
	return -1
}
