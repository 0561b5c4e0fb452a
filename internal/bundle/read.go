package bundle

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/diag"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
	"github.com/feedgen/feedgen/internal/pool"
)

// Limits on what a bundle's own files may be, so that a damaged or
// hostile archive cannot make Read allocate without bound.
const (
	maxInfoSize   = 1 << 20
	maxConfigSize = 64 << 20
	// A manifest takes about 200 bytes a page: it may take 1 MiB and 1 KiB
	// for each entry of the archive.
	manifestBase     = 1 << 20
	manifestPerEntry = 1 << 10
	// maxRatio bounds how many times its compressed size an entry may
	// decompress to: JSON pages deflate about 5 to 20 times; a run of one
	// byte, a thousand.
	maxRatio = 200
	// ratioFloor is the size below which the ratio is not checked.
	ratioFloor = 64 << 10
)

// Bundle is an archive that passed verification: its build can be served
// from FS.
type Bundle struct {
	Info         Info
	Manifest     *manifest.Manifest
	ManifestData []byte // manifest.json, byte for byte
	Config       []byte // config.yaml
	Size         int64  // bytes of the archive

	zr     *zip.Reader
	closer io.Closer
}

// FS returns the archive as a file system: the output folder it was made
// of (manifest.json and the pages), plus bundle.json and config.yaml.
// Files are decompressed as they are read; it is safe for concurrent use.
func (b *Bundle) FS() fs.FS { return b.zr }

// Close closes the archive file of a Bundle from Open; for one from Read
// it does nothing.
func (b *Bundle) Close() error {
	if b.closer == nil {
		return nil
	}
	return b.closer.Close()
}

// A KeepFunc receives each page of a bundle as verification reads it:
// its path, its bytes, and their SHA-256, which the manifest gives and the
// bytes were checked against. It is called once for every page that
// passed the check, as soon as it did, from several goroutines at once;
// data is only valid during the call (copy it to keep it). Verifying
// decompresses and hashes every page: a KeepFunc saves whoever serves
// the bundle doing it again.
//
// The bundle as a whole may yet fail verification after pages were
// handed over: when OpenWith or ReadWith returns an error, drop them.
type KeepFunc func(path string, data []byte, sum [sha256.Size]byte)

// Open opens the bundle in the file name and verifies it (see Read).
// Problems with the archive come back as *Problems; other errors (the file
// cannot be read) as themselves.
func Open(ctx context.Context, name string) (*Bundle, error) {
	return OpenWith(ctx, name, nil)
}

// OpenWith is Open, handing every verified page to keep (see KeepFunc);
// a nil keep is Open.
func OpenWith(ctx context.Context, name string, keep KeepFunc) (*Bundle, error) {
	f, err := outfile.Open(name) // a named pipe opens at once, and is refused
	if nr := (*outfile.NotRegularError)(nil); errors.As(err, &nr) {
		return nil, fmt.Errorf("opening bundle: %s is not a regular file (%s): a bundle is the .zip file that feedgen bundle writes", name, outfile.Kind(nr.Mode))
	}
	if err != nil {
		return nil, fmt.Errorf("opening bundle: %w", err)
	}
	info, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("opening bundle: %w", err)
	}
	b, err := ReadWith(ctx, f, info.Size(), keep)
	if err != nil {
		f.Close()
		return nil, err
	}
	b.closer = f
	return b, nil
}

// Read verifies the archive in r, size bytes long, and returns it opened.
// It checks the archive's every byte: its structure as Write writes it
// (see zipfmt.go: every header written again from the entries and
// compared, nothing between or after them, the seal), each entry's data
// against its CRC-32, its own files (manifest.json and bundle.json of
// known formats that agree, config.yaml), and every page against the
// manifest: none missing, none extra, each decompressing to the size and
// SHA-256 the manifest gives. Everything found wrong comes back at once,
// as *Problems (a read error of r is one too); the only other error is
// the context's. It never panics, whatever r holds.
func Read(ctx context.Context, r io.ReaderAt, size int64) (*Bundle, error) {
	return ReadWith(ctx, r, size, nil)
}

// ReadWith is Read, handing every verified page to keep (see KeepFunc);
// a nil keep is Read.
func ReadWith(ctx context.Context, r io.ReaderAt, size int64, keep KeepFunc) (*Bundle, error) {
	v := &verifier{r: r, size: size, keep: keep}
	b, err := v.run(ctx)
	if err != nil {
		return nil, err
	}
	if len(v.damage) > 0 || len(v.problems) > 0 || v.sealBroken {
		var zr *zip.Reader
		if b != nil {
			zr = b.zr
		}
		return nil, v.result(zr)
	}
	return b, nil
}

