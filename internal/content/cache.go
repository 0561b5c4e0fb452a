package content

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"github.com/cespare/xxhash/v2"
)

// A build keeps, beside its output, what its Load learnt of each article
// file (a Cache): the file's stamp (size, modification time, and where
// the system tells them its inode and change time), the digest of its
// bytes (size and xxhash, as Site.Digest takes them) and, for a published
// article, what the build needs of it once parsed and slimmed
// (Article.Slim), with bytes of the build's own (extra: where its JSON
// is). The next Load reads only the files whose stamp changed, and parses
// only those whose bytes changed: a million unchanged articles cost a
// stat each.
//
// A cache never changes what is loaded: a file is believed unchanged only
// when its stamp is the one recorded, and a stamp is recorded only when it
// was taken long enough before the load that any later change gives
// another one (see StampSlack); a record is taken only when its check
// holds, and records only in the order a walk finds the files; a cache of
// another version gives nothing, one of another key (the build's code,
// config: see CacheKey) only digests.
//
// The format, streamed in both directions: the line "feedgen sources 1",
// the key (32 bytes), the tag (uvarint length, bytes: the build's) and the
// CRC-32C of all that (4 bytes, little-endian); then a record per file, in
// the order walked, each its length (uvarint, never 0), its bytes and
// their CRC-32C; then a 0, the number of records (uvarint) and the CRC-32C
// of that number's bytes. A record: the bytes its name shares with the
// one before it and the rest (uvarint, uvarint, bytes); the stamp (8
// bytes: the xxhash of size, modification time, device, inode and change
// time, see stamp.hash; 0 when not to be believed); the digest (size
// uvarint, xxhash 8 bytes); then 0, or 1 and the article: id, line (uvarint), published (the
// wall clock's Unix seconds, varint), the instant's seconds after it
// (varint) and nanoseconds (uvarint), draft (a byte), tags (uvarint count,
// each uvarint length and bytes), author key and extra (uvarint length,
// bytes).

// cacheMagic starts every cache file of this format.
const cacheMagic = "feedgen sources 1\n"

// StampSlack is how long before a Load started a file's change time (its
// modification time where the system tells no change time) must be for
// its stamp to be recorded: a file changed again within one tick of the
// file system's clock (a few milliseconds; a second or two on some file
// systems) may keep the same stamp. A file changed later is recorded with
// an unknown stamp, and the next Load reads it (and parses it only if its
// bytes changed).
const StampSlack = 3 * time.Second

// maxRecord bounds the length of a record a cache is believed to hold.
const maxRecord = 1 << 20

// ErrCacheFormat is returned by ReadCache for a file that is not a cache
// of this version: a cache of another feedgen, or another file.
var ErrCacheFormat = errors.New("not a feedgen sources cache of this version")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// A Cache is the cache a build kept, read record by record as a Load
// walks the content (see Options.Cache): one Load consumes it.
type Cache struct {
	br  *bufio.Reader
	key [sha256.Size]byte
	tag []byte

	next     known // the record read ahead, whose name is nextName, if hasNext
	hasNext  bool
	started  bool // the first record was read
	nextName string
	// articles is set when the articles the records hold are wanted (a
	// load with Options.Kept): otherwise they are not decoded.
	articles bool
	last     []byte // the name of the last record read, for the next one's
	buf      []byte
	records  int
	done     bool   // read to its end, or stopped at damage
	damage   string // what stopped it before its end; "" when none
	// words holds one copy of each tag and author key read: a million
	// articles have a few thousand.
	words map[string]string
}

// known is what a cache records of one file.
type known struct {
	stamp uint64 // stamp.hash
	size  int64
	sum   uint64
	art   *keptArticle // nil: the digest alone
}

// keptArticle is what a cache records of a published article.
type keptArticle struct {
	id        int64
	line      int
	published int64 // Unix seconds of the wall clock, read as UTC
	instSec   int64 // the instant's Unix seconds, less published
	instNsec  int64
	draft     bool
	tags      []string
	author    string
	extra     []byte
}

