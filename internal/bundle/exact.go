package bundle

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
)

// The check of a bundle's bytes (see zipfmt.go): every byte outside the
// entries' deflated data is written again from the entries the central
// directory lists and the time of the build, and compared; the data is
// checked by decompressing it (its CRC-32, then the manifest's size and
// SHA-256), and, in a sealed bundle, the whole archive by the SHA-256 in
// its comment, which holds what decompressing cannot (a deflate stream
// reads the same with other bits in its last byte's padding).
//
// What differs is damage, said once per entry, at its first field that
// differs, and blamed on that entry only: the place of an entry is where
// the entry before it ends, unless that entry is itself damaged, when its
// central directory record says where it is.

// archiveLayout is what checkBytes learned of an archive.
type archiveLayout struct {
	// offsets are where the entries' local headers are, by index in the
	// zip.Reader's File; nil when the archive's end could not be read.
	offsets []int64
	// sealAt is where the seal starts, and sum what it says; -1 when the
	// archive has none (a bundle written before seals) or it is damaged.
	sealAt int64
	sum    [sha256.Size]byte
}

// window reads an archive through a buffer, for reads that mostly go
// forward.
type window struct {
	r     io.ReaderAt
	size  int64
	block int // bytes read at once, at least
	buf   []byte
	at    int64 // the offset of buf[0]
}

// get returns the n bytes at off, valid until the next call; false when
// they are not all in the archive, or cannot be read.
func (w *window) get(off int64, n int) ([]byte, bool) {
	if off < 0 || n < 0 || off > w.size-int64(n) {
		return nil, false
	}
	if off >= w.at && off+int64(n) <= w.at+int64(len(w.buf)) {
		return w.buf[off-w.at : off-w.at+int64(n)], true
	}
	size := int(min(int64(max(n, w.block)), w.size-off))
	if cap(w.buf) < size {
		w.buf = make([]byte, size)
	}
	w.buf = w.buf[:size]
	if k, err := w.r.ReadAt(w.buf, off); k < size && err != nil {
		w.buf = w.buf[:0]
		return nil, false
	}
	w.at = off
	return w.buf[:n], true
}

// checkBytes compares the archive's bytes, outside the entries' data,
// with those Write writes for the entries of zr (as its central directory
// lists them) at the time of the build, built; nil when it is not known
// (no manifest could be read): then the time most entries have. Its
// steps: the end records (findEnd, findDirectory), each entry's records
// (checkRecords), then what is between the last entry and the end
// records, and the end records themselves (checkTail).
func (v *verifier) checkBytes(ctx context.Context, zr *zip.Reader, built *time.Time) archiveLayout {
	lay := archiveLayout{sealAt: -1}
	w := &window{r: v.r, size: v.size, block: 64 << 10}
	end, ok := v.findEnd(w, &lay)
	if !ok || !v.findDirectory(w, zr, &end) {
		return lay
	}
	var st stamp
	if built != nil {
		st = stampOf(*built)
	} else {
		st = v.commonStamp(w, zr, end.dirAt, end.tailAt)
	}
	run, blamed, ok := v.checkRecords(ctx, w, zr, end, st, built, &lay)
	if ok {
		v.checkTail(w, zr, end, run, blamed)
	}
	return lay
}

// archiveEnd is where the end of an archive is: its end records and its
// central directory.
type archiveEnd struct {
	endAt   int64 // the end record
	comment int   // the length of its comment: the seal's, or none
	tailAt  int64 // the end records: the zip64 ones, when there, then the end record
	dirAt   int64 // the central directory
	dirSize uint64
}