// verifier holds the state of one Read.
type verifier struct {
	r        io.ReaderAt
	size     int64
	keep     KeepFunc // nil: the pages are checked, then dropped
	mu       sync.Mutex
	problems diag.List
	damage   []damage
	lay      archiveLayout
	// index is the place of each entry in the zip.Reader's File; sums
	// are the SHA-256 of each one's compressed data, when summed, read
	// once with its data (see openEntry and checkSeal).
	index  map[*zip.File]int
	sums   [][sha256.Size]byte
	summed []bool
	// sealBroken is set when the archive's bytes differ from its seal.
	sealBroken bool
	// dec is the decompressor of the bundle's own files (readOwn).
	dec io.ReadCloser
	// shifted is set when the end record gives the central directory
	// another offset than where it is (see checkBytes).
	shifted bool
	// prefix is how many bytes came before the first entry, when that
	// is why (shifted): every other damage follows from them.
	prefix int64
}

// damage is a place where the archive's bytes are not those Write wrote.
type damage struct {
	entry string // "": the archive's own records
	at    int64  // where, to order them; -1: the entry's data
	msg   string
}

// damaged reports damage of entry (or of the archive, "") at byte at
// (-1: in the entry's data).
func (v *verifier) damaged(entry string, at int64, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.damage = append(v.damage, damage{entry, at, fmt.Sprintf(format, args...)})
}

// result returns what was found wrong: the damage, in the order of the
// archive, once per entry, then the other problems.
func (v *verifier) result(zr *zip.Reader) *Problems {
	if v.sealBroken && len(v.damage) == 0 {
		v.damaged("", -1, sealMessage)
	}
	var where map[string]int64
	if zr != nil && v.lay.offsets != nil {
		where = make(map[string]int64, len(zr.File))
		for i, f := range zr.File {
			where[f.Name] = v.lay.offsets[i]
		}
	}
	at := func(d damage) int64 {
		switch {
		case d.at >= 0:
			return d.at
		case d.entry == "":
			return v.size
		}
		if o, ok := where[d.entry]; ok {
			return o + 1 // after a problem of its headers
		}
		return v.size
	}
	slices.SortStableFunc(v.damage, func(a, b damage) int { return compare(at(a), at(b)) })
	ps := &Problems{Other: v.problems}
	if v.shifted {
		// The entries' data was read from other places: what was found
		// wrong there follows from the end record.
		v.damage = slices.DeleteFunc(v.damage, func(d damage) bool {
			if d.at < 0 && d.entry != "" {
				ps.Other.Add(d.entry, 0, d.msg)
				return true
			}
			return false
		})
	}
	if v.prefix > 0 {
		// One cause: the rest is counted, not listed.
		ps.Damage.Add("", 0, fmt.Sprintf("damaged: %s before its first entry, where feedgen bundle writes none (the entries are where its central directory says, that far on): the bundle is what follows them (tail -c +%d FILE)", human.Plural(int(v.prefix), "byte"), v.prefix+1))
		for _, d := range v.damage {
			ps.Other.Add(d.entry, 0, d.msg)
		}
		ps.Other.Sort()
		return ps
	}
	seen := map[string]bool{}
	for _, d := range v.damage {
		if d.entry != "" && seen[d.entry] {
			continue
		}
		seen[d.entry] = true
		name := d.entry
		if name != "" {
			name = quoteName(name)
		}
		ps.Damage.Add(name, 0, d.msg)
	}
	ps.Other.Sort()
	return ps
}

// Problems is the error of Read: what is wrong with an archive.
type Problems struct {
	// Damage is where the archive's bytes are not those feedgen bundle
	// wrote, in the order of the archive: one problem an entry (its
	// first), and the archive's own records.
	Damage diag.List
	// Other is every other problem found, sorted by entry: when there
	// is damage, what follows from it.
	Other diag.List
}

// maxDamage is how many damaged places Report lists.
const maxDamage = 10