// ReadCache reads the head of the cache in r: ErrCacheFormat when r holds
// no cache of this version, or a damaged head. The records are read as a
// Load needs them.
func ReadCache(r io.Reader) (*Cache, error) {
	br := bufio.NewReaderSize(r, 256<<10)
	head := make([]byte, len(cacheMagic)+sha256.Size)
	if _, err := io.ReadFull(br, head); err != nil || string(head[:len(cacheMagic)]) != cacheMagic {
		return nil, ErrCacheFormat
	}
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxRecord {
		return nil, ErrCacheFormat
	}
	tag := make([]byte, n)
	if _, err := io.ReadFull(br, tag); err != nil {
		return nil, ErrCacheFormat
	}
	var sum [4]byte
	if _, err := io.ReadFull(br, sum[:]); err != nil {
		return nil, ErrCacheFormat
	}
	crc := crc32.Update(crc32.Checksum(head, castagnoli), castagnoli, binary.AppendUvarint(nil, n))
	if crc32.Update(crc, castagnoli, tag) != binary.LittleEndian.Uint32(sum[:]) {
		return nil, ErrCacheFormat
	}
	c := &Cache{br: br, tag: tag}
	copy(c.key[:], head[len(cacheMagic):])
	return c, nil
}

// Key returns the key the cache was written with (see WriteCache).
func (c *Cache) Key() [sha256.Size]byte { return c.key }

// Tag returns the build's bytes the cache was written with.
func (c *Cache) Tag() []byte { return c.tag }

// Damage returns, once a Load read the cache, what made it stop before
// its end: "" when it read it whole. The files of the records from there
// on were read as though the cache had none.
func (c *Cache) Damage() string {
	if c == nil {
		return ""
	}
	return c.damage
}

// find returns the record of the file name, if the cache has one: names
// are asked for in the order walked, as the records are.
func (c *Cache) find(name string) (known, bool) {
	if !c.started {
		c.started = true
		c.advance()
	}
	for c.hasNext {
		switch d := walkCompare(c.nextName, name); {
		case d < 0:
			c.advance() // a file gone since
		case d == 0:
			k := c.next
			c.advance()
			return k, true
		default:
			return known{}, false // a new file
		}
	}
	return known{}, false
}

// advance reads the next record into next, or sets done.
func (c *Cache) advance() {
	c.next, c.hasNext, c.nextName = known{}, false, ""
	if c.done {
		return
	}
	ok, err := c.read()
	if err != nil {
		c.done, c.damage = true, err.Error()
		return
	}
	if !ok {
		c.done = true
		return
	}
	c.hasNext = true
}

// read reads the next record into next and nextName; false at the end.
func (c *Cache) read() (bool, error) {
	n, err := binary.ReadUvarint(c.br)
	if err != nil {
		return false, fmt.Errorf("cut short after %d records", c.records)
	}
	if n == 0 {
		count, err := binary.ReadUvarint(c.br)
		var sum [4]byte
		if err == nil {
			_, err = io.ReadFull(c.br, sum[:])
		}
		if err != nil || count != uint64(c.records) || crc32.Checksum(binary.AppendUvarint(nil, count), castagnoli) != binary.LittleEndian.Uint32(sum[:]) {
			return false, fmt.Errorf("its end does not match its %d records", c.records)
		}
		return false, nil
	}
	if n > maxRecord {
		return false, fmt.Errorf("record %d is damaged", c.records+1)
	}
	if cap(c.buf) < int(n)+4 {
		c.buf = make([]byte, int(n)+4, max(int(n)+4, 4096))
	}
	b := c.buf[:n+4]
	if _, err := io.ReadFull(c.br, b); err != nil {
		return false, fmt.Errorf("cut short after %d records", c.records)
	}
	if crc32.Checksum(b[:n], castagnoli) != binary.LittleEndian.Uint32(b[n:]) {
		return false, fmt.Errorf("record %d changed since a build wrote it", c.records+1)
	}
	if err := c.decode(b[:n]); err != nil || c.records > 0 && walkCompare(string(c.last), c.nextName) >= 0 {
		return false, fmt.Errorf("record %d is damaged", c.records+1)
	}
	c.last = append(c.last[:0], c.nextName...)
	c.records++
	return true, nil
}

// decode reads a record's bytes into next and nextName.
func (c *Cache) decode(b []byte) error {
	d := decoder{b: b}
	shared, rest := d.uvarint(), d.uvarint()
	if d.err != nil || shared > uint64(len(c.last)) || rest > uint64(len(d.b)) {
		return errDamaged
	}
	c.nextName = string(c.last[:shared]) + string(d.b[:rest])
	d.b = d.b[rest:]
	k := &c.next
	k.stamp = d.uint64()
	k.size = int64(d.uvarint())
	k.sum = d.uint64()
	if d.byte() == 1 && c.articles {
		a := &keptArticle{}
		a.id = int64(d.uvarint())
		a.line = int(d.uvarint())
		a.published = d.varint()
		a.instSec = d.varint()
		a.instNsec = int64(d.uvarint())
		a.draft = d.byte() == 1
		if n := d.uvarint(); n > 0 && n <= uint64(len(d.b)) {
			a.tags = make([]string, n)
			for i := range a.tags {
				a.tags[i] = c.word(d.bytes())
			}
		} else if n > 0 {
			return errDamaged
		}
		a.author = c.word(d.bytes())
		if extra := d.bytes(); len(extra) > 0 {
			a.extra = append([]byte(nil), extra...)
		}
		k.art = a
		if len(d.b) != 0 || a.instNsec >= 1e9 {
			return errDamaged
		}
	}
	if d.err != nil || k.size < 0 {
		return errDamaged
	}
	return nil
}

