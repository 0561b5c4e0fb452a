package main

import (
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/spf13/cobra"
)

// exampleSkips are the example lines that cannot run offline: each needs
// a bucket or a host on the network. A line is skipped when it has one of
// these texts; every one must match some line, so that the list stays
// what the examples are.
var exampleSkips = []struct{ text, why string }{
	{"https://api.example.com/", "imports from a service on the network"},
	{"s3://", "publishes to an S3 bucket"},
	{"gs://", "publishes to a Cloud Storage bucket"},
}

// exampleSetup is what runs, in the fresh site, before a command's
// examples: what a user has done before, as the examples take it.
// Commands not listed run in the fresh site as feedgen new site wrote it.
var exampleSetup = map[string][]string{
	"feedgen serve":   {"feedgen build", "feedgen bundle -o feed-2026-11-23.zip"},
	"feedgen bundle":  {"feedgen build"},
	"feedgen verify":  {"feedgen build", "feedgen bundle -o feed-2026-11-23.zip"},
	"feedgen rules":   {"feedgen build"},
	"feedgen publish": {"feedgen build"}, // file:///srv/www/feed is created
	"feedgen import":  {"feedgen build"}, // its http://127.0.0.1:8080 is a feedgen serve of it
}

// TestExamples runs the examples of every command's --help, as they are
// in the command tree, on what feedgen new site writes: each command's
// in a new site at $ROOT/srv/feed (the folder the examples name as
// /srv/feed), from that folder; those of feedgen new and new site, which
// make a site, from $ROOT. Absolute paths in the examples (/srv/, /tmp/, /archive/)
// are under $ROOT. Every line must exit 0. A feedgen serve runs until it
// answers /articles/ with 200, then is stopped with SIGTERM: on a free
// port (--addr 127.0.0.1:0, put in place of the example's); an import of
// http://127.0.0.1:8080/articles/ reads such a feedgen serve of the site.
// Lines that need the network or a bucket are skipped (exampleSkips).
func TestExamples(t *testing.T) {
	if testing.Short() {
		t.Skip("runs every example, servers included")
	}
	var cmds []*cobra.Command
	for _, c := range commands() {
		if c.Example != "" {
			cmds = append(cmds, c)
		}
	}
	if len(cmds) < 10 {
		t.Fatalf("found the examples of %d commands, want every command's", len(cmds))
	}
	skipped := make([]bool, len(exampleSkips))
	for _, c := range cmds {
		t.Run(strings.ReplaceAll(c.CommandPath(), " ", "_"), func(t *testing.T) {
			root := t.TempDir()
			site := filepath.Join(root, "srv", "feed")
			for _, d := range []string{filepath.Join(root, "tmp"), filepath.Join(root, "archive")} {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			if r := runFeedgen(t, root, nil, "new", "site", site); r.code != 0 {
				t.Fatalf("feedgen new site: %d\n%s", r.code, r.stderr)
			}
			ex := &exampleRun{t: t, root: root, cwd: site}
			if p := c.CommandPath(); p == "feedgen new" || p == "feedgen new site" {
				ex.cwd = root // they make the site
			}
			for _, line := range exampleSetup[c.CommandPath()] {
				ex.line(line)
			}
			if c.CommandPath() == "feedgen import" {
				ex.source = startServe(t, site, "serve", "--addr", "127.0.0.1:0").url
			}
			for _, line := range strings.Split(c.Example, "\n") {
				if i := skipIndex(line); i >= 0 {
					skipped[i] = true
					t.Logf("skipped (%s): %s", exampleSkips[i].why, strings.TrimSpace(line))
					continue
				}
				ex.line(line)
			}
		})
	}
	for i, s := range exampleSkips {
		if !skipped[i] {
			t.Errorf("exampleSkips: no example has %q any more: take it out", s.text)
		}
	}
}

// skipIndex returns the index in exampleSkips of what makes line one to
// skip, or -1.
func skipIndex(line string) int {
	for i, s := range exampleSkips {
		if strings.Contains(line, s.text) {
			return i
		}
	}
	return -1
}

// exampleRun runs the lines of a command's examples, one after another,
// as a shell would: from cwd, which cd changes.
type exampleRun struct {
	t      *testing.T
	root   string // where /srv/, /tmp/ and /archive/ are
	cwd    string
	source string // the URL of the feedgen serve an import reads, if any
}

// line runs one line of an example: feedgen commands joined by &&, or
// cd, with a # comment after them.
func (ex *exampleRun) line(line string) {
	t := ex.t
	t.Helper()
	words, err := shellWords(line)
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	for len(words) > 0 {
		cmd := words
		rest := []string(nil)
		for i, w := range words {
			if w == "&&" {
				cmd, rest = words[:i], words[i+1:]
				break
			}
		}
		words = rest
		var env []string
		for len(cmd) > 0 && strings.Contains(cmd[0], "=") && !strings.HasPrefix(cmd[0], "-") {
			env, cmd = append(env, cmd[0]), cmd[1:]
		}
		switch {
		case len(cmd) == 2 && cmd[0] == "cd":
			ex.cwd = filepath.Join(ex.cwd, cmd[1])
			continue
		case len(cmd) == 3 && cmd[0] == "mkdir" && cmd[1] == "-p":
			dir := ex.paths(cmd[2:])[0]
			if !filepath.IsAbs(dir) {
				dir = filepath.Join(ex.cwd, dir)
			}
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			continue
		case len(cmd) == 0 || cmd[0] != "feedgen":
			t.Fatalf("%s: want feedgen commands joined by &&, cd DIR or mkdir -p DIR", line)
		}
		args := ex.paths(cmd[1:])
		if len(args) > 0 && args[0] == "serve" {
			ex.serve(line, args)
			continue
		}
		if r := runFeedgen(t, ex.cwd, env, args...); r.code != 0 {
			t.Fatalf("%s\nin %s: exit %d\n%s%s", line, ex.cwd, r.code, r.stdout, r.stderr)
		}
	}
}

// paths puts the absolute paths of args under root, and the URL of
// http://127.0.0.1:8080 that an import reads in place.
func (ex *exampleRun) paths(args []string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for _, prefix := range []string{"/srv/", "/tmp/", "/archive/"} {
			if strings.HasPrefix(a, prefix) {
				a = filepath.Join(ex.root, a)
				break
			}
			if p, ok := strings.CutPrefix(a, "file://"+prefix); ok {
				a = "file://" + filepath.Join(ex.root, prefix, p)
				break
			}
		}
		if ex.source != "" {
			a = strings.ReplaceAll(a, "http://127.0.0.1:8080", ex.source)
		}
		out[i] = a
	}
	return out
}

