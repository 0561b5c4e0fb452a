package content

import (
	"context"
	"strings"
	"testing"
	"testing/fstest"
	"time"
	"unicode/utf8"

	"github.com/feedgen/feedgen/internal/config"
	"github.com/feedgen/feedgen/internal/corpus"
)

// BenchmarkLoad loads a generated site of 1,000 articles from memory.
func BenchmarkLoad(b *testing.B) {
	opt := corpus.Options{Articles: 1000, Seed: 1}
	files := corpus.Files(opt)
	cfg, err := config.Parse("config.yaml", "", files["config.yaml"])
	if err != nil {
		b.Fatal(err)
	}
	fsys := fstest.MapFS{}
	size := 0
	for name, data := range files {
		if rest, ok := strings.CutPrefix(name, "content/"); ok {
			fsys[rest] = &fstest.MapFile{Data: data}
			size += len(data)
		}
	}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		site, err := NewLoader(cfg).Load(context.Background(), fsys, Options{Now: time.Now()})
		if err != nil || len(site.Articles) != 1000 {
			b.Fatalf("load: %v", err)
		}
	}
}

// BenchmarkValidUTF8 checks the generated articles (Cyrillic and English)
// with validUTF8 and with utf8.Valid.
func BenchmarkValidUTF8(b *testing.B) {
	var files [][]byte
	size := 0
	for name, data := range corpus.Files(corpus.Options{Articles: 200, Seed: 1}) {
		if strings.HasPrefix(name, "content/") {
			files = append(files, data)
			size += len(data)
		}
	}
	for _, bm := range []struct {
		name  string
		valid func([]byte) bool
	}{{"validUTF8", validUTF8}, {"utf8.Valid", utf8.Valid}} {
		b.Run(bm.name, func(b *testing.B) {
			b.SetBytes(int64(size))
			for b.Loop() {
				for _, f := range files {
					if !bm.valid(f) {
						b.Fatal("invalid")
					}
				}
			}
		})
	}
}