// Report returns the problems to show, one a line: without damage,
// every one; with damage, the damage (at most maxDamage places), then a
// line that counts the other problems, which follow from it.
func (p *Problems) Report() diag.List {
	if len(p.Damage) == 0 {
		return p.Other
	}
	var out diag.List
	out = append(out, p.Damage[:min(len(p.Damage), maxDamage)]...)
	if n := len(p.Damage) - maxDamage; n > 0 {
		out.Add("", 0, fmt.Sprintf("and %d more damaged places", n))
	}
	if n := len(p.Other); n > 0 {
		it := "it"
		if len(p.Damage) > 1 {
			it = "them"
		}
		out.Add("", 0, fmt.Sprintf("and %s caused by %s, not listed", human.Plural(n, "more problem"), it))
	}
	return out
}

func (p *Problems) Error() string { return p.Report().Error() }

func (v *verifier) add(entry, format string, args ...any) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.problems.Add(entry, 0, fmt.Sprintf(format, args...))
}

// run verifies the archive: its entries, its own files, its bytes, then
// every page against the manifest, and its seal.
func (v *verifier) run(ctx context.Context) (*Bundle, error) {
	zr := v.open()
	if zr == nil {
		return nil, nil
	}
	v.index = make(map[*zip.File]int, len(zr.File))
	for i, f := range zr.File {
		v.index[f] = i
	}
	v.sums, v.summed = make([][sha256.Size]byte, len(zr.File)), make([]bool, len(zr.File))
	es := v.checkEntries(zr)

	b := &Bundle{Size: v.size, zr: zr}
	m := v.readOwnFiles(zr, es, b)
	var built *time.Time
	if m != nil {
		built = &m.BuildTime
	}
	v.lay = v.checkBytes(ctx, zr, built)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if m == nil {
		return b, v.checkSeal(ctx, zr) // no page can be checked without a manifest
	}
	todo := v.checkListed(m, es)
	// Each index must fit its chunks, as serving relies on: checked as
	// each chunk is read (checkPages).
	ix, ps := manifest.ReadIndexes(m, func(f manifest.File) ([]byte, error) {
		zf := es.files[f.Path]
		if zf == nil || zf.UncompressedSize64 != uint64(f.Size) {
			return nil, manifest.ErrReported // missing or corrupted: said with the pages above
		}
		data, err := manifest.ReadPage(readable{zr}, f, nil)
		if mm := (*manifest.Mismatch)(nil); errors.As(err, &mm) {
			// Its bytes differ from the manifest's (a leaf's, from its
			// root's): said as the page's, not as its root's.
			return nil, manifest.ErrReported
		}
		return data, err
	})
	v.mu.Lock()
	v.problems = append(v.problems, ps...)
	v.mu.Unlock()
	if err := v.checkPages(ctx, todo, ix); err != nil {
		return nil, err
	}
	return b, v.checkSeal(ctx, zr)
}

// readOwnFiles reads the bundle's own files into b (manifest.json,
// bundle.json, config.yaml) and returns its manifest, with the files its
// files name (manifest.Expand: the chunks its indexes name); nil when it
// has none that can be read (the problem is reported).
func (v *verifier) readOwnFiles(zr *zip.Reader, es entrySet, b *Bundle) *manifest.Manifest {
	var m *manifest.Manifest
	if f := es.files[ManifestName]; f != nil {
		if b.ManifestData = v.readOwn(f, manifestBase+manifestPerEntry*int64(len(zr.File))); b.ManifestData != nil {
			m = v.parseManifest(b.ManifestData)
			b.Manifest = m
		}
		if m != nil {
			// An index that cannot be read names none (it is damaged,
			// and said so by checkPages), unless it is of another format.
			unmatched, err := m.Expand(readable{zr})
			if err != nil {
				v.add(ManifestName, "corrupted: %v", err)
			} else if v.otherIndexFormat(zr, m, es, unmatched) {
				m, b.Manifest = nil, nil // none of its pages can be checked
			}
		}
	} else if !es.bad[ManifestName] {
		v.add(ManifestName, "missing: a bundle holds the manifest of its build")
	}
	if f := es.files[InfoName]; f != nil {
		if data := v.readOwn(f, maxInfoSize); data != nil {
			v.parseInfo(data, m, &b.Info)
		}
	} else if !es.bad[InfoName] {
		v.add(InfoName, "missing: a bundle holds a description of its build")
	}
	if f := es.files[ConfigName]; f != nil {
		b.Config = v.readOwn(f, maxConfigSize)
	} else if !es.bad[ConfigName] {
		v.add(ConfigName, "missing: a bundle holds the config.yaml its output was built with")
	}
	return m
}