// findEnd finds the end record, before the seal or last, and reads the
// seal into lay; false when there is none (the damage is reported).
func (v *verifier) findEnd(w *window, lay *archiveLayout) (archiveEnd, bool) {
	end := archiveEnd{endAt: -1}
	if b, ok := w.get(v.size-endLen-int64(sealLen), endLen); ok && le.Uint32(b) == endSig && int(le.Uint16(b[20:])) == sealLen {
		end.endAt, end.comment = v.size-endLen-int64(sealLen), sealLen
	} else if b, ok := w.get(v.size-endLen, endLen); ok && le.Uint32(b) == endSig && le.Uint16(b[20:]) == 0 {
		end.endAt = v.size - endLen
	}
	if end.endAt < 0 {
		v.damaged("", v.size, "%s", v.endProblem(w))
		return end, false
	}
	if end.comment > 0 {
		b, _ := w.get(end.endAt+endLen, sealLen)
		sum, err := hex.DecodeString(string(b[len(sealPrefix):]))
		if !bytes.HasPrefix(b, []byte(sealPrefix)) || err != nil || hex.EncodeToString(sum) != string(b[len(sealPrefix):]) {
			v.damaged("", end.endAt+endLen, "damaged: its comment is not the seal feedgen bundle writes (%q…)", b[:min(len(b), 24)])
		} else {
			lay.sealAt = end.endAt + endLen
			copy(lay.sum[:], sum)
		}
	}
	return end, true
}

// findDirectory finds where the end records start and the central
// directory, from the end record at end.endAt (and the zip64 end record,
// when it points there); false when the zip64 end record is damaged.
// When the end record's offset of the central directory is damaged, or
// bytes came before the first entry, it says so in v.shifted and
// v.prefix.
func (v *verifier) findDirectory(w *window, zr *zip.Reader, end *archiveEnd) bool {
	b, _ := w.get(end.endAt, endLen)
	dirSize, dirOffset, tailAt := uint64(le.Uint32(b[12:])), uint64(le.Uint32(b[16:])), end.endAt
	if le.Uint16(b[10:]) == max16 || le.Uint32(b[12:]) == max32 || le.Uint32(b[16:]) == max32 {
		tailAt = end.endAt - loc64Len - end64Len
		b, ok := w.get(tailAt, end64Len)
		if !ok || le.Uint32(b) != end64Sig {
			v.damaged("", tailAt, "damaged: its zip64 end record is not where feedgen bundle writes it")
			return false
		}
		dirSize, dirOffset = le.Uint64(b[40:]), le.Uint64(b[48:])
	}
	// The central directory ends where the end records start; its size
	// and offset say where it starts: when they disagree, one of them is
	// damaged (said with the end record, below), and the other is where
	// a record is.
	dirAt := tailAt - int64(min(dirSize, uint64(tailAt)))
	if int64(dirOffset) != dirAt {
		if b, ok := w.get(dirAt, 4); dirOffset < uint64(tailAt) && (!ok || le.Uint32(b) != centralSig) {
			dirAt = int64(dirOffset)
		} else {
			// The offset is damaged: the zip package reads every entry
			// that much away from where it is (it takes the archive for
			// one appended to other bytes): what it finds wrong in the
			// entries follows from the end record.
			v.shifted = true
			// Or bytes came before the first entry (a file written
			// to the front of the bundle): its local header is as far
			// from byte 0 as the directory from where the end record
			// says.
			if d := dirAt - int64(dirOffset); d > 0 && len(zr.File) > 0 {
				name := zr.File[0].Name
				h := make([]byte, localLen+len(name))
				if n, _ := v.r.ReadAt(h, d); n == len(h) && le.Uint32(h) == localSig && string(h[localLen:]) == name {
					v.prefix = d
				}
			}
		}
	}
	end.tailAt, end.dirAt, end.dirSize = tailAt, dirAt, uint64(tailAt-dirAt)
	return true
}

