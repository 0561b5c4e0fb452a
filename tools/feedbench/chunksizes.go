package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"text/tabwriter"
	"time"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/content"
	"github.com/feedgen/feedgen/internal/corpus"
	"github.com/feedgen/feedgen/internal/feed"
)

// chunkSizesPlan is what one "feedbench chunksizes" measures.
type chunkSizesPlan struct {
	dir      string
	articles int
	seed     int64
	averages []int
	leaves   []int // leaf averages, in chunks, at the default chunk sizes
}

const chunkSizesAbout = `Measures, in process, what the sizes of chunks (chunk.Sizes) trade: a corpus of
-articles articles with all four filters is loaded once and cut into chunks of each
average (max articles 8x the average, max bytes 1 MiB), and for each it reports the
chunks and their mean size, how many chunks a page of 20 and of 100 articles needs
(mean over every offset of every collection), and what a publish moves: for the newest
article, the first chunk of each collection it is in, and for an edited one (the mean
over 500 articles), its chunk in each of its collections; each plus those
collections' indexes and the manifest (a line per collection).
Then, at the default chunk sizes, the same for each leaf average of the index's
tree (chunk.Sizes.LeafAverage, in chunks; at most 4x as many chunks a leaf): the
leaves and their mean size, the largest root (the main listing's), what an
assembler reads of the index for a page (that root and a mean leaf), and what a
publish moves: for each collection of the article, its chunk, its leaf and its root.
A root grows with the archive (a line of about 120 bytes a leaf) and a leaf with the
leaf average (a line of about 330 bytes a chunk): their sum is least for leaves of
about sqrt(N/3) chunks at N articles; at 1,000,000 articles, 128 chunks.
`

func parseChunkSizesFlags(args []string, stderr io.Writer) (chunkSizesPlan, error) {
	c := newCommandLine("chunksizes", stderr, "[-articles N] [-dir DIR]", "", chunkSizesAbout)
	articles := c.Int("articles", 20_000, "`number` of articles of the site")
	c.seedFlag()
	if err := c.parse(args); err != nil {
		return chunkSizesPlan{}, err
	}
	return chunkSizesPlan{dir: c.dir, articles: *articles, seed: c.seed, averages: []int{8, 16, 32, 64, 128}, leaves: []int{16, 32, 64, 128, 256}}, nil
}

func runChunkSizes(ctx context.Context, plan chunkSizesPlan, stdout, stderr io.Writer) error {
	dir, err := os.MkdirTemp(plan.dir, "feedbench-chunksizes-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	opt := corpus.Options{Articles: plan.articles, Seed: plan.seed, Filters: []string{"section", "category", "tag", "author"}}
	if _, err := corpus.Write(dir, opt); err != nil {
		return err
	}
	data, err := os.ReadFile(filepath.Join(dir, corpus.ConfigPath))
	if err != nil {
		return err
	}
	cfg, err := config.Parse(corpus.ConfigPath, dir, data)
	if err != nil {
		return err
	}
	site, err := content.NewLoader(cfg).Load(ctx, content.DirFS(cfg.ContentDir), content.Options{Now: time.Now(), Future: true, Root: cfg.ContentDir})
	if err != nil {
		return err
	}
	l := feed.New(cfg.BaseURL, cfg.Pagination, cfg.Filters, site.Articles)
	fmt.Fprintf(stdout, "%d articles, %d collections\n", len(site.Articles), len(l.Collections))
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "average\tchunks\tmean chunk\tchunks a page of 20\tof 100\tnew article\tedited article\tof which manifest\t")
	for _, avg := range plan.averages {
		s := chunk.DefaultSizes()
		s.Average, s.MaxArticles = avg, 8*avg
		m := measureSizes(l, s)
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.2f\t%.2f\t%s\t%s\t%s\t\n", avg, m.chunks, formatBytes(m.bytes/int64(max(1, m.chunks))),
			m.perPage[0], m.perPage[1], formatBytes(m.newArticle), formatBytes(m.edited), formatBytes(m.manifest))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "leaf average	leaves	mean leaf	largest root	index read a page	new article	edited article	")
	for _, avg := range plan.leaves {
		s := chunk.DefaultSizes()
		s.LeafAverage, s.LeafMaxChunks = avg, 4*avg
		m := measureSizes(l, s)
		fmt.Fprintf(tw, "%d\t%d\t%s\t%s\t%s\t%s\t%s\t\n", avg, m.leaves, formatBytes(m.leafBytes/int64(max(1, m.leaves))), formatBytes(m.root),
			formatBytes(m.root+m.leafBytes/int64(max(1, m.leaves))), formatBytes(m.newArticle), formatBytes(m.edited))
	}
	return tw.Flush()
}