// word returns b as a string, one copy for every b of the same bytes.
func (c *Cache) word(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if w, ok := c.words[string(b)]; ok {
		return w
	}
	if c.words == nil {
		c.words = map[string]string{}
	}
	w := string(b)
	c.words[w] = w
	return w
}

var errDamaged = errors.New("damaged record")

// decoder reads the fields of a record; the first error sticks.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err, d.b = errDamaged, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) varint() int64 {
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err, d.b = errDamaged, nil
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *decoder) uint64() uint64 {
	if len(d.b) < 8 {
		d.err, d.b = errDamaged, nil
		return 0
	}
	v := binary.LittleEndian.Uint64(d.b)
	d.b = d.b[8:]
	return v
}

func (d *decoder) byte() byte {
	if len(d.b) < 1 {
		d.err = errDamaged
		return 0
	}
	v := d.b[0]
	d.b = d.b[1:]
	return v
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)) {
		d.err, d.b = errDamaged, nil
		return nil
	}
	v := d.b[:n]
	d.b = d.b[n:]
	return v
}

// walkCompare compares two paths in the order fs.WalkDir finds them:
// folder by folder, each level's names in lexical order.
func walkCompare(a, b string) int {
	for {
		ac, arest, amore := strings.Cut(a, "/")
		bc, brest, bmore := strings.Cut(b, "/")
		if d := strings.Compare(ac, bc); d != 0 {
			return d
		}
		switch {
		case !amore && !bmore:
			return 0
		case !amore:
			return -1
		case !bmore:
			return 1
		}
		a, b = arest, brest
	}
}

// article makes the Article that k records of the file of e.
func (k *keptArticle) article(l *Loader, e *entry) *Article {
	section, rest, _ := strings.Cut(e.name, "/")
	sectionSlug, file, _ := strings.Cut(rest, "/")
	slug := strings.TrimSuffix(file, ".md")
	categoryURL := l.cfg.SiteURL + "/" + section + "/" + sectionSlug + "/"
	return &Article{
		ID: k.id, URL: categoryURL + slug + "/", Tags: k.tags, AuthorKey: k.author,
		Published: time.Unix(k.published, 0).UTC(),
		Instant:   time.Unix(k.published+k.instSec, k.instNsec).In(l.cfg.Location),
		Section:   section, SectionSlug: sectionSlug, Slug: slug, Draft: k.draft,
		Path: e.display, Line: k.line, Index: e.index,
	}
}

// source is what a Site keeps of each file it was loaded from, for
// WriteCache: its name, stamp and digest, and its article when a cache
// may record it (with no warning of its own), left out of the build or
// not; or, for a Site that was not parsed (Unchanged), what the cache it
// was loaded with records of it, when that is still true.
type source struct {
	name    string
	stamp   uint64 // stamp.hash; 0 when changed too shortly before the load
	size    int64
	sum     uint64
	art     *Article
	leftOut bool
	kept    *keptArticle
}