// checkRecords compares the local header and central directory record of
// each entry of zr, in the order of the central directory (the order of
// their data), with those Write writes for it at stamp st, and sets
// lay.offsets. It returns where the last entry ends, and whether that
// entry is damaged (blamed: where it ends is not known); false when the
// central directory cannot be read to its end (the damage is reported).
func (v *verifier) checkRecords(ctx context.Context, w *window, zr *zip.Reader, end archiveEnd, st stamp, built *time.Time, lay *archiveLayout) (run int64, blamed, ok bool) {
	// The local headers, one by one: the data between them is read once,
	// decompressed (openEntry).
	lw := &window{r: v.r, size: v.size}
	lay.offsets = make([]int64, len(zr.File))
	var (
		exp     []byte
		at      = end.dirAt // the next record
		records int
	)
	// run is where the next entry starts; blamed, that the entry before
	// is damaged: its size may be.
	for i, f := range zr.File {
		if i%4096 == 0 && ctx.Err() != nil {
			return run, blamed, false
		}
		name := f.Name
		rec, problem := record(w, at, end.tailAt)
		if problem != "" {
			v.damaged(name, run, "damaged: its central directory record %s", problem)
			return run, blamed, false
		}
		records++
		e := zentry{name: name, crc: f.CRC32, csize: f.CompressedSize64, usize: f.UncompressedSize64}
		stated := statedOffset(rec)
		if blamed && stated >= 0 {
			run = stated // where the damaged entry before it ends is not known
		}
		lay.offsets[i] = run
		blamed = false

		// Its local header first: a length or size of its central
		// directory record that differs is said there, as what differs.
		lh, ok := lw.get(run, int(localSize(name)))
		if !ok {
			v.damaged(name, run, "damaged: its local header runs past the end of the archive")
			blamed = true
		} else if exp = appendLocal(exp[:0], &e, st); !bytes.Equal(lh, exp) {
			switch fld := fieldAt(localFields, firstDiff(lh, exp), len(name)); fld {
			case "CRC-32", "compressed size", "size", "name length", "name":
				v.damaged(name, run, "damaged: its local header's %s from its central directory record's", differs(fld))
			default:
				v.damaged(name, run, "damaged: its local header's %s", notWritten(fld, built))
			}
			blamed = true
		}

		if exp = appendCentral(exp[:0], &e, st, uint64(run)); !blamed && !bytes.Equal(rec, exp) {
			fld := fieldAt(centralFields, firstDiff(rec, exp), len(name))
			if fld == "local header offset" {
				v.damaged(name, run, "damaged: its central directory record puts its local header at byte %d, where the entry before it ends at %d", stated, run)
			} else {
				v.damaged(name, run, "damaged: its central directory record's %s", notWritten(fld, built))
			}
			blamed = true
		}
		at += int64(len(rec))
		run += localSize(name) + int64(e.csize)
	}
	if at != end.tailAt {
		v.damaged("", at, "damaged: its central directory holds more records than the %d it lists", records)
		return run, blamed, false
	}
	return run, blamed, true
}

// checkTail checks that the last entry, ending at run (blamed: damaged,
// so where it ends is not known), ends where the central directory
// starts, and compares the end records with those Write writes.
func (v *verifier) checkTail(w *window, zr *zip.Reader, end archiveEnd, run int64, blamed bool) {
	dirAt := end.dirAt
	if run != dirAt && !blamed {
		if run < dirAt {
			v.damaged("", run, "damaged: %s between its last entry and its central directory", human.Plural(int(dirAt-run), "byte"))
		} else {
			v.damaged("", dirAt, "damaged: its central directory starts inside its last entry")
		}
	}
	if blamed {
		run = dirAt // where the last entry, damaged, ends is not known
	}
	b, ok := w.get(end.tailAt, int(end.endAt+endLen-end.tailAt))
	if !ok {
		return
	}
	exp := appendEnd(nil, uint64(len(zr.File)), end.dirSize, uint64(run), end.comment)
	d := firstDiff(b, exp)
	if d < 0 {
		return
	}
	fld := ""
	if len(b) > endLen {
		fld = "zip64 end record's "
		if d >= end64Len+loc64Len {
			fld, d = "", d-end64Len-loc64Len
		}
	}
	if fld == "" {
		fld = "end record's " + fieldAt(endFields, d, 0)
	} else {
		fld += fieldAt(end64Fields, d, 0)
	}
	v.damaged("", end.tailAt+int64(d), "damaged: its %s not what feedgen bundle writes", isAre(fld))
}

