package rules

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/feedgen/feedgen/internal/chunk"
	"github.com/feedgen/feedgen/internal/chunk/chunktest"
	"github.com/feedgen/feedgen/internal/layout"
	"github.com/feedgen/feedgen/internal/listing"
)

// assembleDriver runs assemble.js's plan and parts on node over one
// index, a root and its leaves (input.files, by path; written in
// input.dir too), read as text (as the Workers keep them), as bytes (a
// Buffer, as njs reads a file of up to 256 kB) and through nginx.js's
// openIndex reading windows of 64 bytes, shorter than most lines (as
// njs reads a larger one), for each [limit, offset] of its input (by
// windows, every windowsStep-th: they cost the most); then
// each of input.bad, an index that is not one, as text; and valueFolder
// for each value. It prints the parts of each page (null past the end;
// "unreadable: " and the message for an index refused) and the folders.
// It follows the nginx adapter, in a module.
const assembleDriver = `
import fs from "fs";
var input = JSON.parse(fs.readFileSync(0, "utf8")), out = {text: [], bytes: [], windows: [], bad: [], folders: []};
WINDOW = 64;
WHOLE = 0;
var windowsStep = ` + windowsStep + `;
function read(files, form, path) {
    return form == "text" ? files[path] : form == "bytes" ? Buffer.from(files[path]) : openIndex(fs, input.dir + "/" + path);
}
function page(files, form, limit, offset) {
    var opened = [], t = read(files, form, "articles/chunks.json"), pl;
    opened.push(t);
    try {
        pl = plan({c: "articles", q: {l: limit, o: "" + offset, p: []}}, t);
        if (pl.b != null) {
            return null;
        }
        var ts = pl.f.map(function (f) {
            var l = files[f[0]] == null ? "" : read(files, form, f[0]);
            opened.push(l);
            return l;
        });
        return parts(pl, ts, ts.map(function (l) {
            return l.length;
        })).p;
    } catch (e) {
        return "unreadable: " + e.message;
    } finally {
        opened.forEach(function (t) {
            closeIndex(fs, t);
        });
    }
}
for (var form in out) {
    for (var i = 0; form != "folders" && form != "bad" && i < input.cases.length; i += form == "windows" ? windowsStep : 1) {
        out[form].push(page(input.files, form, input.cases[i][0], input.cases[i][1]));
    }
}
for (i = 0; i < input.bad.length; i++) {
    out.bad.push(page(input.bad[i], "text", 100, 0));
}
for (i = 0; i < input.values.length; i++) {
    out.folders.push(valueFolder(utf8(input.values[i])));
}
console.log(JSON.stringify(out));
`

// windowsStep is how far apart the cases are that assembleDriver runs
// by windows.
const windowsStep = "3"

// randomIndex returns an index of n chunks of uneven sizes, made up
// (paths, ends), of the shape chunk.ParseLeaf accepts.
func randomIndex(n int) *chunk.Index {
	rng := rand.New(rand.NewPCG(1, 2))
	ix := &chunk.Index{}
	for k := 0; k < n; k++ {
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
	return ix
}

// TestAssembleJS checks assemble.js on node against the index's format
// as package chunk writes it: for a root and leaves of many chunks of
// uneven sizes (leaves of a few chunks, so that pages run across two
// leaves and more), the parts of every page at several limits (and past
// the end) are the slices Go cuts from the index, whether plan and parts
// read the root and leaves as text, as bytes or by windows of the file;
// an index that is not one (format 2, a leaf of another count or size, a
// path that is not a leaf's) is refused; and valueFolder names a value's
// folder as listing.EncodeValue does (long values by their SHA-256,
// Windows device names).
func TestAssembleJS(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	ix := randomIndex(400)
	root, leaves := chunktest.TreeOf(ix, 7)
	files := map[string]string{chunk.IndexPath(listing.Dir): string(root)}
	for p, data := range leaves {
		files[p] = string(data)
	}
	flat, err := chunk.ReadIndex(root, func(p string) ([]byte, error) { return leaves[p], nil })
	if err != nil || flat.Count != ix.Count || len(leaves) < 50 {
		t.Fatalf("the tree of %d articles has %d leaves (%v)", ix.Count, len(leaves), err)
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
	file := filepath.Join(dir, "assemble.mjs")
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Fatal(err)
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bad := badIndexes(t, ix)
	var badFiles []map[string]string
	for _, b := range bad {
		badFiles = append(badFiles, b.files)
	}
	input, _ := json.Marshal(map[string]any{"files": files, "dir": dir, "cases": cases, "bad": badFiles, "values": values})
	cmd := exec.CommandContext(t.Context(), node, file) // killed if the test times out
	cmd.Stdin = strings.NewReader(string(input))
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node: %v\n%.2000s", err, out)
	}
	var got struct {
		Text, Bytes, Windows, Bad []any
		Folders                   []string
	}
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("node printed %.2000s (%v)", out, err)
	}
	wantJSON, _ := json.Marshal(want)
	var wantAny []any
	json.Unmarshal(wantJSON, &wantAny)
	step, _ := strconv.Atoi(windowsStep)
	for form, parts := range map[string][]any{"text": got.Text, "bytes": got.Bytes, "windows": got.Windows} {
		k := 1
		if form == "windows" {
			k = step
		}
		if len(parts) != (len(cases)+k-1)/k {
			t.Fatalf("%s: %d plans, want %d", form, len(parts), (len(cases)+k-1)/k)
		}
		bad := 0
		for i, part := range parts {
			c := cases[i*k]
			g, _ := json.Marshal(part)
			w, _ := json.Marshal(wantAny[i*k])
			if string(g) != string(w) {
				if bad++; bad <= 5 {
					t.Errorf("%s: limit %d offset %d: parts %s, want %s", form, c[0], c[1], g, w)
				}
			}
		}
	}
	if len(got.Bad) != len(bad) {
		t.Fatalf("%d indexes that are not one read, want %d", len(got.Bad), len(bad))
	}
	for i, b := range bad {
		if s, _ := got.Bad[i].(string); !strings.HasPrefix(s, "unreadable: ") || !strings.Contains(s, b.want) {
			g, _ := json.Marshal(got.Bad[i])
			t.Errorf("%s: %s, want it refused with %q", b.name, g, b.want)
		}
	}
	for i, v := range values {
		if i >= len(got.Folders) || got.Folders[i] != listing.EncodeValue(v) {
			t.Errorf("valueFolder(%q) = %q, want %q", v, slices.Concat(got.Folders, make([]string, len(values)))[i], listing.EncodeValue(v))
		}
	}
}