// sizeFigures are the figures of one chunk.Sizes.
type sizeFigures struct {
	chunks             int
	bytes              int64
	perPage            [2]float64 // chunks a page of 20, of 100 articles needs
	newArticle, edited int64      // bytes a publish moves
	manifest           int64
	leaves             int   // leaves of the indexes' trees
	leafBytes          int64 // their bytes
	root               int64 // the largest root's bytes
}

// measureSizes cuts l with s and measures it.
func measureSizes(l *feed.Listing, s chunk.Sizes) sizeFigures {
	var f sizeFigures
	cuts := l.ChunksSized(s)
	rootSize := make([]int64, len(l.Collections))
	// leafOf[i][k]: the size of the leaf of collection i that names its chunk k.
	leafOf := make([][]int64, len(l.Collections))
	// of[i][a]: the chunk of collection i that holds article a (main's index).
	chunkOf := make([]map[int64]int, len(l.Collections))
	placeholder := chunk.ChunkPath([32]byte{})
	for i, cs := range cuts {
		ix := chunk.Index{Count: l.Collections[i].Count()}
		var ids []int64
		chunkOf[i] = map[int64]int{}
		for k, ch := range cs {
			f.chunks++
			f.bytes += int64(ch.Size())
			ix.Chunks = append(ix.Chunks, chunk.Ref{Path: placeholder, Size: ch.Size(), Ends: ch.Ends()})
			ids = append(ids, ch.LastID())
			for a := ch.Lo; a < ch.Hi; a++ {
				chunkOf[i][l.Collections[i].Articles[a].ID] = k
			}
		}
		root, _ := s.Tree(&ix, ids, func(_ string, _ [32]byte, leaf []byte) error {
			f.leaves++
			f.leafBytes += int64(len(leaf))
			return nil
		})
		leafOf[i] = make([]int64, len(cs))
		k, at := 0, 0
		for _, lr := range root.Leaves {
			for ; k < len(cs) && at < lr.First+lr.Count; k++ {
				leafOf[i][k] = int64(lr.Size)
				at += cs[k].Hi - cs[k].Lo
			}
		}
		rootSize[i] = int64(len(chunk.AppendRoot(nil, root)))
		f.root = max(f.root, rootSize[i])
		f.manifest += int64(len(`{"path":"`) + len(l.Collections[i].Dir) + len(`/chunks.json","size":123456,"sha256":"`) + 64 + len("\"},\n"))
	}
	for p, limit := range []int{20, 100} {
		var pages, spans int
		for i, cs := range cuts {
			first := make([]int, len(cs))
			for k, ch := range cs {
				first[k] = ch.Lo
			}
			at := func(a int) int { // the chunk of article a
				k := 0
				for k+1 < len(first) && first[k+1] <= a {
					k++
				}
				return k
			}
			for o := range l.Collections[i].Count() {
				spans += at(min(o+limit, l.Collections[i].Count())-1) - at(o) + 1
				pages++
			}
		}
		f.perPage[p] = float64(spans) / float64(max(1, pages))
	}
	// What a publish moves when article id changes: its chunk, its leaf
	// and the root of each collection it is in, and the manifest.
	moved := func(id int64) int64 {
		n := f.manifest
		for i, cs := range cuts {
			if k, ok := chunkOf[i][id]; ok {
				n += int64(cs[k].Size()) + leafOf[i][k] + rootSize[i]
			}
		}
		return n
	}
	main := l.Main()
	if main.Count() > 0 {
		f.newArticle = moved(main.Articles[0].ID)
		const sample = 500
		var sum int64
		for j := range sample {
			sum += moved(main.Articles[j*main.Count()/sample].ID)
		}
		f.edited = sum / sample
	}
	return f
}
