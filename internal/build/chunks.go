package build

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/pool"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/feed"
	"github.com/feedgen/feedgen/internal/human"
	"github.com/feedgen/feedgen/internal/manifest"
	"github.com/feedgen/feedgen/internal/outfile"
)

// The chunks layout (pagination.layout: chunks): a build writes, per
// collection, its articles cut into chunks (feed.Listing.Chunks) named by
// the SHA-256 of their bytes, then the collection's index (leaves named
// by their SHA-256 too, then its root: chunk.Sizes.Tree), then the
// manifest. Chunks with the same input (the same articles) are one file,
// whichever collections they are cut from.
//
// A chunk's path is known only once its bytes are, so the marker of an
// unfinished build (see outdir.Mark) cannot list the chunks a build
// will create before it creates them: it lists the chunks' folder
// (chunk.Dir) instead, which says that any file there named as a chunk
// may be this build's (see scanOwned). The folder is feedgen's: its files
// are named by their digests. So each chunk is rendered, named and
// written in one go.

// inputsName is the file, in the output folder, that says which chunk
// each chunk input (feed.ChunkInput) is: "input path size check" a line.
// The manifest does not list chunks (manifest.Marshal), so a build in a
// new process learns there which chunks it may keep without rendering
// them. It is a cache, never published nor bundled: each line a build
// wrote is true of any build (an input makes the same bytes, and a
// chunk's name is their digest), and a chunk is kept only when its file
// is there with its size. A cache must never change what is built: a
// line's check (lineCheck) holds the rest of it, so that a line changed
// since a build wrote it (by hand, or a bad disk) is not believed, and
// its chunk is rendered.
const inputsName = ".feedgen-chunk-inputs"

// lineCheck returns the check of a line of inputsName: the first 8
// bytes, in hex, of the SHA-256 of its input, path and size.
func lineCheck(input, path, size string) string {
	sum := sha256.Sum256([]byte("feedgen chunk input 2\n" + input + " " + path + " " + size))
	return hex.EncodeToString(sum[:8])
}

// chunkJob is one chunk file of the build.
type chunkJob struct {
	ch   feed.Chunk
	in   [sha256.Size]byte
	file manifest.File
	kept bool // as the last build wrote it, by its input: not rendered
}

// chunkPlan is the chunk files of a build, and which each collection's
// chunks are: of[i][k] is the job of chunk k of collection i.
type chunkPlan struct {
	jobs []*chunkJob
	of   [][]*chunkJob
}

// planChunks cuts every collection into chunks, finds those the last
// build wrote (prev, its manifest) by their input, and returns the paths
// of the build's files: the chunks kept, chunk.Dir when there are chunks
// to write (their names are not known yet), and the indexes.
func (w *pageWriter) planChunks(ctx context.Context, prev *manifest.Manifest) ([]string, error) {
	w.plan(prev)
	cuts, inputs := w.l.ChunkInputs()
	p := &chunkPlan{of: make([][]*chunkJob, len(cuts))}
	byInput := map[[sha256.Size]byte]*chunkJob{}
	for i, cs := range cuts {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		for k, ch := range cs {
			in := inputs[i][k]
			j := byInput[in]
			if j == nil {
				j = &chunkJob{ch: ch, in: in}
				byInput[in] = j
				p.jobs = append(p.jobs, j)
			}
			p.of[i] = append(p.of[i], j)
		}
	}
	// The chunks the last build wrote, by input: kept unrendered when the
	// folder still has them. In memory (the preview), the server holds
	// the chunks of this Builder's last build.
	old := map[string]manifest.File{}
	b := w.b
	if prev != nil && w.out.intact() && (b.opt.OnPage == nil || b.last != nil) {
		for _, f := range prev.Files {
			if f.Input != "" && layout.Classify(f.Path) == layout.Chunk {
				old[f.Input] = f
			}
		}
		if len(old) == 0 && w.out.fsDir() != "" {
			name := filepath.Join(w.out.fsDir(), inputsName)
			if bad := readInputs(name, old); bad > 0 {
				fmt.Fprintf(b.opt.Log, "warning: %s: %s changed since a build wrote it (by hand, or on a bad disk): not believed, their chunks are rendered again\n", filepath.Join(w.out.dir(), inputsName), human.Plural(bad, "line"))
			}
		}
	}
	paths := make([]string, 0, len(p.jobs)+len(w.l.Collections)+1)
	toWrite := false
	for i, j := range p.jobs {
		if i%outfile.CheckEvery == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		in := hex.EncodeToString(j.in[:])
		if f, ok := old[in]; ok && w.out.has(f) {
			j.file, j.kept = f, true
			paths = append(paths, f.Path)
			continue
		}
		j.file.Input = in
		toWrite = true
	}
	if toWrite || len(w.l.Collections) > 0 {
		// Chunks to write, or leaves: their names are not known yet.
		paths = append(paths, chunk.Dir)
	}
	for _, c := range w.l.Collections {
		paths = append(paths, chunk.IndexPath(c.Dir))
	}
	w.chunks = p
	return paths, nil
}