// otherIndexFormat reports, and says, whether an index of m that names
// no file (unmatched: see manifest.Expand) is one of another format, its
// bytes those the manifest gives: the bundle of an older feedgen's build
// (indexes of format 2 and before were flat), which this one does not
// read.
func (v *verifier) otherIndexFormat(zr *zip.Reader, m *manifest.Manifest, es entrySet, unmatched []string) bool {
	for _, p := range unmatched {
		i, found := slices.BinarySearchFunc(m.Files, p, func(f manifest.File, p string) int { return strings.Compare(f.Path, p) })
		zf := es.files[p]
		if !found || layout.Classify(p) != layout.Index || zf == nil || zf.UncompressedSize64 != uint64(m.Files[i].Size) {
			continue
		}
		data, err := manifest.ReadPage(readable{zr}, m.Files[i], nil)
		if err != nil {
			continue // damaged: said with the pages
		}
		var fe *chunk.FormatError
		if _, err := chunk.ParseRoot(data); errors.As(err, &fe) {
			v.add(p, "chunk index format %s is not supported (this feedgen reads format %d): open the bundle with the feedgen that wrote it, or rebuild its output (feedgen build) and bundle it again", fe.Format, chunk.IndexFormat)
			return true
		}
	}
	return false
}

// checkListed compares the entries es with the files m lists: each one
// missing, of another size, or extra (a file or a folder) is a problem.
// It returns the pages to check (checkPages).
func (v *verifier) checkListed(m *manifest.Manifest, es entrySet) []pageCheck {
	var todo []pageCheck
	listed := make(map[string]bool, len(m.Files))
	dirs := map[string]bool{}
	for _, p := range m.Files {
		listed[p.Path] = true
		for d := p.Path; ; {
			i := strings.LastIndexByte(d, '/')
			if i < 0 {
				break
			}
			d = d[:i]
			dirs[d+"/"] = true
		}
		switch f := es.files[p.Path]; {
		case f == nil && es.bad[p.Path]:
			// reported already
		case f == nil:
			v.add(p.Path, "missing: the manifest lists it")
		case f.UncompressedSize64 != uint64(p.Size):
			v.add(p.Path, "corrupted: %d bytes, the manifest says %d", f.UncompressedSize64, p.Size)
		default:
			todo = append(todo, pageCheck{f: f, file: p})
		}
	}
	for name := range es.files {
		if !listed[name] && !reserved(name) {
			v.add(name, "extra: the manifest does not list it")
		}
	}
	for _, name := range es.dirs {
		if !dirs[name] {
			v.add(name, "extra: a folder that holds no page of the manifest")
		}
	}
	return todo
}

// open reads the archive's central directory. A nil reader means the
// archive cannot be read at all, and the problem says why: an archive
// that cannot be read, whatever the cause, is a problem with the archive.
func (v *verifier) open() *zip.Reader {
	if v.size == 0 {
		v.add("", "not a zip archive: the file is empty")
		return nil
	}
	zr, err := zip.NewReader(v.r, v.size)
	if err == nil || errors.Is(err, zip.ErrInsecurePath) {
		return zr // names are checked one by one below
	}
	var head [4]byte
	n, _ := v.r.ReadAt(head[:], 0)
	isZip := n == len(head) && string(head[:]) == "PK\x03\x04"
	switch end := v.directoryEnd(); {
	case v.endSignatureDamaged():
	case isZip && end != endComplete:
		v.add("", "truncated: the archive stops before its end (its central directory is missing); the file was cut short, copy it again")
	case isZip && v.locateDirectoryDamage():
	case isZip:
		v.add("", "damaged: the archive's central directory cannot be read (%v)", err)
	case end == endMissing:
		v.add("", "not a zip archive")
	default:
		v.add("", "damaged: not a readable zip archive (%v)", err)
	}
	return nil
}

// What the end of an archive holds.
const (
	endMissing  = iota // no end of central directory record
	endCut             // one that the end of the file cuts short
	endComplete        // a whole one
)

// directoryEnd looks for the end of central directory record of a zip in
// the last 64 KiB of the archive (it is 22 bytes, then a comment of up to
// 64 KiB).
func (v *verifier) directoryEnd() int {
	const recordLen = 22
	n := min(v.size, 65535+recordLen)
	buf := make([]byte, n)
	if k, _ := v.r.ReadAt(buf, v.size-n); int64(k) != n {
		return endMissing
	}
	i := bytes.LastIndex(buf, []byte("PK\x05\x06"))
	switch {
	case i < 0:
		return endMissing
	case i+recordLen > len(buf) || i+recordLen+int(binary.LittleEndian.Uint16(buf[i+20:])) > len(buf):
		return endCut
	}
	return endComplete
}

