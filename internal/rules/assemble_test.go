package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// assembleDriver runs assemble.js's plan on node over one index, as text
// (as the Workers keep it), as bytes (a Buffer, as njs reads an index of
// up to 256 kB) and through nginx.js's openIndex reading windows of 64
// bytes, shorter than most lines (as njs reads a larger one), for each [limit, offset] of its input, and valueFolder
// for each value: it prints the parts of each plan (null for a page past
// the end) and the folders. It follows the nginx adapter, in a module.
const assembleDriver = `
import fs from "fs";
var input = JSON.parse(fs.readFileSync(0, "utf8")), out = {text: [], bytes: [], windows: [], folders: []};
WINDOW = 64;
WHOLE = 0;
for (var form in out) {
    for (var i = 0; form != "folders" && i < input.cases.length; i++) {
        var t = form == "text" ? input.index : form == "bytes" ? Buffer.from(input.index) : openIndex(fs, input.file);
        var pl = plan({c: "articles", q: {l: input.cases[i][0], o: "" + input.cases[i][1], p: []}}, t);
        out[form].push(pl == null ? "unreadable" : pl.p == null ? null : pl.p);
        if (form == "windows") {
            fs.closeSync(t.fd);
        }
    }
}
for (i = 0; i < input.values.length; i++) {
    out.folders.push(valueFolder(utf8(input.values[i])));
}
console.log(JSON.stringify(out));
`

// TestAssembleJS checks assemble.js on node against the index's format
// as package chunk writes it: for an index of many chunks of uneven
// sizes, the parts of every page at several limits (and past the end)
// are the slices Go cuts from the index, whether plan reads the index as
// text, as bytes or by windows of the file; and valueFolder names a value's folder as
// listing.EncodeValue does (long values by their SHA-256, Windows device
// names).
func TestAssembleJS(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	rng := rand.New(rand.NewPCG(1, 2))
	ix := &chunk.Index{}
	for k := 0; k < 400; k++ {
		var sum [32]byte
		binary.BigEndian.PutUint64(sum[:], rng.Uint64())
		r := chunk.Ref{Path: chunk.ChunkPath(sha256.Sum256(sum[:]))}
		at := 1
		for range 1 + rng.IntN(k%7*10+1) {
			at += 2 + rng.IntN(400)
			r.Ends = append(r.Ends, at)
			at++
		}
		r.Size = at
		ix.Chunks = append(ix.Chunks, r)
		ix.Count += len(r.Ends)
	}
	text := string(chunk.AppendIndex(nil, ix))
	if _, err := chunk.ParseIndex([]byte(text)); err != nil {
		t.Fatal(err)
	}
	var cases [][2]int
	var want []any
	for _, limit := range []int{1, 7, 20, 100} {
		for off := 0; off <= ix.Count+1; off += 1 + off%3 {
			cases = append(cases, [2]int{limit, off})
			want = append(want, wantParts(ix, limit, off))
		}
	}
	values := []string{"news", "Go", "con", "com7", "lpt1", "co", "console", "Ёж", strings.Repeat("a", 200), strings.Repeat("a", 201),
		strings.Repeat("Ж", 33), strings.Repeat("Ж", 34), "__proto__", "a b+c%d"}
	p := listing.Pagination{DefaultLimit: 20, MaxLimit: 100, Layout: layout.ChunksName}
	js, err := script("", chunkedSiteData(&Site{Paging: p, BaseURL: "https://api.example.com"}, true), nginxAdapterJS+assembleDriver)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	file, indexFile := filepath.Join(dir, "assemble.mjs"), filepath.Join(dir, chunk.IndexName)
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(indexFile, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	input, _ := json.Marshal(map[string]any{"index": text, "file": indexFile, "cases": cases, "values": values})
	cmd := exec.CommandContext(t.Context(), node, file) // killed if the test times out
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%.2000s", err, out)
	}
	var got struct {
		Text, Bytes, Windows []any
		Folders              []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %.2000s (%v)", out, err)
	}
	wantJSON, _ := json.Marshal(want)
	var wantAny []any
	json.Unmarshal(wantJSON, &wantAny)
	for form, parts := range map[string][]any{"text": got.Text, "bytes": got.Bytes, "windows": got.Windows} {
		if len(parts) != len(cases) {
			t.Fatalf("%s: %d plans, want %d", form, len(parts), len(cases))
		}
		bad := 0
		for i, c := range cases {
			g, _ := json.Marshal(parts[i])
			w, _ := json.Marshal(wantAny[i])
			if string(g) != string(w) {
				if bad++; bad <= 5 {
					t.Errorf("%s: limit %d offset %d: parts %s, want %s", form, c[0], c[1], g, w)
				}
			}
		}
	}
	for i, v := range values {
		if i >= len(got.Folders) || got.Folders[i] != listing.EncodeValue(v) {
			t.Errorf("valueFolder(%q) = %q, want %q", v, slices.Concat(got.Folders, make([]string, len(values)))[i], listing.EncodeValue(v))
		}
	}
}

// wantParts returns the parts of page (limit, off) of ix, as plan
// returns them: [path, start, end, size] of each chunk the page takes
// articles from; nil past the end.
func wantParts(ix *chunk.Index, limit, off int) [][4]any {
	if off >= ix.Count {
		return nil
	}
	var parts [][4]any
	first := 0
	last := min(off+limit, ix.Count) - 1
	for _, r := range ix.Chunks {
		n := len(r.Ends)
		if first+n > off && first <= last {
			i, j := max(off, first)-first, min(last, first+n-1)-first
			parts = append(parts, [4]any{r.Path, r.Start(i), r.Ends[j], r.Size})
		}
		first += n
	}
	return parts
}