// serve runs the feedgen serve of args on a free port until it answers
// /articles/, then stops it with SIGTERM: it must exit 0.
func (ex *exampleRun) serve(line string, args []string) {
	t := ex.t
	t.Helper()
	var kept []string
	for i := 0; i < len(args); i++ {
		if args[i] == "--addr" || args[i] == "-a" {
			i++
			continue
		}
		kept = append(kept, args[i])
	}
	p := startServe(t, ex.cwd, append(kept, "--addr", "127.0.0.1:0")...)
	resp, err := http.Get(p.url + "/articles/")
	if err != nil {
		t.Fatalf("%s: %v", line, err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("%s: /articles/ answered %s\n%s", line, resp.Status, p.stderr())
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v after SIGTERM\n%s", line, err, p.stderr())
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: still running 10s after SIGTERM", line)
	}
}

// shellWords splits line as sh would, for what the examples use: words
// separated by spaces, '…' and "…" quoting, && and a # comment.
func shellWords(line string) ([]string, error) {
	var words []string
	var w strings.Builder
	in, quote := false, byte(0)
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote != 0:
			w.WriteByte(c)
		case c == '\'' || c == '"':
			quote, in = c, true
		case c == ' ' || c == '\t':
			if in {
				words, in = append(words, w.String()), false
				w.Reset()
			}
		case c == '#' && !in:
			i = len(line)
		default:
			w.WriteByte(c)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed %c", quote)
	}
	if in {
		words = append(words, w.String())
	}
	return words, nil
}