// A badIndex is an index that is not one as feedgen build writes it:
// its files by path (the root at articles/chunks.json), and what the
// message that refuses its first page of 100 says.
type badIndex struct {
	name  string
	files map[string]string
	want  string
}

// badIndexes returns indexes made from a tree of ix that plan and parts
// must refuse.
func badIndexes(t *testing.T, ix *chunk.Index) []badIndex {
	root, leaves := chunktest.TreeOf(ix, 2)
	tr, err := chunk.ParseRoot(root)
	if err != nil {
		t.Fatal(err)
	}
	first := tr.Leaves[0].Path
	tree := func(edit func(root string, leaf string) (string, string)) map[string]string {
		files := map[string]string{}
		for p, data := range leaves {
			files[p] = string(data)
		}
		rt, lf := edit(string(root), files[first])
		files[chunk.IndexPath(listing.Dir)], files[first] = rt, lf
		return files
	}
	// A format-2 index: what an older feedgen wrote at the root's path.
	v2 := `{"format":2,"count":` + strconv.Itoa(ix.Chunks[0].Size) + `,"chunks":[` + "\n" + `{"first":0,"path":"` + ix.Chunks[0].Path + `","size":` +
		strconv.Itoa(ix.Chunks[0].Size) + `,"ends":` + strings.ReplaceAll(fmt.Sprint(ix.Chunks[0].Ends), " ", ",") + "}]}\n"
	const refused = "refused: not a chunk index of format 3"
	const leafRefused = "refused: not the leaf the build wrote"
	return []badIndex{
		{"a format-2 index", tree(func(_, l string) (string, string) { return v2, l }), refused},
		{"a root of format 4", tree(func(r, l string) (string, string) { return strings.Replace(r, `"format":3,`, `"format":4,`, 1), l }), refused},
		{"a leaf as the root", tree(func(_, l string) (string, string) { return l, l }), refused},
		{"a root naming a chunk", tree(func(r, l string) (string, string) {
			return strings.Replace(r, first, ix.Chunks[0].Path, 1), l
		}), refused},
		{"a root whose second leaf does not follow the first", tree(func(r, l string) (string, string) {
			second := fmt.Sprintf(`{"first":%d,`, tr.Leaves[1].First)
			return strings.Replace(r, second, fmt.Sprintf(`{"first":%d,`, tr.Leaves[1].First+1), 1), l
		}), refused},
		{"a leaf of another size", tree(func(r, l string) (string, string) { return r, l + "\n" }), leafRefused},
		{"a leaf of another count", tree(func(r, l string) (string, string) {
			return r, strings.Replace(l, fmt.Sprintf(`"count":%d,`, tr.Leaves[0].Count), fmt.Sprintf(`"count":%d,`, tr.Leaves[0].Count+1), 1)
		}), leafRefused},
		{"a leaf of format 2", tree(func(r, l string) (string, string) { return r, strings.Replace(l, `"format":3,`, `"format":2,`, 1) }), leafRefused},
		{"a leaf that is a root", tree(func(r, l string) (string, string) { return r, r }), leafRefused},
		{"a leaf naming a leaf", tree(func(r, l string) (string, string) {
			return r, strings.Replace(l, ix.Chunks[0].Path, strings.TrimSuffix(ix.Chunks[0].Path, ".json")+".leaf.json", 1)
		}), leafRefused},
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
