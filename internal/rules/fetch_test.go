package rules

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// storeDriver runs fetch.js's respond on node, on the chunks build in
// input.root, through fetchStore over a stand-in origin: it answers a
// file whole, or a Range with 206 and, by input.mode, the Content-Range
// that origins and proxies send: full (bytes START-END/SIZE), star
// (bytes START-END/*, which RFC 9110 allows when the size is not known),
// none (a proxy that drops it), wrong (another SIZE than the file's),
// shifted (bytes START-END/*, but the bytes one further: a chunk not the
// one the index names). It prints each answer, and what the script
// logged.
const storeDriver = `
import fs from "fs";
import path from "path";
var input = JSON.parse(fs.readFileSync(0, "utf8")), logged = [];
console.error = console.warn = console.log = function () {
    logged.push(Array.from(arguments).join(" "));
};
async function origin(req) {
    var data;
    try {
        data = fs.readFileSync(path.join(input.root, decodeURIComponent(new URL(req.url).pathname)));
    } catch (e) {
        return new Response(null, {status: 404});
    }
    var r = req.headers.get("Range");
    if (r == null) {
        return new Response(data, {status: 200});
    }
    var ab = r.slice("bytes=".length).split("-"), a = +ab[0], b = Math.min(+ab[1], data.length - 1), h = new Headers();
    var size = {full: "" + data.length, star: "*", wrong: "" + (data.length + 1), shifted: "*"}[input.mode];
    if (size != null) {
        h.set("Content-Range", "bytes " + a + "-" + b + "/" + size);
    }
    var shift = input.mode == "shifted" ? 1 : 0;
    return new Response(data.subarray(a + shift, b + 1 + shift), {status: 206, headers: h});
}
var answers = [];
for (var i = 0; i < input.targets.length; i++) {
    var res = await respond(new Request("http://origin.test" + input.targets[i]), origin, fetchStore("http://origin.test/", origin));
    answers.push({status: res.status, body: await res.text()});
}
process.stdout.write(JSON.stringify({answers: answers, logged: logged}));
`

// TestFetchStoreSizeUnknown checks fetch.js (the Cloudflare and Netlify
// adapter) on an origin whose ranges do not say the chunk's size: with
// Content-Range bytes START-END/* or none, the pages are feedgen serve's
// (the cuts are checked, not the size), and the script says so once;
// with the size said, they are too, and nothing is said; with a wrong
// size, or with no size and bytes whose cuts are not an article's, the
// chunk is refused: 503.
func TestFetchStoreSizeUnknown(t *testing.T) {
	node := needProgram(t, "node", "nodejs")
	s, err := NewSite(chunkMan, chunkRoot, "8080")
	if err != nil {
		t.Fatal(err)
	}
	js, err := script("", chunkedSiteData(s, true), fetchAdapterJS+storeDriver)
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "store.mjs")
	if err := os.WriteFile(file, js, 0o644); err != nil {
		t.Fatal(err)
	}
	targets := []string{"/articles/", "/articles/?limit=7&offset=3", "/articles/?limit=100", "/articles/?section=news&limit=5&offset=2", "/articles/?tag=API", "/articles/?offset=20"}
	const said = "is not known (its Content-Range is bytes START-END/* or missing)"
	for _, tc := range []struct {
		mode   string
		status int // of every page: 0 for feedgen serve's
		said   int // the times the script says the size is not known
	}{
		{"full", 0, 0},
		{"star", 0, 1},
		{"none", 0, 1},
		{"wrong", 503, 0},
		{"shifted", 503, 1},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			input, _ := json.Marshal(map[string]any{"root": chunkRoot, "mode": tc.mode, "targets": targets})
			cmd := exec.CommandContext(t.Context(), node, file)
			cmd.Stdin = strings.NewReader(string(input))
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("node: %v\n%.2000s", err, out)
			}
			var got struct {
				Answers []struct {
					Status int
					Body   string
				}
				Logged []string
			}
			if err := json.Unmarshal(out, &got); err != nil || len(got.Answers) != len(targets) {
				t.Fatalf("node printed %.2000s (%v)", out, err)
			}
			for i, target := range targets {
				want := ask(t, chunkRefBase, request{method: "GET", target: target})
				g := got.Answers[i]
				switch {
				case tc.status != 0 && g.Status != tc.status:
					t.Errorf("%s: %d, want %d", target, g.Status, tc.status)
				case tc.status == 0 && (g.Status != want.status || g.Body != want.body):
					t.Errorf("%s: %d %.200s\nwant %d %.200s", target, g.Status, g.Body, want.status, want.body)
				}
			}
			n := 0
			for _, l := range got.Logged {
				if strings.Contains(l, said) {
					n++
				}
			}
			if n != tc.said {
				t.Errorf("said %d times that a size is not known, want %d: %q", n, tc.said, got.Logged)
			}
		})
	}
}