// entrySet is the entries of an archive by kind.
type entrySet struct {
	files map[string]*zip.File // the regular files
	dirs  []string             // folder entries ("articles/"), as zip -r writes them
	bad   map[string]bool      // names already reported: found twice, or not usable
}

// checkEntries checks every entry's name and kind.
func (v *verifier) checkEntries(zr *zip.Reader) entrySet {
	es := entrySet{files: make(map[string]*zip.File, len(zr.File)), bad: map[string]bool{}}
	count := map[string]int{}
	for _, f := range zr.File {
		count[f.Name]++
	}
	for _, f := range zr.File {
		if es.bad[f.Name] {
			continue
		}
		if n := count[f.Name]; n > 1 {
			v.add(quoteName(f.Name), "found %d times: a name may appear only once", n)
			es.bad[f.Name] = true
			continue
		}
		if msg := manifest.CheckPath(f.Name); msg != "" {
			v.add(quoteName(f.Name), "%s", msg)
			es.bad[f.Name] = true
			continue
		}
		mode := f.Mode()
		switch {
		case f.UncompressedSize64 > ratioFloor && f.UncompressedSize64/max(f.CompressedSize64, 1) > maxRatio:
			v.add(f.Name, "refused: %d bytes compressed to %d, more than %d times (no feedgen bundle does that; an archive made to exhaust memory does)", f.UncompressedSize64, f.CompressedSize64, maxRatio)
		case f.UncompressedSize64 > manifest.MaxPageSize && f.Name != ManifestName:
			v.add(f.Name, "refused: %d bytes, more than any file of a feedgen bundle (%d)", f.UncompressedSize64, manifest.MaxPageSize)
		case f.Flags&0x1 != 0:
			v.add(f.Name, "encrypted: a bundle is never encrypted")
		case f.Method != zip.Deflate && f.Method != zip.Store:
			v.add(f.Name, "compressed with method %d: a bundle uses deflate (8) or store (0)", f.Method)
		case strings.HasSuffix(f.Name, "/"):
			if f.UncompressedSize64 != 0 {
				v.add(f.Name, "a folder entry with data")
				break
			}
			es.dirs = append(es.dirs, f.Name)
			continue
		case mode&fs.ModeType != 0:
			v.add(f.Name, "not a regular file (%s)", mode.Type())
		default:
			es.files[f.Name] = f
			continue
		}
		es.bad[f.Name] = true
	}
	return es
}

// quoteName quotes a name that would not read well as it is in a message.
func quoteName(name string) string {
	if manifest.CheckPath(name) == "" && !strings.ContainsAny(name, " :\"") {
		return name
	}
	return strconv.Quote(name)
}

func compare(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// readOwn reads one of the bundle's own files, of at most limit bytes; nil
// when it cannot be read (the problem is reported).
func (v *verifier) readOwn(f *zip.File, limit int64) []byte {
	if f.UncompressedSize64 > uint64(limit) {
		v.add(f.Name, "too large: %d bytes, more than %d", f.UncompressedSize64, limit)
		return nil
	}
	rc, err := v.openEntry(f, &v.dec)
	if err != nil {
		v.damaged(f.Name, -1, "corrupted: it cannot be opened (%v)", err)
		return nil
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, int64(f.UncompressedSize64)+1))
	switch {
	case err != nil:
		v.damaged(f.Name, -1, "corrupted: %s", readError(err))
		return nil
	case uint64(len(data)) > f.UncompressedSize64:
		v.damaged(f.Name, -1, "corrupted: longer than the %d bytes the archive says", f.UncompressedSize64)
		return nil
	case uint64(len(data)) < f.UncompressedSize64:
		v.damaged(f.Name, -1, "corrupted: %d bytes, the archive says %d", len(data), f.UncompressedSize64)
		return nil
	}
	if data == nil {
		data = []byte{}
	}
	return data
}

// readError says why an entry could not be read.
func readError(err error) string {
	switch {
	case errors.Is(err, zip.ErrChecksum):
		return "its CRC-32 differs from the archive's"
	case errors.Is(err, io.ErrUnexpectedEOF):
		return "its data ends early"
	case errors.Is(err, errLonger):
		return "it decompresses to more bytes than the archive says"
	}
	return fmt.Sprintf("it cannot be decompressed (%v)", err)
}