// WriteCache writes to w the cache of the files s was loaded from (see
// Cache), with key and tag, in the order walked. extra returns the bytes
// the build keeps beside each published article, and whether it keeps it:
// an article it does not keep is recorded by its digest alone, as are
// files with warnings, which the next Load parses again; drafts and
// scheduled articles are recorded with no extra bytes, and parsed again
// when a build publishes them. A Site that was not parsed (Unchanged)
// records the articles of the cache it was loaded with whose files are
// as that cache says, when Options.Kept took that cache's articles: the
// caller gives its key and tag again, and no extra. A file changed too
// shortly before the load is recorded with an unknown stamp (see
// StampSlack).
func (s *Site) WriteCache(w io.Writer, key [sha256.Size]byte, tag []byte, extra func(*Article) ([]byte, bool)) error {
	bw := bufio.NewWriterSize(w, 256<<10)
	head := append([]byte(cacheMagic), key[:]...)
	head = binary.AppendUvarint(head, uint64(len(tag)))
	head = append(head, tag...)
	head = binary.LittleEndian.AppendUint32(head, crc32.Checksum(head, castagnoli))
	bw.Write(head)
	var last string
	var rec, frame []byte
	var k keptArticle
	for _, f := range s.sources {
		rec = rec[:0]
		shared := 0
		for shared < len(last) && shared < len(f.name) && last[shared] == f.name[shared] {
			shared++
		}
		rec = binary.AppendUvarint(rec, uint64(shared))
		rec = binary.AppendUvarint(rec, uint64(len(f.name)-shared))
		rec = append(rec, f.name[shared:]...)
		rec = binary.LittleEndian.AppendUint64(rec, f.stamp)
		rec = binary.AppendUvarint(rec, uint64(f.size))
		rec = binary.LittleEndian.AppendUint64(rec, f.sum)
		switch a := f.art; {
		case a != nil && f.leftOut:
			rec = appendKept(rec, keptOf(&k, a, nil))
		case a != nil && extra != nil:
			if x, ok := extra(a); ok {
				rec = appendKept(rec, keptOf(&k, a, x))
			} else {
				rec = append(rec, 0)
			}
		case a == nil && f.kept != nil:
			rec = appendKept(rec, f.kept) // as the cache read had it
		default:
			rec = append(rec, 0)
		}
		frame = binary.AppendUvarint(frame[:0], uint64(len(rec)))
		frame = append(frame, rec...)
		frame = binary.LittleEndian.AppendUint32(frame, crc32.Checksum(rec, castagnoli))
		if _, err := bw.Write(frame); err != nil {
			return err
		}
		last = f.name
	}
	end := binary.AppendUvarint(nil, uint64(len(s.sources)))
	bw.WriteByte(0)
	bw.Write(end)
	bw.Write(binary.LittleEndian.AppendUint32(nil, crc32.Checksum(end, castagnoli)))
	return bw.Flush()
}

// keptOf fills k with what a cache records of a, with the bytes x of the
// build, and returns it.
func keptOf(k *keptArticle, a *Article, x []byte) *keptArticle {
	pub := a.Published.Unix()
	*k = keptArticle{id: a.ID, line: a.Line, published: pub, instSec: a.Instant.Unix() - pub, instNsec: int64(a.Instant.Nanosecond()),
		draft: a.Draft, tags: a.Tags, author: a.AuthorKey, extra: x}
	return k
}

// appendKept appends the article k to the record rec.
func appendKept(rec []byte, k *keptArticle) []byte {
	rec = append(rec, 1)
	rec = binary.AppendUvarint(rec, uint64(k.id))
	rec = binary.AppendUvarint(rec, uint64(k.line))
	rec = binary.AppendVarint(rec, k.published)
	rec = binary.AppendVarint(rec, k.instSec)
	rec = binary.AppendUvarint(rec, uint64(k.instNsec))
	draft := byte(0)
	if k.draft {
		draft = 1
	}
	rec = append(rec, draft)
	rec = binary.AppendUvarint(rec, uint64(len(k.tags)))
	for _, t := range k.tags {
		rec = appendField(rec, t)
	}
	rec = appendField(rec, k.author)
	rec = binary.AppendUvarint(rec, uint64(len(k.extra)))
	return append(rec, k.extra...)
}

func appendField(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// hash returns what a cache records of st: 0 for an unknown stamp
// (modification time 0), or one changed at racyFrom (Unix nanoseconds)
// or later, too shortly before the load for a later change to give
// another stamp (see StampSlack); else the xxhash of its fields, never 0.
func (st stamp) hash(racyFrom int64) uint64 {
	dev, ino, ctime := st.id.parts()
	changed := ctime
	if changed == 0 {
		changed = st.mod
	}
	if st.mod == 0 || changed >= racyFrom {
		return 0
	}
	var b [40]byte
	binary.LittleEndian.PutUint64(b[0:], uint64(st.size))
	binary.LittleEndian.PutUint64(b[8:], uint64(st.mod))
	binary.LittleEndian.PutUint64(b[16:], dev)
	binary.LittleEndian.PutUint64(b[24:], ino)
	binary.LittleEndian.PutUint64(b[32:], uint64(ctime))
	return max(xxhash.Sum64(b[:]), 1)
}

// CacheKey returns the key of a cache (see WriteCache) for the given
// inputs: what a build's parse and encoding of an article depend on
// besides the file (its code, its config, the time zone's rules).
func CacheKey(parts ...[]byte) [sha256.Size]byte {
	h := sha256.New()
	h.Write([]byte("feedgen sources key 1\n"))
	for _, p := range parts {
		h.Write(binary.AppendUvarint(nil, uint64(len(p))))
		h.Write(p)
	}
	var k [sha256.Size]byte
	h.Sum(k[:0])
	return k
}
