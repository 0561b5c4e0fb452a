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
}

const chunkSizesAbout = `Measures, in process, what the sizes of chunks (chunk.Sizes) trade: a corpus of
-articles articles with all four filters is loaded once and cut into chunks of each
average (max articles 8x the average, max bytes 1 MiB), and for each it reports the
chunks and their mean size, how many chunks a page of 20 and of 100 articles needs
(mean over every offset of every collection), and what a publish moves: for the newest
article, the first chunk of each collection it is in, and for an edited one (the mean
over 500 articles), its chunk in each of its collections; each plus those
collections' indexes and the manifest (a line per collection).
`

func parseChunkSizesFlags(args []string, stderr io.Writer) (chunkSizesPlan, error) {
	c := newCommandLine("chunksizes", stderr, "[-articles N] [-dir DIR]", "", chunkSizesAbout)
	articles := c.Int("articles", 20_000, "`number` of articles of the site")
	c.seedFlag()
	if err := c.parse(args); err != nil {
		return chunkSizesPlan{}, err
	}
	return chunkSizesPlan{dir: c.dir, articles: *articles, seed: c.seed, averages: []int{8, 16, 32, 64, 128}}, nil
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
	return tw.Flush()
}

// sizeFigures are the figures of one chunk.Sizes.
type sizeFigures struct {
	chunks             int
	bytes              int64
	perPage            [2]float64 // chunks a page of 20, of 100 articles needs
	newArticle, edited int64      // bytes a publish moves
	manifest           int64
}

// measureSizes cuts l with s and measures it.
func measureSizes(l *feed.Listing, s chunk.Sizes) sizeFigures {
	var f sizeFigures
	cuts := l.ChunksSized(s)
	indexSize := make([]int64, len(l.Collections))
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
			indexSize[i] += int64(len(leaf))
			return nil
		})
		indexSize[i] += int64(len(chunk.AppendRoot(nil, root)))
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
	// What a publish moves when article id changes: its chunk and the
	// index of each collection it is in, and the manifest.
	moved := func(id int64) int64 {
		n := f.manifest
		for i, cs := range cuts {
			if k, ok := chunkOf[i][id]; ok {
				n += int64(cs[k].Size()) + indexSize[i]
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