// releaser says which articles of the main listing the chunks named so
// far no longer need (feed.Listing.Release), so that a build that keeps
// its articles in a file (feed.Spill) reads the main listing's chunks,
// which come first and in order, from the merge's memory, as pages are.
type releaser struct {
	l        *feed.Listing
	jobs     []*chunkJob
	at       map[*chunkJob]int
	mu       sync.Mutex
	finished []bool
	low      int
}

func newReleaser(l *feed.Listing, jobs []*chunkJob) *releaser {
	r := &releaser{l: l, jobs: jobs, at: make(map[*chunkJob]int, len(jobs)), finished: make([]bool, len(jobs))}
	for i, j := range jobs {
		r.at[j] = i
	}
	return r
}

// done says that job j was rendered.
func (r *releaser) done(j *chunkJob) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.finished[r.at[j]] = true
	low := r.low
	for r.low < len(r.jobs) && r.finished[r.low] {
		r.low++
	}
	switch {
	case r.low == low:
	case r.low < len(r.jobs) && r.jobs[r.low].ch.Coll == r.l.Main():
		r.l.Release(feed.Page{Coll: r.l.Main(), Offset: r.jobs[r.low].ch.Lo})
	default:
		r.l.ReleaseAll() // the main listing is done: the others read the file
	}
}

// writeChunks renders, names and writes the chunks that are not there
// yet, then each collection's index (its leaves, then its root), and
// counts them in the Result.
func (w *pageWriter) writeChunks(ctx context.Context) error {
	p := w.chunks
	var todo []*chunkJob
	for _, j := range p.jobs {
		w.size.Add(j.file.Size) // kept: known; else 0 until written
		if !j.kept {
			todo = append(todo, j)
		}
	}
	rel := newReleaser(w.l, todo)
	defer w.l.ReleaseAll()
	var dirs sync.Map // the chunks' folders: making each, once
	// Two workers a core: writes wait for the disk.
	err := pool.Run(ctx, len(todo), pool.Size(2), func() func(context.Context, int) error {
		var buf []byte
		return func(_ context.Context, i int) error {
			j := todo[i]
			defer rel.done(j)
			if n := j.ch.Size(); cap(buf) < n {
				buf = make([]byte, 0, n)
			}
			var err error
			if buf, err = feed.AppendChunk(buf[:0], j.ch); err != nil {
				return err
			}
			return w.putChunk(j, buf, &dirs)
		}
	})
	if err != nil {
		return err
	}
	w.files = make([]manifest.File, 0, len(p.jobs)+len(w.l.Collections))
	for _, j := range p.jobs {
		w.files = append(w.files, j.file)
	}
	if err := w.writeIndexes(ctx, &dirs); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	res := w.res
	res.Written = int(w.written.Load())
	res.Repaired = int(w.repaired.Load())
	res.Rendered = int(w.rendered.Load())
	res.Pages = len(w.files)
	res.Unchanged = res.Pages - res.Written
	res.Bytes = w.size.Load()
	res.Chunked, res.Chunks = true, len(p.jobs)
	return nil
}

// writeIndexes writes each collection's index: its leaves (each once,
// however many collections share it), then its root.
func (w *pageWriter) writeIndexes(ctx context.Context, dirs *sync.Map) error {
	p := w.chunks
	leaves := map[string]bool{}
	sizes := chunk.DefaultSizes()
	if w.b.opt.leaves != nil {
		sizes = *w.b.opt.leaves
	}
	var buf []byte
	var ids []int64
	for i, c := range w.l.Collections {
		if err := ctx.Err(); err != nil {
			return err
		}
		ix := chunk.Index{Count: c.Count(), Chunks: make([]chunk.Ref, len(p.of[i]))}
		ids = ids[:0]
		for k, j := range p.of[i] {
			// The same articles, so the same ends, in any collection.
			ix.Chunks[k] = chunk.Ref{Path: j.file.Path, Size: int(j.file.Size), Ends: j.ch.Ends()}
			ids = append(ids, j.ch.LastID())
		}
		root, err := sizes.Tree(&ix, ids, func(path string, sum [32]byte, data []byte) error {
			if leaves[path] {
				return nil
			}
			leaves[path] = true
			f := manifest.File{Path: path, Size: int64(len(data)), SHA256: hex.EncodeToString(sum[:])}
			w.files = append(w.files, f)
			w.rendered.Add(1)
			w.size.Add(f.Size)
			return w.putNamed(f, data, dirs)
		})
		if err != nil {
			return err
		}
		buf = chunk.AppendRoot(buf[:0], root)
		sum := sha256.Sum256(buf)
		f := manifest.File{Path: chunk.IndexPath(c.Dir), Size: int64(len(buf)), SHA256: hex.EncodeToString(sum[:])}
		w.rendered.Add(1)
		w.size.Add(f.Size)
		if err := w.put(f, buf); err != nil {
			return err
		}
		w.files = append(w.files, f)
	}
	return nil
}