// record returns the central directory record at at, which must end by
// end, or says what is wrong with it.
func record(w *window, at, end int64) ([]byte, string) {
	b, ok := w.get(at, centralLen)
	if !ok || at+centralLen > end || le.Uint32(b) != centralSig {
		return nil, "is not where the record before it ends"
	}
	n := centralLen + int(le.Uint16(b[28:])) + int(le.Uint16(b[30:])) + int(le.Uint16(b[32:]))
	if at+int64(n) > end {
		return nil, "runs past the end of the central directory (a length in it changed)"
	}
	b, _ = w.get(at, n)
	return b, ""
}

// statedOffset returns the offset of the local header that a central
// directory record gives: in its zip64 extra field when its own is full;
// -1 when it cannot be read.
func statedOffset(rec []byte) int64 {
	if o := le.Uint32(rec[42:]); o != max32 {
		return int64(o)
	}
	n, m := int(le.Uint16(rec[28:])), int(le.Uint16(rec[30:]))
	extra := rec[centralLen+n : centralLen+n+m]
	for len(extra) >= 4 {
		id, size := le.Uint16(extra), int(le.Uint16(extra[2:]))
		if size > len(extra)-4 {
			break
		}
		if id == zip64ID {
			vals := extra[4 : 4+size]
			for _, full := range []bool{le.Uint32(rec[24:]) == max32, le.Uint32(rec[20:]) == max32} {
				if full && len(vals) >= 8 {
					vals = vals[8:]
				}
			}
			if len(vals) >= 8 {
				return int64(le.Uint64(vals) & (1<<63 - 1))
			}
			break
		}
		extra = extra[4+size:]
	}
	return -1
}

// commonStamp returns the time most entries of the central directory
// (from dirAt to end) have: the build's, when the manifest that gives it
// cannot be read.
func (v *verifier) commonStamp(w *window, zr *zip.Reader, dirAt, end int64) stamp {
	count := map[stamp]int{}
	best, most := stamp{}, 0
	at := dirAt
	for range zr.File {
		rec, problem := record(w, at, end)
		if problem != "" {
			break
		}
		at += int64(len(rec))
		n := int(le.Uint16(rec[28:]))
		s := stamp{time: le.Uint16(rec[12:]), date: le.Uint16(rec[14:])}
		if x := rec[centralLen+n:]; len(x) >= extTimeLen {
			s.unix = le.Uint32(x[5:])
		}
		if count[s]++; count[s] > most {
			best, most = s, count[s]
		}
	}
	return best
}

// endProblem says what is at the end of an archive that does not end
// with an end record and a seal, or an end record without a comment.
func (v *verifier) endProblem(w *window) string {
	n := min(v.size, 65535+endLen)
	b, ok := w.get(v.size-n, int(n))
	if ok {
		for i := bytes.LastIndex(b, []byte("PK\x05\x06")); i >= 0; i = bytes.LastIndex(b[:i], []byte("PK\x05\x06")) {
			if i+endLen > len(b) {
				continue
			}
			if after := len(b) - (i + endLen + int(le.Uint16(b[i+20:]))); after > 0 {
				return "damaged: " + human.Plural(after, "byte") + " after the end of the archive (it was appended to, or the comment length of its end record changed)"
			}
			break
		}
	}
	return "damaged: its end record or its comment is not what feedgen bundle writes (the comment length of its end record changed, or the archive was cut)"
}

// checkSeal compares the seal of the archive, when it has one, with the
// SHA-256 of its entries' sums (the SHA-256 of each one's compressed
// data, in their order): those read with their data (openEntry), and the
// others, read here. It does nothing once damage is found: the seal is
// said only when nothing else is.
func (v *verifier) checkSeal(ctx context.Context, zr *zip.Reader) error {
	if v.lay.sealAt < 0 || len(v.damage) > 0 {
		return nil
	}
	h, sum := sha256.New(), sha256.New()
	var buf []byte
	for i, f := range zr.File {
		if !v.summed[i] {
			if err := ctx.Err(); err != nil {
				return err
			}
			raw, err := f.OpenRaw()
			if err != nil {
				return nil // damaged, and said so
			}
			if buf == nil {
				buf = make([]byte, 32<<10)
			}
			sum.Reset()
			if _, err := io.CopyBuffer(sum, raw, buf); err != nil {
				return nil
			}
			sum.Sum(v.sums[i][:0])
		}
		h.Write(v.sums[i][:])
	}
	if !bytes.Equal(h.Sum(nil), v.lay.sum[:]) {
		v.sealBroken = true
	}
	return nil
}