// parseManifest reads manifest.json; nil when it is not a manifest this
// feedgen reads (the problem is reported).
func (v *verifier) parseManifest(data []byte) *manifest.Manifest {
	var head struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		v.add(ManifestName, "not a manifest: %v", err)
		return nil
	}
	if string(head.Format) != strconv.Itoa(manifest.Format) {
		v.add(ManifestName, "manifest format %s is not supported (this feedgen reads format %d): open the bundle with the feedgen that wrote it", formatVersion(head.Format), manifest.Format)
		return nil
	}
	m, err := manifest.Parse(data)
	if err != nil {
		v.add(ManifestName, "not a manifest: %v", errors.Unwrap(err))
		return nil
	}
	if ps := m.Validate(); len(ps) > 0 { // a page named as one of the bundle's own files too: see reserved
		v.mu.Lock()
		v.problems = append(v.problems, ps...)
		v.mu.Unlock()
		return nil
	}
	return m
}

// formatVersion writes a format field as it was found.
func formatVersion(raw json.RawMessage) string {
	if len(raw) == 0 {
		return "(none)"
	}
	if len(raw) > 20 {
		return string(raw[:20]) + "…"
	}
	return string(raw)
}

// parseInfo reads bundle.json into info and checks it against the
// manifest m, when there is one.
func (v *verifier) parseInfo(data []byte, m *manifest.Manifest, info *Info) {
	var head struct {
		Format json.RawMessage `json:"format"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		v.add(InfoName, "not a bundle description: %v", err)
		return
	}
	if string(head.Format) != strconv.Itoa(Format) {
		v.add(InfoName, "bundle format %s is not supported (this feedgen reads format %d): open the bundle with the feedgen that wrote it", formatVersion(head.Format), Format)
		return
	}
	if err := json.Unmarshal(data, info); err != nil {
		v.add(InfoName, "not a bundle description: %v", err)
		return
	}
	if m == nil {
		return
	}
	var total int64
	for _, f := range m.Files {
		total += f.Size
	}
	for _, c := range []struct{ what, got, want string }{
		{"build time", info.BuildTime.UTC().Format(time.RFC3339), m.BuildTime.UTC().Format(time.RFC3339)},
		{"articles", strconv.Itoa(info.Articles), strconv.Itoa(m.Articles)},
		{"pages", strconv.Itoa(info.Pages), strconv.Itoa(len(m.Files))},
		{"bytes", strconv.FormatInt(info.Bytes, 10), strconv.FormatInt(total, 10)},
		{"generator", strconv.Quote(info.Generator), strconv.Quote(m.Generator)},
	} {
		if c.got != c.want {
			v.add(InfoName, "says %s %s, the manifest %s", c.what, c.got, c.want)
		}
	}
}

// pageCheck is a page entry to decompress and compare with the manifest.
type pageCheck struct {
	f    *zip.File
	file manifest.File
}

// checkPages decompresses every page on several cores and compares it
// with its size and SHA-256 in the manifest; a page that matches goes to
// v.keep, when set.
func (v *verifier) checkPages(ctx context.Context, todo []pageCheck, ix *manifest.Indexes) error {
	return pool.Run(ctx, len(todo), runtime.GOMAXPROCS(0), func() func(context.Context, int) error {
		var (
			buf []byte
			dec io.ReadCloser
		)
		return func(_ context.Context, i int) error {
			c := todo[i]
			rc, err := v.openEntry(c.f, &dec)
			if err != nil {
				v.damaged(c.file.Path, -1, "corrupted: it cannot be opened (%v)", err)
				return nil
			}
			data, err := manifest.ReadChecked(rc, c.file, buf)
			rc.Close()
			if err == nil {
				err = ix.Fits(c.file.Path, data)
			}
			var mm *manifest.Mismatch
			switch {
			case errors.As(err, &mm) && mm.Path != c.file.Path:
				v.add(mm.Path, "corrupted: %s", mm.Reason) // an index
			case errors.As(err, &mm):
				v.add(c.file.Path, "corrupted: %s", mm.Reason)
			case err != nil:
				v.damaged(c.file.Path, -1, "corrupted: %s", readError(errors.Unwrap(err)))
			default:
				if v.keep != nil {
					v.keep(c.file.Path, data, c.file.Sum())
				}
				buf = data[:0]
			}
			return nil
		}
	})
}