// putChunk names the chunk of job j, whose bytes are data, and writes it
// (see put), making its folder first, once for all the chunks that go
// there (dirs).
func (w *pageWriter) putChunk(j *chunkJob, data []byte, dirs *sync.Map) error {
	sum := sha256.Sum256(data)
	j.file.Path, j.file.Size, j.file.SHA256 = chunk.ChunkPath(sum), int64(len(data)), hex.EncodeToString(sum[:])
	w.size.Add(j.file.Size)
	w.rendered.Add(1)
	return w.putNamed(j.file, data, dirs)
}

// putNamed writes f, a file named by its digest (a chunk, a leaf), whose
// bytes are data (see put), making its folder first, once for all the
// files that go there (dirs).
func (w *pageWriter) putNamed(f manifest.File, data []byte, dirs *sync.Map) error {
	if dir := w.out.fsDir(); dir != "" {
		// Made once, and waited for by every file that goes there.
		sub := path.Dir(f.Path)
		mk, _ := dirs.LoadOrStore(sub, sync.OnceValue(func() error {
			return os.MkdirAll(filepath.Join(dir, filepath.FromSlash(sub)), 0o755)
		}))
		if err := mk.(func() error)(); err != nil {
			return fmt.Errorf("creating output folder: %w", err)
		}
	}
	return w.put(f, data)
}

// put writes file f, whose bytes are data, unless the output has it as
// the last build left it, and hands it to OnPage.
func (w *pageWriter) put(f manifest.File, data []byte) error {
	if w.b.opt.OnPage != nil {
		var sum [sha256.Size]byte
		hex.Decode(sum[:], []byte(f.SHA256))
		w.b.opt.OnPage(f.Path, data, sum)
	}
	o, known := w.old[f.Path]
	var err error
	switch {
	case known && w.repairs(o, f):
		err = w.out.rewrite(f.Path, data)
	case known && o.SHA256 == f.SHA256 && o.Size == f.Size:
		return nil
	case known:
		err = w.out.rewrite(f.Path, data)
	default:
		err = w.out.create(f.Path, data)
	}
	if err != nil {
		return err
	}
	w.written.Add(1)
	w.b.step("page")
	return nil
}

// readInputs adds to old the chunks of the file name (see inputsName), by
// input, and returns how many of its lines it did not believe: changed
// since a build wrote them (their check differs), or cut short. A file
// that is missing adds nothing, nor do lines of the format before checks
// (a feedgen before them wrote the file), nor one that is not a regular
// file (never opened: see outfile), which the build then replaces: the
// chunks it does not name are rendered.
func readInputs(name string, old map[string]manifest.File) (bad int) {
	data, err := outfile.ReadFile(name)
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		f := strings.Fields(line)
		if len(f) == 3 && strings.HasSuffix(line, "\n") {
			continue // before checks
		}
		if len(f) != 4 || !strings.HasSuffix(line, "\n") || f[3] != lineCheck(f[0], f[1], f[2]) {
			bad++
			continue
		}
		sum, ok := chunk.ParseChunkPath(f[1])
		size, err := strconv.ParseInt(f[2], 10, 64)
		if !ok || err != nil || size < 0 {
			bad++
			continue
		}
		old[f[0]] = manifest.File{Path: f[1], Size: size, SHA256: hex.EncodeToString(sum[:]), Input: f[0]}
	}
	return bad
}

// writeInputs writes the inputs file of the build's chunks into the
// output folder dir (see inputsName).
func (w *pageWriter) writeInputs(dir string) error {
	var b strings.Builder
	for _, j := range w.chunks.jobs {
		size := strconv.FormatInt(j.file.Size, 10)
		fmt.Fprintf(&b, "%s %s %s %s\n", j.file.Input, j.file.Path, size, lineCheck(j.file.Input, j.file.Path, size))
	}
	return writeAtomic(filepath.Join(dir, inputsName), []byte(b.String()))
}