// openEntry opens the data of entry f for reading, decompressed, as
// zip.File.Open does, checking its size and CRC-32 against its headers
// when it ends; and sums its compressed data, every byte to its end, for
// checkSeal. *dec is the decompressor to use again, or nil: it is set.
func (v *verifier) openEntry(f *zip.File, dec *io.ReadCloser) (io.ReadCloser, error) {
	raw, err := f.OpenRaw()
	if err != nil {
		return nil, err
	}
	e := &entryReader{v: v, f: f, i: v.index[f], sum: sha256.New(), crc: crc32.NewIEEE()}
	e.raw = io.TeeReader(raw, e.sum)
	switch {
	case f.Method == zip.Store:
		e.dec = io.NopCloser(e.raw)
	case f.Method != zip.Deflate:
		return nil, zip.ErrAlgorithm
	case *dec == nil:
		*dec = flate.NewReader(e.raw)
		e.dec = *dec
	default:
		if err := (*dec).(flate.Resetter).Reset(e.raw, nil); err != nil {
			return nil, err
		}
		e.dec = *dec
	}
	return e, nil
}

// errLonger is the error of an entry's data that decompresses to more
// bytes than its headers say.
var errLonger = errors.New("longer than its headers say")

// entryReader reads an entry's data: see openEntry.
type entryReader struct {
	v   *verifier
	f   *zip.File
	i   int
	raw io.Reader // the compressed data, through sum
	dec io.ReadCloser
	sum hash.Hash
	crc hash.Hash32
	n   uint64
	err error
}

func (e *entryReader) Read(p []byte) (int, error) {
	if e.err != nil {
		return 0, e.err
	}
	n, err := e.dec.Read(p)
	e.crc.Write(p[:n])
	e.n += uint64(n)
	switch {
	case e.n > e.f.UncompressedSize64:
		err = errLonger
	case err == io.EOF && e.n < e.f.UncompressedSize64:
		err = io.ErrUnexpectedEOF
	case err == io.EOF && e.crc.Sum32() != e.f.CRC32:
		err = zip.ErrChecksum
	case err == io.EOF:
		if _, derr := io.Copy(io.Discard, e.raw); derr != nil {
			err = derr
			break
		}
		e.sum.Sum(e.v.sums[e.i][:0])
		e.v.summed[e.i] = true
	}
	e.err = err
	return n, err
}

func (e *entryReader) Close() error { return e.dec.Close() }

// readable is the files of an archive, whose read errors are
// *manifest.Mismatch: damage, which the checks of the entries report,
// so that manifest.Expand reads past it.
type readable struct{ zr *zip.Reader }

func (r readable) Open(name string) (fs.File, error) {
	f, err := r.zr.Open(name)
	if err != nil {
		return nil, err
	}
	return readableFile{f, name}, nil
}

type readableFile struct {
	fs.File
	name string
}

func (f readableFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	if err != nil && err != io.EOF {
		err = &manifest.Mismatch{Path: f.name, Reason: readError(err)}
	}
	return n, err
}

// sealMessage is the damage a broken seal says when nothing else is
// found: a byte changed where decompressing does not see it.
const sealMessage = "damaged: its compressed data differs from the SHA-256 in its comment, though every entry reads back whole (a byte changed that decompressing does not see, or one of the comment)"

// locateDirectoryDamage says where the central directory of an archive
// that the zip package cannot read stops being readable, and reports
// whether it could: a length changed in a record, so that the next one is
// not where it says. It reads the directory as Write wrote it.
func (v *verifier) locateDirectoryDamage() bool {
	w := &window{r: v.r, size: v.size, block: 64 << 10}
	endAt := int64(-1)
	for _, comment := range []int{sealLen, 0} {
		at := v.size - endLen - int64(comment)
		if b, ok := w.get(at, endLen); ok && le.Uint32(b) == endSig && int(le.Uint16(b[20:])) == comment {
			endAt = at
			break
		}
	}
	if endAt < 0 {
		return false
	}
	b, _ := w.get(endAt, endLen)
	records, dirSize, tailAt := int(le.Uint16(b[10:])), int64(le.Uint32(b[12:])), endAt
	if records == max16 || dirSize == max32 {
		tailAt = endAt - loc64Len - end64Len
		if b, ok := w.get(endAt-loc64Len, 4); ok && le.Uint32(b) != loc64Sig {
			v.damaged("", endAt-loc64Len, "damaged: its zip64 end record's locator's signature is not what feedgen bundle writes")
			return true
		}
		b, ok := w.get(tailAt, end64Len)
		if !ok || le.Uint32(b) != end64Sig || le.Uint64(b[40:]) > uint64(tailAt) {
			return false
		}
		records, dirSize = int(min(le.Uint64(b[32:]), 1<<31)), int64(le.Uint64(b[40:]))
	}
	if dirSize > tailAt {
		return false
	}
	at, after := tailAt-dirSize, ""
	for k := 0; at < tailAt; k++ {
		rec, problem := record(w, at, tailAt)
		if problem != "" {
			b, ok := w.get(at, 8)
			switch {
			case ok && le.Uint16(b[4:]) == versionMadeBy && le.Uint16(b[6:]) == versionNeeded:
				// The record is where it should be: its signature changed.
				name := fmt.Sprintf("record %d of %d", k+1, records)
				if b, ok := w.get(at, centralLen); ok {
					if n, ok := w.get(at+centralLen, int(le.Uint16(b[28:]))); ok {
						name = string(n)
					}
				}
				v.damaged(name, at, "damaged: its central directory record's signature is not what feedgen bundle writes")
			case k == 0:
				v.damaged("", at, "damaged: its central directory does not start where its end record says")
			default:
				v.damaged(after, at, "damaged: its central directory record does not end where the next one starts (a length in it changed)")
			}
			return true
		}
		after = string(rec[centralLen : centralLen+int(le.Uint16(rec[28:]))])
		at += int64(len(rec))
		if k+1 != records && at == tailAt {
			what := "end record counts"
			if tailAt != endAt {
				what = "zip64 end record counts"
			}
			v.damaged("", tailAt, "damaged: its %s %d entries, its central directory holds %d", what, records, k+1)
			return true
		}
	}
	return false
}

// notWritten says that a field of an entry's headers is not what
// feedgen bundle writes: for its time, the build's (built), or, when
// that is not known, the one the other entries have.
func notWritten(field string, built *time.Time) string {
	switch {
	case field != "modification time" && field != "modification date" && field != "extra field":
		return isAre(field) + " not what feedgen bundle writes"
	case built == nil:
		return differs(field) + " from the other entries'"
	}
	return isAre(field) + " not the build's (" + built.UTC().Format(time.RFC3339) + ")"
}

// isAre and differs write a field's name and the verb that agrees with it.
func isAre(field string) string {
	if plural(field) {
		return field + " are"
	}
	return field + " is"
}

func differs(field string) string {
	if plural(field) {
		return field + " differ"
	}
	return field + " differs"
}

func plural(field string) bool {
	return strings.HasSuffix(field, "flags") || strings.HasSuffix(field, "attributes") || strings.HasSuffix(field, "entries") || strings.HasSuffix(field, "entries on this disk")
}

// endSignatureDamaged reports, when the archive ends with a seal, whether
// the signature of its end record before it is damaged (the zip package
// then finds no end).
func (v *verifier) endSignatureDamaged() bool {
	w := &window{r: v.r, size: v.size}
	at := v.size - int64(sealLen) - endLen
	tail, ok := w.get(at, endLen+sealLen)
	if !ok || !bytes.HasPrefix(tail[endLen:], []byte(sealPrefix)) || le.Uint32(tail) == endSig {
		return false
	}
	v.damaged("", at, "damaged: its end record's signature is not what feedgen bundle writes")
	return true
}
